#!/bin/bash
# The ways skills' own instructions run them, through the built skillctl, embedded: scripts that
# import the skill's modules from its root (as anthropics' skill-creator does). Needs root
# (namespaces); prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
SKILLS=$SRC/tests/sandbox/skills

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP skillctl runs need root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

. "$(dirname "$0")/../lib/tap.sh"
# --local: the embedded engine; tests/vm covers the service.
run() { "$SKILLCTL" run --local -q "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }
json_get() {
        /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$1" "$2"
}

# A copy, so that the modes are the ones git does not keep (the sandbox user needs to read it).
cp -r "$SKILLS/skill-root" "$T/skill-root"
chmod -R a+rX "$T/skill-root"

# Skill-root imports: by path, a script's own folder is on sys.path, not the skill root.
run "$T/skill-root" --script scripts/tool.py -- hi
check "python script by path imports scripts.helper" grep -qx 'helper says hi' "$T/out"
run "$T/skill-root" --script scripts/tool.js -- hi
check "node script: relative requires and one from the skill root" grep -qx 'helper says hi' "$T/out"
run "$T/skill-root" --script scripts/tool.py --env PYTHONPATH=/tmp
check "callers still may not set PYTHONPATH" test "$(rc)" = 125

# The command form: the skill's instructions, as written.
ex() { "$SKILLCTL" exec --local -q "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
ex --cwd /skill "$T/skill-root" -- python3 -m scripts.tool ARG
check "exec --cwd /skill python3 -m scripts.tool" grep -qx 'helper says ARG' "$T/out"
ex "$T/skill-root" -- python3 -m scripts.tool ARG
check "exec from /work finds the skill's modules too" grep -qx 'helper says ARG' "$T/out"
ex --cwd /skill "$T/skill-root" -- node scripts/tool.js ARG
check "exec node scripts/tool.js" grep -qx 'helper says ARG' "$T/out"
ex "$T/skill-root" -- sh -c 'pwd; echo "$0" "$1"' 'a b' c
check "exec runs an argv: a shell only when asked, arguments unsplit" \
        test "$(cat "$T/out")" = "$(printf '/work\na b c')"
ex --cwd /skill "$T/skill-root" -- pwd
check "exec --cwd /skill starts in /skill" grep -qx /skill "$T/out"
ex --output-dir "$T/pk" --cwd /skill "$T/skill-root" -- python3 -m scripts.package_skill /skill /out/files
check "a skill-creator style packager leaves its .skill as an artifact" \
        /usr/bin/python3 -c 'import sys, zipfile; n = zipfile.ZipFile(sys.argv[1]).namelist(); sys.exit("skill/scripts/helper.py" not in n)' \
        "$T/pk/files/skill.skill"
"$SKILLCTL" exec --local --json --output-dir "$T/ej" "$T/skill-root" -- sh -c 'echo hi >/out/files/x.txt' >"$T/out" 2>"$T/err"
check "exec results say command, cwd and argv" \
        test "$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["command"], d["cwd"], d["argv"][0], d["script"])' "$T/out")" = "True /work sh None"
check "exec artifacts land like run's" test "$(cat "$T/ej/files/x.txt")" = hi
ex "$T/skill-root" -- no-such-program
check "an unknown program is 127" test "$(rc)" = 127
check "... and named" grep -q 'Command no-such-program is not found' "$T/err"
ex --cwd /skill "$T/skill-root" -- ./scripts/tool.py
check "a file without x bit is 126" test "$(rc)" = 126
ex "$T/skill-root" --timeout 1 -- sleep 30
check "exec keeps run's limits: timeout is 124" test "$(rc)" = 124
ex "$T/skill-root" -- cat /etc/shadow
check "exec keeps run's isolation: no /etc/shadow" test "$(rc)" != 0
ex "$T/skill-root"
check "exec without a command is a usage error" grep -q 'missing the command' "$T/err"
ex --cwd /etc "$T/skill-root" -- true
check "exec --cwd outside /work and /skill is refused" grep -q 'must be /work or /skill' "$T/err"
ex --script scripts/tool.py "$T/skill-root" -- true
check "exec refuses --script" test "$(rc)" = 125

# Folder inputs: --file NAME=DIR copies the tree into /work/NAME.
mkdir -p "$T/data/sub" "$T/data/empty" "$T/nested/my-skill"
echo A >"$T/data/a.txt"
echo B >"$T/data/sub/b.txt"
printf -- '---\nname: my-skill\ndescription: d\n---\n' >"$T/nested/my-skill/SKILL.md"
left_before=$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'skilld-folder-*' 2>/dev/null | wc -l)
ex --file data="$T/data" "$T/skill-root" -- sh -c 'cat /work/data/a.txt /work/data/sub/b.txt; find /work/data | sort; stat -c "%u %a" /work/data/sub/b.txt'
check "--file data=DIR gives data/a.txt and data/sub/b.txt" test "$(head -2 "$T/out")" = "$(printf 'A\nB')"
check "... and the whole tree, empty folders included" \
        grep -qx /work/data/empty "$T/out"
check "... owned by the sandbox user" grep -qx "[0-9]* 644" "$T/out"
run --file data="$T/data" --file more.txt="$T/data/a.txt" "$T/skill-root" --script scripts/tool.py -- x
check "run takes folders and files together" test "$(rc)" = 0
ex --file skills="$T/nested" "$T/skill-root" -- find /work/skills -name SKILL.md
check "a folder holding one skill folder keeps it" grep -qx /work/skills/my-skill/SKILL.md "$T/out"
ln -s /etc/shadow "$T/data/sub/link"
ex --file data="$T/data" "$T/skill-root" -- sh -c 'cat /work/data/sub/link; ls -la /work/data/sub'
check "a symlink in a folder input is refused" test "$(rc)" = 125
check "... naming it" grep -q "sub/link: symlinks are not allowed" "$T/err"
check "... and /etc/shadow's content never shows" sh -c "! grep -q 'root:' '$T/out'"
rm "$T/data/sub/link"
mkfifo "$T/data/fifo"
ex --file data="$T/data" "$T/skill-root" -- true
check "a FIFO in a folder input is refused" grep -q "fifo" "$T/err"
rm "$T/data/fifo"
check "no private folder copy is left behind" \
        test "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'skilld-folder-*' 2>/dev/null | wc -l)" = "$left_before"

# Sessions: /work kept between runs, and nothing else. skillctl's own (--local), as run and ex
# are: where a service answers (the VM), sessions would otherwise be the service's.
export XDG_STATE_HOME=$T/state
cp -r "$SKILLS/counter" "$T/counter"
chmod -R a+rX "$T/counter"
sid=$("$SKILLCTL" session create --local "$T/counter" 2>"$T/err")
check "session create prints an id" grep -qE '^[0-9a-f]{32}$' <<<"$sid"
counts=""
for _ in 1 2 3; do
        run --session "$sid" "$T/counter"
        counts+=$(cat "$T/out")
done
check "three run --session calls count 1, 2, 3" test "$counts" = 123
ex --session "$sid" "$T/counter" -- sh -c 'cat /work/count; ls /tmp | wc -l'
check "exec --session sees the file" test "$(head -1 "$T/out")" = 3
run "$T/counter"
check "a run without the session starts clean" test "$(cat "$T/out")" = 1
"$SKILLCTL" session list --local --json >"$T/out" 2>"$T/err"
check "session list --json names it, with its skill and usage" \
        test "$(json_get "$T/out" '[0]["id"]') $(json_get "$T/out" '[0]["skill"]') $(json_get "$T/out" '[0]["usage_bytes"]')" = "$sid counter 2"
"$SKILLCTL" session show --local --json "$sid" >"$T/out" 2>"$T/err"
check "session show --json" test "$(json_get "$T/out" '["quota_bytes"]')" = 268435456
run --session "$sid" "$T/skill-root" --script scripts/tool.py
check "a session is for its skill only" grep -q "is for the skill counter" "$T/err"
"$SKILLCTL" session rm --local --json "$sid" >"$T/out" 2>"$T/err"
check "session rm --json names what it removed" test "$(json_get "$T/out" '[0]')" = "$sid"
check "session rm removes its files" test -z "$(ls "$T/state/skilld/sessions")"
run --session "$sid" "$T/counter"
check "... and using it afterwards is an error" test "$(rc)" = 125
check "... that says so" grep -q "no such session" "$T/err"
"$SKILLCTL" session show --local "$sid" >/dev/null 2>&1
check "session show of a removed session exits 4" test "$?" = 4
sid=$("$SKILLCTL" session create --local --quota 1M "$T/counter" 2>"$T/err")
ex --session "$sid" "$T/counter" -- sh -c 'head -c 3000000 /dev/zero >/work/big'
check "the quota holds while a run writes" test "$(rc)" != 0
check "... and the run saw a full disk" grep -q "No space left" "$T/err"
"$SKILLCTL" session show --local --json "$sid" >"$T/out" 2>"$T/err"
check "... and no more than the quota is kept" test "$(json_get "$T/out" '["usage_bytes"]')" -le 1048576
sid2=$("$SKILLCTL" session create --local --quota 1M "$T/counter" 2>"$T/err")
ex --session "$sid2" --file data="$T/data" "$T/counter" -- cat /work/data/a.txt
check "a folder input in a small session fits" test "$(cat "$T/out")" = A
head -c 1200000 /dev/zero >"$T/1200k"
ex --session "$sid2" --file a="$T/1200k" "$T/counter" -- true
check "inputs count against a session's quota too" grep -q "exceed its quota of 1.0M" "$T/err"
ln -s /etc/shadow "$T/state/skilld/sessions/$sid/work/link" 2>/dev/null || true
ex --session "$sid" "$T/counter" -- sh -c 'ln -s /etc/shadow /work/mine; mkfifo /work/fifo; cat /work/link'
check "a symlink in a kept /work is not carried into the run" sh -c "! grep -q 'root:' '$T/out'"
check "... nor the skill's own links kept" test ! -e "$T/state/skilld/sessions/$sid/work/mine" -a ! -L "$T/state/skilld/sessions/$sid/work/mine"
sid=$("$SKILLCTL" session create --local --ttl 1s "$T/counter" 2>"$T/err")
sleep 1.5
run --session "$sid" "$T/counter"
check "a session past its idle TTL is gone" grep -q "expired" "$T/err"
check "... removed whole" test ! -e "$T/state/skilld/sessions/$sid"
unset XDG_STATE_HOME

# Limits a skill declares, as Skillbox's do (timeout: 3s, resources: memory 64Mi, cpu 0.25).
cp -r "$SKILLS/slow-skill" "$T/slow-skill"
chmod -R a+rX "$T/slow-skill"
start=$(date +%s)
"$SKILLCTL" run --local --json "$T/slow-skill" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"
took=$(( $(date +%s) - start ))
check "timeout: 3s ends the run as timeout" test "$(rc)" = 124
check "... within seconds, not after the 30 s sleep ($took s)" test "$took" -lt 15
check "result records the declared timeout" test "$(json_get "$T/out" '["limits"]["timeout_usec"]')" = 3000000
check "result records the declared memory" test "$(json_get "$T/out" '["limits"]["memory_max"]')" = 67108864
check "result records the declared cpu" test "$(json_get "$T/out" '["limits"]["cpu_percent"]')" = 25
check "result says which limits came from the skill" \
        test "$(json_get "$T/out" '["limits"]["from_skill"]')" = "['memory', 'cpu', 'timeout']"
"$SKILLCTL" run --local --json --timeout 1 "$T/slow-skill" >"$T/out" 2>"$T/err"
check "a caller's smaller --timeout wins" test "$(json_get "$T/out" '["limits"]["timeout_usec"]')" = 1000000
"$SKILLCTL" run --local --json --timeout 60 "$T/slow-skill" -- 0 >"$T/out" 2>"$T/err"
check "a caller's larger --timeout does not raise the skill's" \
        test "$(json_get "$T/out" '["limits"]["timeout_usec"]')" = 3000000
# In the test VM a CPU is emulated and shared: Python's start-up alone, at the skill's 25 %
# of it, can take the 3 s the skill allows. That outcome is the limit working, not a fault.
if [ -n "${SKILLD_VM:-}" ] && [ "$(json_get "$T/out" '["status"]')" = timeout ]; then
        n=$((n + 1)); echo "ok $n - ... and a quick run still succeeds # SKIP its start-up outlasted 3 s of an emulated CPU at 25 %"
else
        check "... and a quick run still succeeds" test "$(json_get "$T/out" '["status"]')" = succeeded
fi
"$SKILLCTL" skill show "$T/slow-skill" >"$T/out" 2>"$T/err"
check "skill show lists the declared limits" grep -q 'Limits: timeout 3.000s memory 64.0M cpu 25%' "$T/out"
"$SKILLCTL" skill show --json "$T/slow-skill" >"$T/out" 2>"$T/err"
check "skill show --json has declared_limits" \
        test "$(json_get "$T/out" '["declared_limits"]["timeout_usec"]')" = 3000000
"$SKILLCTL" skill lint --strict "$T/slow-skill" >"$T/out" 2>&1
check "lint knows timeout and resources" test "$?" = 0
sed -i 's/^timeout: 3s/timeout: soon/; s/memory: 64Mi/memory: lots\n  gpu: 1/' "$T/slow-skill/SKILL.md"
"$SKILLCTL" skill lint "$T/slow-skill" >"$T/out" 2>&1
check "lint: a timeout that is no duration is an error" grep -q "timeout: 'soon' is not a duration" "$T/out"
check "lint: a memory that is no size is an error" grep -q "resources.memory: 'lots' is not a size" "$T/out"
check "lint: unknown resources are ignored with a word" grep -q "resources.gpu: ignored" "$T/out"
run "$T/slow-skill"
check "a run of a skill with unreadable limits is refused" test "$(rc)" = 125

tap_finish
