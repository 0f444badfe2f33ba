# Shared by the test-env-*.sh scripts (sourced): TAP lines, skillctl with its output kept, and
# the PEP 503 index of fixtures/pip served on 127.0.0.1. Expects T (a scratch folder) and
# SKILLCTL to be set.

. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
# Runs skillctl, keeping stdout, stderr and the exit status.
sk() { "$SKILLCTL" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc_is() { [ "$(cat "$T/rc")" = "$1" ]; }
out_has() { grep -q -- "$1" "$T/out"; }
err_has() { grep -q -- "$1" "$T/err"; }
# The number of items of the JSON array skillctl printed.
json_length() { /usr/bin/python3 -c "import json; print(len(json.load(open('$T/out'))))"; }
# Ends the script: the plan line, and the status.
finish() { tap_finish; }

# Builds the fixture wheels offline and serves them as $T/index/simple/NAME/*.whl with
# python3 -m http.server on a free port of 127.0.0.1; sets PORT and INDEX and adds the server to
# the array pids (the caller kills them). Bails out when anything fails.
start_pip_index() {
        local w name
        cp -r "$SKILLD_SOURCE_ROOT/tests/env/fixtures/pip" "$T/src"
        /usr/bin/python3 -m pip --isolated wheel -q --no-index --no-build-isolation --no-deps -w "$T/wheels" \
                "$T/src/skilld-greet" "$T/src/skilld-shout" >"$T/wheel.log" 2>&1 || {
                echo "Bail out! building the fixture wheels failed: $(tail -5 "$T/wheel.log")"
                exit 1
        }
        for w in "$T"/wheels/*.whl; do
                name=$(basename "$w" | cut -d- -f1 | tr _ -)
                mkdir -p "$T/index/simple/$name"
                cp "$w" "$T/index/simple/$name/"
        done
        /usr/bin/python3 -u -m http.server --bind 127.0.0.1 --directory "$T/index" 0 >"$T/server.log" 2>&1 &
        pids+=($!)
        PORT=
        for _ in $(seq 50); do
                PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$T/server.log" | head -1)
                [ -n "$PORT" ] && break
                sleep 0.1
        done
        [ -n "$PORT" ] || { echo "Bail out! the index did not start: $(cat "$T/server.log")"; exit 1; }
        INDEX=http://127.0.0.1:$PORT/simple/
}

# Removes the scratch folder (environments in it are read-only) after stopping pids.
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        chmod -R u+w "$T" 2>/dev/null
        rm -rf "$T"
}
pids=()
