#!/bin/bash
# skillctl without libsystemd until it talks to the service (skillctl/sd-dlopen.h): the binary
# does not link it; an embedded run, --version and skill lint never load it (the dynamic loader's
# own log, LD_DEBUG=files, of every library each process loads); with the library missing (the
# package gone: /dev/null bound over it in a mount namespace of the commands' own) an embedded run
# still works, and what needs the service fails naming the library and its package. The service
# keeps linking it (tests/daemon's test_mapped_libraries). libseccomp alike: not linked, loaded
# only when a run must generate its seccomp program (a miss of the program cache), and needed
# then. Runs skills embedded, so needs root (namespaces); prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP skillctl run needs root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# No service: a system bus and a private socket that are not there.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/no-bus SKILLD_BUS_ADDRESS=unix:path=$T/no-socket
unset SKILLCTL_MODE

. "$(dirname "$0")/../lib/tap.sh"
rc() { cat "$T/rc"; }

mkdir -p "$T/shell/scripts"
cat >"$T/shell/SKILL.md" <<'MD'
---
name: shell
description: Prints one JSON line.
---
MD
printf '#!/bin/bash\necho "{\\"ok\\": true}"\n' >"$T/shell/scripts/main.sh"
chmod -R a+rX "$T/shell"

# --- Not linked. ------------------------------------------------------------------------------
if command -v readelf >/dev/null; then
        readelf -d "$SKILLCTL" >"$T/out" 2>"$T/err"
        check "readelf reads skillctl's dynamic section" grep -q 'NEEDED.*libc\.so' "$T/out"
        check "skillctl has no DT_NEEDED on libsystemd" bash -c "! grep -q 'NEEDED.*libsystemd' '$T/out'"
        check "skillctl has no DT_NEEDED on libseccomp" bash -c "! grep -q 'NEEDED.*libseccomp' '$T/out'"
else
        ok "# SKIP not linked: no readelf (binutils)"
fi

# --- Not loaded. ------------------------------------------------------------------------------
# LD_DEBUG_OUTPUT: one log per process (FILE.PID), skillctl's and its forks' until they exec
# (the sandbox's processes clear the environment). "file=NAME" is each library loaded, linked
# or dlopen()ed; libnss_systemd.so (an NSS module, no libsystemd) is not it.
loaded() {
        rm -rf "$T/ld" && mkdir "$T/ld"
        LD_DEBUG=files LD_DEBUG_OUTPUT=$T/ld/log "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"
        echo $? >"$T/rc"
        cat "$T"/ld/log.* >"$T/ld.all" 2>/dev/null
}
# By its soname or its path (the engine dlopen()s it by path: skilld/sandbox/seccomp-dlopen.c).
loads_libseccomp() { grep -qE 'file=([^ ]*/)?libseccomp\.so' "$T/ld.all"; }
loads_no_libseccomp() { ! loads_libseccomp; }
loads_no_libsystemd() {
        if grep -q 'file=libsystemd\.so' "$T/ld.all"; then
                grep 'file=libsystemd\.so' "$T/ld.all" | head -n 5 | sed 's/^/# /'
                return 1
        fi
}

loaded run --local -q --output-dir "$T/out-dir" "$T/shell"
check "run --local succeeds" test "$(rc)" = 0
check "run --local prints the skill's output" grep -q '"ok": true' "$T/out"
check "the loader's log is there (it names libyaml)" grep -q 'file=libyaml' "$T/ld.all"
check "run --local loads no libsystemd" loads_no_libsystemd
loaded run --local --json --output-dir "$T/out-dir2" "$T/shell"
check "run --local --json succeeds" test "$(rc)" = 0
check "run --local --json loads no libsystemd" loads_no_libsystemd
loaded --version
check "--version loads no libsystemd" loads_no_libsystemd
loaded skill lint "$T/shell"
check "skill lint succeeds" test "$(rc)" = 0
check "skill lint loads no libsystemd" loads_no_libsystemd
# Looking for the service loads it: the proof that the log would show it.
loaded run -q --output-dir "$T/out-dir3" "$T/shell"
check "run without --local finds no service and runs embedded" test "$(rc)" = 0
check "looking for the service loads libsystemd" grep -q 'file=libsystemd\.so' "$T/ld.all"

# libseccomp: loaded for a miss of the program cache, not for a hit. The cache keeps one entry per
# program name (skilld/sandbox/seccomp-cache.c), so skillctl runs here under a name of its own,
# whose entries (root's, in /run/skilld/seccomp) are removed first and at the end.
SECCOMP_DIR=/run/skilld/seccomp
ln -s "$(realpath "$SKILLCTL")" "$T/skillctl-ldtest"
rm_entries() { rm -f "$SECCOMP_DIR"/skillctl-ldtest.*.bpf; }
rm_entries
trap 'rm_entries; rm -rf "$T"' EXIT
loaded_as() {
        rm -rf "$T/ld" && mkdir "$T/ld"
        LD_DEBUG=files LD_DEBUG_OUTPUT=$T/ld/log "$T/skillctl-ldtest" "$@" >"$T/out" 2>"$T/err"
        echo $? >"$T/rc"
        cat "$T"/ld/log.* >"$T/ld.all" 2>/dev/null
}
loaded_as run --local -q --output-dir "$T/out-dir6" "$T/shell"
check "a run that generates its seccomp program succeeds" test "$(rc)" = 0
check "a run that generates its seccomp program loads libseccomp" loads_libseccomp
check "the program is cached" test -f "$SECCOMP_DIR/skillctl-ldtest.notify.bpf"
loaded_as run --local -q --output-dir "$T/out-dir7" "$T/shell"
check "a run with its seccomp program cached succeeds" test "$(rc)" = 0
check "a run with its seccomp program cached loads no libseccomp" loads_no_libseccomp

# --- Missing. ---------------------------------------------------------------------------------
seccomp_lib=$(ldconfig -p | awk '$1 == "libseccomp.so.2" { print $NF; exit }')
if [[ -n $seccomp_lib ]] && unshare --mount true 2>/dev/null; then
        # Over the file itself: whatever name reaches it (the loader's, or the path skillctl was
        # built with, the same file where /lib is /usr/lib) finds /dev/null.
        # shellcheck disable=SC2016 # expanded by the inner sh
        unshare --mount --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' \
                sh "$(realpath "$seccomp_lib")" "$T/skillctl-ldtest" run --local -q --output-dir "$T/out-dir8" "$T/shell" >"$T/out" 2>"$T/err"
        echo $? >"$T/rc"
        check "no libseccomp: run --local fails" test "$(rc)" = 125
        check "no libseccomp: the message names the library and the package" \
                grep -q 'libseccomp\.so\.2, which the sandbox.s seccomp filter needs.*install libseccomp2' "$T/err"
else
        ok "# SKIP no libseccomp: needs unshare and libseccomp.so.2"
fi

lib=$(ldconfig -p | awk '$1 == "libsystemd.so.0" { print $NF; exit }')
if [[ -n $lib ]] && unshare --mount true 2>/dev/null; then
        without_lib() {
                # shellcheck disable=SC2016 # expanded by the inner sh
                unshare --mount --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' \
                        sh "$lib" "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"
                echo $? >"$T/rc"
        }
        without_lib run --local -q --output-dir "$T/out-dir4" "$T/shell"
        check "no libsystemd: run --local succeeds" test "$(rc)" = 0
        check "no libsystemd: run --local prints the skill's output" grep -q '"ok": true' "$T/out"
        without_lib run -q --output-dir "$T/out-dir5" "$T/shell"
        check "no libsystemd: run without --local fails" test "$(rc)" != 0
        check "no libsystemd: the message names the library, the package and --local" \
                grep -q 'libsystemd\.so\.0.*talking to skilld.*install libsystemd0.*--local' "$T/err"
        without_lib skill list
        check "no libsystemd: skill list fails" test "$(rc)" != 0
        check "no libsystemd: skill list names the library and the package" \
                grep -q 'libsystemd\.so\.0.*install libsystemd0' "$T/err"
        without_lib mcp --local </dev/null
        check "no libsystemd: mcp fails" test "$(rc)" != 0
        check "no libsystemd: mcp names the library and what needs it" \
                grep -q "libsystemd\.so\.0, which the MCP server's event loop needs" "$T/err"
else
        ok "# SKIP no libsystemd: needs unshare and libsystemd.so.0"
fi

tap_finish
