# shellcheck shell=bash
# Helpers for in-VM tests: `. "$SKILLD_VM_LIB"` at the top of a test in tests/vm/tests.d/. A test
# is any executable; with these, a shell test states what it expected when it fails.

# Facts about the installed project written by the host (version, prefix, source/build paths).
# shellcheck disable=SC1091
. /usr/lib/skilld-vm/project.env

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

skip() {
    echo "SKIP: $*"
    exit 77
}

# assert_eq EXPECTED ACTUAL WHAT
assert_eq() {
    [[ "$1" == "$2" ]] || fail "${3:-value}: expected '$1', got '$2'"
}

# assert_contains HAYSTACK NEEDLE WHAT
assert_contains() {
    [[ "$1" == *"$2"* ]] || fail "${3:-output} does not contain '$2': '$1'"
}

# as_user USER COMMAND...: runs COMMAND as USER, with no logind session (runuser).
as_user() {
    local user=$1
    shift
    runuser -u "$user" -- "$@"
}

# as_in USER COMMAND...: COMMAND as USER in the directory $work/USER (the test makes it), its
# stdout in $work/out, its stderr in $work/err, its exit status in $rc.
as_in() {
    local u=$1
    shift
    rc=0
    (cd "$work/$u" && as_user "$u" "$@") >"$work/out" 2>"$work/err" || rc=$?
}

# show_last: what the last as_in gave, for the log.
show_last() {
    echo "exit $rc"
    echo "stdout: $(head -c 2000 "$work/out")"
    echo "stderr: $(head -c 2000 "$work/err")"
}

# The cgroup v2 directory of the calling shell.
own_cgroup_dir() {
    echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$BASHPID/cgroup")"
}
