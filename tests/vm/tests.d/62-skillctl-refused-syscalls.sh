#!/bin/bash
# The refused system calls of a run through the service (the daemon's worker runs the engine,
# under cgroup v2 and the systemd scope): a skill whose calls the filter refuses still gets the
# documented errno, and its result (Result, the fetched result.json), skillctl's summary and
# status, and the run's journal entry name them; a run refused nothing names none.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

skilld=$SKILLD_PREFIX/libexec/skilld
[[ -x $skilld ]] || skip "skilld is not installed at $skilld yet"

work=$PWD
rule=/etc/polkit-1/rules.d/60-skillctl-refused-test.rules
cat >"$rule" <<'EOF2'
polkit.addRule(function(action, subject) {
    if ((action.id == "io.skilld.run" || action.id == "io.skilld.run-unlisted") &&
        subject.user == "alice")
        return polkit.Result.YES;
});
EOF2
trap 'rm -f "$rule"' EXIT
# shellcheck disable=SC2016
for _ in $(seq 50); do
    as_user alice sh -c 'exec pkcheck --action-id io.skilld.run-unlisted --process $$' >/dev/null 2>&1 &&
        break
    sleep 0.2
done

install -d -o alice -m 0755 "$work/alice"
# unshare -m and socket(AF_INET, SOCK_RAW), then exit 1.
skill=$SKILLD_SOURCE_ROOT/tests/compat/refuser

rc=0
(cd "$work/alice" && as_user alice skillctl run --system "$skill") >"$work/out" 2>"$work/err" || rc=$?
echo "exit $rc"; echo "stdout: $(cat "$work/out")"; echo "stderr: $(cat "$work/err")"
assert_eq 1 "$rc" "the skill's own exit status"
! grep -q "running embedded" "$work/err" || fail "skillctl ran embedded with skilld installed"
assert_contains "$(cat "$work/out")" "unshare refused" "unshare failed in the skill"
assert_contains "$(cat "$work/out")" "raw 93" "socket(AF_INET, SOCK_RAW) got EPROTONOSUPPORT"
assert_contains "$(cat "$work/err")" ", 2 system calls refused, " "the summary line counts them"
assert_contains "$(cat "$work/err")" \
    "the sandbox refused these system calls: unshare(CLONE_NEWNS), socket(AF_INET SOCK_RAW)" "the note names them"

id=$(basename "$(find "$work/alice/skill-out" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
[[ $id =~ ^[0-9a-f]{32}$ ]] || fail "no skill-out/<run id> after the run: '$id'"
refused=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["refused_syscalls"]))' \
    "$work/alice/skill-out/$id/result.json")
assert_eq '[{"syscall": "unshare", "count": 1, "arg": "CLONE_NEWNS"}, {"syscall": "socket", "count": 1, "arg": "AF_INET SOCK_RAW"}]' \
    "$refused" "refused_syscalls of the stored result"

status=$(cd "$work/alice" && as_user alice skillctl status "$id")
assert_contains "$status" "Refused: unshare(CLONE_NEWNS), socket(AF_INET SOCK_RAW)" "skillctl status"

journalctl --sync
entry=$(journalctl -o json --no-pager SKILLD_RUN_ID="$id" MESSAGE_ID=7bf39efccf71417b96c57cdfcf31c58d)
field=$(printf '%s\n' "$entry" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline()).get("SKILLD_REFUSED_SYSCALLS"))')
assert_eq "unshare(CLONE_NEWNS), socket(AF_INET SOCK_RAW)" "$field" "SKILLD_REFUSED_SYSCALLS in the journal"
assert_contains "$entry" "the sandbox refused unshare(CLONE_NEWNS), socket(AF_INET SOCK_RAW)" "the journal message"
echo "refused calls named in the result, the summary, status and the journal"

# A run refused nothing: an empty list, no note, no journal field.
rm -rf "$work/alice/skill-out"
rc=0
(cd "$work/alice" && as_user alice skillctl run --system "$SKILLD_SOURCE_ROOT/examples/skills/shell-report") \
    >"$work/out" 2>"$work/err" || rc=$?
assert_eq 0 "$rc" "the clean run"
! grep -q refused "$work/err" || fail "a clean run's summary mentions refused calls: $(cat "$work/err")"
id=$(basename "$(find "$work/alice/skill-out" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
assert_eq "[]" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["refused_syscalls"])' \
    "$work/alice/skill-out/$id/result.json")" "refused_syscalls of a clean run"
journalctl --sync
field=$(journalctl -o json --no-pager SKILLD_RUN_ID="$id" MESSAGE_ID=7bf39efccf71417b96c57cdfcf31c58d |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline()).get("SKILLD_REFUSED_SYSCALLS"))')
assert_eq None "$field" "no SKILLD_REFUSED_SYSCALLS for a clean run"
echo "a clean run names nothing"

# The filter's programs, generated once by the service's workers (skilld/sandbox/seccomp-cache.c): under
# skilld.service's hardening (ProtectSystem=strict, ReadWritePaths=/run/skilld) the service
# keeps them in /run/skilld/seccomp, root's alone; a new service reads them back instead of
# generating, and one it cannot trust is generated again, replaced, and the refusals stay.
cache=/run/skilld/seccomp
assert_eq "700 root" "$(stat -c '%a %U' "$cache")" "the seccomp cache directory"
for v in notify errno; do
    assert_eq "600 root regular file" "$(stat -c '%a %U %F' "$cache/skilld.$v.bpf")" "skilld.$v.bpf"
done
before=$(stat -c %Y.%i "$cache/skilld.notify.bpf")
systemctl stop skilld.service
rm -rf "$work/alice/skill-out"
(cd "$work/alice" && as_user alice skillctl run --system "$SKILLD_SOURCE_ROOT/examples/skills/shell-report") \
    >/dev/null 2>&1 || fail "a run through a new service"
assert_eq "$before" "$(stat -c %Y.%i "$cache/skilld.notify.bpf")" "a new service reads the cached program back"
# A damaged errno program (a byte more), for the next service's first refused calls.
size=$(stat -c %s "$cache/skilld.errno.bpf")
printf x >>"$cache/skilld.errno.bpf"
systemctl stop skilld.service
rm -rf "$work/alice/skill-out"
rc=0
(cd "$work/alice" && as_user alice skillctl run --system "$skill") >"$work/out" 2>"$work/err" || rc=$?
assert_eq 1 "$rc" "the refusing skill with a damaged cache entry"
assert_contains "$(cat "$work/out")" "raw 93" "socket(AF_INET, SOCK_RAW) still got EPROTONOSUPPORT"
assert_contains "$(cat "$work/err")" ", 2 system calls refused, " "still both refusals named"
assert_eq "$size" "$(stat -c %s "$cache/skilld.errno.bpf")" "the damaged entry replaced"
echo "the service's seccomp programs cached in $cache, read back, and replaced when damaged"
