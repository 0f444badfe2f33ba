#!/bin/bash
# skillctl run end to end, through the built binary: the examples, each reading its input through
# a different channel (SKILL_INPUT_FILE, SANDBOX_INPUT, stdin), their outputs and artifacts, the
# result JSON, and the exit statuses. Needs root (namespaces); prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
EXAMPLES=$SRC/examples/skills

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP skillctl run needs root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

. "$(dirname "$0")/../lib/tap.sh"

# --local: these test the embedded engine; where a skilld service runs (the VM), skillctl would
# otherwise send the runs there. tests/skillctl covers the service path.
run() { "$SKILLCTL" run --local "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
json_get() {
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$1" "$2"
}

# json-transform reads SKILL_INPUT_FILE and writes /out/output.json.
run "$EXAMPLES/json-transform" --json --output-dir "$T/jt" \
        --input '{"numbers": [1, 2, 3.5], "text": "a b c d"}'
check "json-transform exits 0" test "$(rc)" = 0
check "json-transform output sum" test "$(json_get "$T/out" '["output"]["sum"]')" = 6.5
check "json-transform output words" test "$(json_get "$T/out" '["output"]["words"]')" = 4
check "json-transform output came from output.json" \
        test "$(json_get "$T/out" '["output_source"]')" = output.json
check "result.json written in --output-dir" test "$(json_get "$T/jt/result.json" '["status"]')" = succeeded
check "result names the skill" test "$(json_get "$T/out" '["skill"]')" = json-transform
check "result has the skill hash" test "$(json_get "$T/out" '["skill_hash"]' | wc -c)" = 65

# make-artifacts reads SANDBOX_INPUT and writes files under /out/files.
run "$EXAMPLES/make-artifacts" --output-dir "$T/ma" \
        --input '{"rows": [{"item": "apples", "qty": 3}], "title": "Stock"}'
check "make-artifacts exits 0" test "$(rc)" = 0
check "make-artifacts table.csv copied" grep -q '^apples,3' "$T/ma/files/table.csv"
check "make-artifacts report copied" grep -q '^# Stock' "$T/ma/files/report/summary.md"
check "artifact hash matches the file" \
        test "$(json_get "$T/ma/result.json" '["artifacts"][2]["sha256"]')" = \
        "$(sha256sum "$T/ma/files/table.csv" | cut -d' ' -f1)"
check "result.json is indented with two spaces" grep -q '^  "status": "succeeded",$' "$T/ma/result.json"
check "result.json has no tab" test "$(grep -c "$(printf '\t')" "$T/ma/result.json")" = 0
check "result.json ends with a newline" test "$(tail -c 1 "$T/ma/result.json" | od -An -c | tr -d ' ')" = '\n'
# Two files; the folder report/ holding one of them is not an artifact.
check "summary line counts the artifacts, not their folders" grep -q 'succeeded, exit 0, .* 2 artifacts in' "$T/err"

# node-greet reads stdin; the input comes from a file, and from our stdin.
echo '{"names": ["Ada"]}' >"$T/in.json"
run "$EXAMPLES/node-greet" --input-file "$T/in.json"
check "node-greet via --input-file" grep -q '"Hello, Ada!"' "$T/out"
echo '{"names": ["Linus"]}' | "$SKILLCTL" run --local -q "$EXAMPLES/node-greet" --input-file - >"$T/out" 2>"$T/err"
check "node-greet via --input-file -" grep -q '"Hello, Linus!"' "$T/out"
check "--quiet prints no summary" test ! -s "$T/err"

# Default output directory: ./skill-out/<run id>/
run "$EXAMPLES/shell-report" --json
id=$(json_get "$T/out" '["run_id"]')
check "default output dir is ./skill-out/<run id>" test -f "$T/skill-out/$id/result.json"
check "shell-report runs as the sandbox uid" test "$(json_get "$T/out" '["output"]["uid"]')" = \
        "$(json_get "$T/out" '["uid"]')"

# Arguments after "--" reach the script, options before and after SKILL reach skillctl.
mkdir -p "$T/args/scripts"
cat >"$T/args/SKILL.md" <<'MD'
---
name: args
description: Prints its arguments and its environment.
---
MD
cat >"$T/args/scripts/main.sh" <<'SH'
#!/bin/bash
printf "[%s]" "$@"; echo
echo "greeting=$GREETING"
cat /work/data.txt
SH
chmod -R a+rX "$T/args"
echo "file content" >"$T/data"
run --env GREETING=hi "$T/args" --file data.txt="$T/data" -- --flag "two words"
check "args after -- reach the script" grep -qx -- '\[--flag\]\[two words\]' "$T/out"
check "--env reaches the script" grep -qx 'greeting=hi' "$T/out"
check "--file lands in /work" grep -qx 'file content' "$T/out"
# The second of two inputs is missing: refused before the run, naming it, nothing left open.
run "$T/args" --file data.txt="$T/data" --file more.txt="$T/missing"
check "a missing --file is 125" test "$(rc)" = 125
check "a missing --file is named" grep -q -- "--file $T/missing: No such file" "$T/err"

# The record's order (man/skillctl.1: result.json comes last, synced to disk with the logs
# before it, its name durable before the run returns), seen in the calls themselves: every log
# with bytes and result.json's data synced before its rename, the directory synced after it. And
# a run killed at its syncs and renames in turn (strace's injection: the call not made, the
# process killed; counted per thread, so the record thread's names, directory sync and logs'
# syncs, and the engine's own where they come first) leaves no result.json beside logs it does
# not describe, in a new output directory and in one reused.
if command -v strace >/dev/null; then
        # LeakSanitizer cannot work in a traced process (an ASan build): no leak check in these.
        noleak="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
        mkdir -p "$T/rec/scripts"
        printf -- '---\nname: rec\ndescription: Writes both streams.\n---\n' >"$T/rec/SKILL.md"
        printf '#!/bin/bash\necho "out $SANDBOX_INPUT"\necho "err $SANDBOX_INPUT" >&2\n' >"$T/rec/scripts/main.sh"
        chmod -R a+rX "$T/rec"
        ASAN_OPTIONS=$noleak strace -f -y -qq -o "$T/trace" -e trace=fsync,rename,renameat,renameat2 \
                "$SKILLCTL" run --local -q --output-dir "$T/durable" "$T/rec" --input '{"n": 1}' >"$T/out" 2>"$T/err"
        echo $? >"$T/rc"
        check "a run under strace succeeds" test "$(rc)" = 0
        check "the logs and result.json synced before its rename, the directory after" \
                "$SRC/tests/sandbox/record-order.py" trace "$T/trace" "$T/durable"
        for reuse in new reused; do
                bad=
                for k in 1 2 3 4 5 6 7; do
                        rm -rf "$T/killed"
                        [ "$reuse" = reused ] && "$SKILLCTL" run --local -q --output-dir "$T/killed" "$T/rec" \
                                --input '{"n": 0}' >/dev/null 2>&1
                        (ASAN_OPTIONS=$noleak strace -f -qq -o /dev/null -e trace=fsync,rename,renameat,renameat2 \
                                -e inject=fsync,rename,renameat,renameat2:error=EIO:signal=KILL:when=$k \
                                "$SKILLCTL" run --local -q --output-dir "$T/killed" "$T/rec" \
                                --input "{\"n\": $k}" >/dev/null 2>&1) 2>/dev/null
                        "$SRC/tests/sandbox/record-order.py" killed "$T/killed" >"$T/why" || bad="$bad $k:$(cat "$T/why")"
                done
                check "a run killed at any sync or rename ($reuse output directory) leaves no result.json beside other logs" \
                        test -z "$bad"
        done
else
        ok "# SKIP the record's order: strace is not installed"
fi

# Exit statuses.
run "$EXAMPLES/always-fails"
check "the skill's exit code is ours" test "$(rc)" = 3
run "$EXAMPLES/node-greet" --input '{not json'
check "invalid input JSON is 125" test "$(rc)" = 125
check "invalid input JSON says so" grep -q 'not valid JSON' "$T/err"
run "$EXAMPLES/node-greet" --env LD_PRELOAD=/x.so
check "denied --env is 125" test "$(rc)" = 125
run "$EXAMPLES/node-greet" --script scripts/nope.js
check "missing script is 127" test "$(rc)" = 127
printf '#!/bin/bash\nwhile :; do :; done\n' >"$T/args/scripts/main.sh"
run "$T/args" --timeout 1
check "timeout is 124" test "$(rc)" = 124
check "timeout summary" grep -q '^skillctl: timeout' "$T/err"
printf '#!/bin/bash\nkill -TERM $$\n' >"$T/args/scripts/main.sh"
run "$T/args"
check "killed by SIGTERM is 143" test "$(rc)" = 143

# A skill that fails because the filter refused a call is told which one: in result.json, in the
# summary line and in a note that names them. unshare -m and a raw socket through Python.
run "$SRC/tests/compat/refuser" --output-dir "$T/refused"
check "a refused call still fails the way it did" grep -qx 'unshare refused' "$T/out"
check "the errno is the documented one" grep -qx 'raw 93' "$T/out"
check "the summary counts the refused calls" grep -q '^skillctl: failed, exit 1, .*, 2 system calls refused, ' "$T/err"
check "the note names them" grep -qF 'skillctl: the sandbox refused these system calls: unshare(CLONE_NEWNS), socket(AF_INET SOCK_RAW)' "$T/err"
check "result.json lists them" test "$(json_get "$T/refused/result.json" \
        '["refused_syscalls"]')" = "[{'syscall': 'unshare', 'count': 1, 'arg': 'CLONE_NEWNS'}, {'syscall': 'socket', 'count': 1, 'arg': 'AF_INET SOCK_RAW'}]"
run "$EXAMPLES/shell-report" --output-dir "$T/clean"
check "a run refused nothing has an empty list" test "$(json_get "$T/clean/result.json" '["refused_syscalls"]')" = "[]"
check "and no note" bash -c "! grep -q 'refused' '$T/err'"
# The output as the skill wrote it: integers past 2^53 and 1.0, in --json and in result.json.
printf '#!/bin/bash\necho %s\n' "'{\"big\": 12345678901234567890, \"id\": 9007199254740993, \"f\": 1.0}'" \
        >"$T/args/scripts/main.sh"
run "$T/args" --json --output-dir "$T/exact"
exact_output() {
        python3 -c 'import json,sys; o=json.load(open(sys.argv[1]),parse_float=str)["output"]
assert o=={"big":12345678901234567890,"id":9007199254740993,"f":"1.0"}, o' "$1"
}
check "--json: output numbers exact" exact_output "$T/out"
check "result.json: output numbers exact" exact_output "$T/exact/result.json"

tap_finish
