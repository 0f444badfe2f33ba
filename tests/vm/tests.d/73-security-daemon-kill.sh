#!/bin/bash
# The daemon's adversarial cases on dying at the worst moment (tests/security/daemon/README.md):
# D8, SIGKILL while a large .skill is being extracted: on the next activation no extracted tree is
# left in the work directory and no record claims the run succeeded; D9, SIGKILL while a run's
# large artifact set is being stored: after restart the record is final, result.json is either
# absent (interrupted) or complete and valid JSON, and every artifact it lists is there with its
# hash. Later runs succeed.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s'
work=$SKILLD_STATE/work
runs=$SKILLD_STATE/runs
hello=$(make_skill hello 'echo "hello $1"')
assert_eq "succeeded 0" "$(call bob run --wait "$hello" bob | tail -n 1)" "bob's first run"

work_busy() {
    [[ -n "$(find "$work" -mindepth 2 -print -quit 2>/dev/null)" ]]
}

# D8. 96M of incompressible data to extract (the loader's ratio check passes, its 256M too).
rm -rf big
mkdir -p big/scripts big/data
printf -- '---\nname: big\ndescription: A large test skill.\n---\n\n# big\n' >big/SKILL.md
printf 'echo big\n' >big/scripts/main.sh
for i in 1 2 3; do
    head -c 33554432 /dev/urandom >"big/data/blob$i"
done
skillctl skill package big -o big.skill >/dev/null
chmod 0644 big.skill
rm -rf big
before=$(find "$runs" -mindepth 1 -maxdepth 1 | sort)
call alice run big.skill >d8.out 2>&1 &
client=$!
wait_until 120 work_busy || fail "no extraction seen in $work: $(cat d8.out)"
old=$(daemon_main_pid)
kill -KILL "$old"
echo "D8 killed skilld ($old) with $(find "$work" -mindepth 1 | wc -l) entries in $work"
wait "$client" || true
wait_until 30 is_inactive || fail "skilld did not go down"
assert_eq "succeeded 0" "$(call bob run --wait "$hello" after-d8 | tail -n 1)" "bob's run after D8"
[[ $(daemon_main_pid) != "$old" ]] || fail "skilld was not restarted"
# Only bob's run may be in the work directory now, and it is over.
wait_until 30 test -z "$(find "$work" -mindepth 1 -maxdepth 1)" ||
    fail "left in $work: $(find "$work" -mindepth 1 -maxdepth 1)"
for dir in $(comm -13 <(echo "$before") <(find "$runs" -mindepth 1 -maxdepth 1 | sort)); do
    id=${dir##*/}
    state=$(run_prop "$id" State root)
    skill=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["skill"]["name"])' \
        "$dir/request.json")
    [[ $skill == hello || $state == 's "interrupted"' ]] ||
        fail "the run $id of the killed extraction is $state"
done
echo "D8 no extracted tree left, no record of the killed extraction claims success"

# D9. 3000 artifacts; kill when the store has the run's record but no result.json yet.
many=$(make_skill many 'cd "$SANDBOX_FILES_DIR"; for i in $(seq 1 3000); do echo "artifact $i" >"f$i.txt"; done; echo made')
id=$(call alice run "$many")
rec=$runs/$id
killable() {
    [[ -e $rec/stdout.log ]] && grep -q made "$rec/stdout.log"
}
wait_until 200 killable || fail "the many-artifacts run did not get to its end"
old=$(daemon_main_pid)
kill -KILL "$old"
had_result=no
[[ ! -e $rec/result.json ]] || had_result=yes
echo "D9 killed skilld ($old) at the end of the run; result.json there then: $had_result"
wait_until 30 is_inactive || fail "skilld did not go down"
assert_eq "succeeded 0" "$(call bob run --wait "$hello" after-d9 | tail -n 1)" "bob's run after D9"
state=$(run_prop "$id" State root)
case $state in
's "interrupted"')
    [[ ! -e $rec/result.json ]] || fail "an interrupted run has a result.json"
    ;;
's "finished"')
    python3 - "$rec" <<'PY' || fail "the stored result of $id does not hold"
import hashlib, json, os, sys
rec = sys.argv[1]
result = json.load(open(os.path.join(rec, "result.json")))
n = 0
for a in result.get("artifacts", []):
    if a.get("type") != "file":
        continue
    path = os.path.join(rec, "artifacts", a["path"])
    data = open(path, "rb").read()
    assert hashlib.sha256(data).hexdigest() == a["sha256"], path
    n += 1
if result.get("status") == "succeeded":
    assert n == 3000, "succeeded with %d artifacts" % n
print("result.json valid, %d artifacts match their hashes" % n)
PY
    ;;
*) fail "the run $id after the kill: $state" ;;
esac
echo "D9 after restart the run is $state"
