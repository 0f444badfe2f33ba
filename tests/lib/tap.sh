# shellcheck shell=bash
# TAP for the shell test scripts, sourced: ok, not_ok, check and tap_finish. check shows what the
# script kept of the failed command: $T/rc, $T/out and $T/err, those that exist.

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
        n=$((n + 1)); failed=$((failed + 1))
        echo "not ok $n - $1"; shift
        for l in "$@"; do echo "# $l"; done
}
check() {
        local what=$1; shift
        if "$@"; then ok "$what"; else
                not_ok "$what" "command: $*" "rc: $(cat "$T/rc" 2>/dev/null)" \
                        "stdout: $(head -c 2000 "$T/out" 2>/dev/null)" "stderr: $(head -c 2000 "$T/err" 2>/dev/null)"
        fi
}
# Ends the script: the plan line, and the status.
tap_finish() {
        echo "1..$n"
        [ "$failed" = 0 ]
}
