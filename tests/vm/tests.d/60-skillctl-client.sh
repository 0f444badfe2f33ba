#!/bin/bash
# skillctl as installed, against the real skilld (D-Bus activated on the system bus, polkit
# asked), as alice and bob: a run goes through the service (not embedded) and reports as an
# embedded one does; list, status, result and artifacts --get read it back; cancel stops a
# running run; and neither user sees the other's runs. Skips (77) only while the daemon is not
# installed yet.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

skilld=$SKILLD_PREFIX/libexec/skilld
[[ -x $skilld ]] || skip "skilld is not installed at $skilld yet: nothing to be a client of"

examples=$SKILLD_SOURCE_ROOT/examples/skills
work=$PWD

# runuser gives no logind session, so polkit's allow_active never applies to alice and bob:
# grant them runs for the length of this test, as an admin's rule would.
rule=/etc/polkit-1/rules.d/60-skillctl-client-test.rules
cat >"$rule" <<'EOF'
polkit.addRule(function(action, subject) {
    if ((action.id == "io.skilld.run" || action.id == "io.skilld.run-unlisted") &&
        (subject.user == "alice" || subject.user == "bob"))
        return polkit.Result.YES;
});
EOF
trap 'rm -f "$rule"' EXIT
# shellcheck disable=SC2016
for _ in $(seq 50); do
    as_user alice sh -c 'exec pkcheck --action-id io.skilld.run-unlisted --process $$' >/dev/null 2>&1 &&
        break
    sleep 0.2
done

# Each user works in a directory of their own (skill-out/ lands there).
for u in alice bob; do
    install -d -o "$u" -m 0755 "$work/$u"
done
# as USER COMMAND...: COMMAND as USER in their directory; stdout, stderr and status kept.
as() {
    local u=$1
    shift
    rc=0
    (cd "$work/$u" && as_user "$u" "$@") >"$work/out" 2>"$work/err" || rc=$?
}
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$work/out" "$1"; }
show() { echo "exit $rc"; echo "stdout: $(head -c 2000 "$work/out")"; echo "stderr: $(head -c 2000 "$work/err")"; }

# 1. A run through the service, as alice.
as alice skillctl run --system "$examples/shell-report" --input '{"name": "alice"}'
show
assert_eq 0 "$rc" "skillctl run --system as alice"
assert_contains "$(cat "$work/out")" '"name": "alice"' "the skill's live stdout"
assert_contains "$(cat "$work/err")" "skillctl: succeeded, exit 0" "the summary line"
! grep -q "running embedded" "$work/err" || fail "skillctl ran embedded with skilld installed"
id=$(basename "$(find "$work/alice/skill-out" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
[[ $id =~ ^[0-9a-f]{32}$ ]] || fail "no skill-out/<run id> after the run: '$id'"
[[ -s $work/alice/skill-out/$id/result.json ]] || fail "result.json was not fetched"
echo "alice's run: $id"

as alice skillctl list --json
assert_eq 0 "$rc" "skillctl list as alice"
grep -q "\"$id\"" "$work/out" || fail "alice's run is not in her list: $(cat "$work/out")"
as alice skillctl status "$id"
assert_contains "$(cat "$work/out")" "State: finished (succeeded, exit 0)" "skillctl status"
as alice skillctl result --json "$id"
assert_eq 0 "$rc" "skillctl result exit status"
assert_eq succeeded "$(json '["status"]')" "the result's status"
assert_eq alice "$(json '["output"]["name"]')" "the result's output"

# 2. Artifacts: a run that makes some, then one fetched by path.
as alice skillctl run --system --json "$examples/make-artifacts" \
    --input '{"rows": [{"item": "apples", "qty": 3}], "title": "Stock"}'
assert_eq 0 "$rc" "make-artifacts through the service"
aid=$(json '["run_id"]')
# What GetOutcome listed, fetched into skill-out/ID as an embedded run lays it out.
grep -q '^apples,3' "$work/alice/skill-out/$aid/files/table.csv" ||
    fail "the artifact did not reach skill-out/$aid/files"
[[ -f $work/alice/skill-out/$aid/stdout.log && -f $work/alice/skill-out/$aid/stderr.log ]] ||
    fail "the logs did not reach skill-out/$aid"
as alice skillctl artifacts "$aid" --get table.csv -o fetched
show
assert_eq 0 "$rc" "skillctl artifacts --get"
grep -q '^apples,3' "$work/alice/fetched/table.csv" || fail "table.csv was not fetched"
assert_eq alice "$(stat -c %U "$work/alice/fetched/table.csv")" "owner of the fetched artifact"

# 3. Cancel a running run.
mkdir -p "$work/sleeper/scripts"
printf -- '---\nname: sleeper\ndescription: Sleeps until canceled.\n---\nSleeps.\n' >"$work/sleeper/SKILL.md"
printf '#!/bin/bash\necho started\nexec sleep 120\n' >"$work/sleeper/scripts/main.sh"
chmod -R a+rX "$work/sleeper"
(cd "$work/alice" && as_user alice skillctl run --system "$work/sleeper") >"$work/sleeper.out" 2>&1 &
runner=$!
sid=
for _ in $(seq 100); do
    # shellcheck disable=SC2015 # any failure just means "not yet"
    sid=$(cd "$work/alice" && as_user alice skillctl list --json | python3 -c '
import json, sys
runs = json.load(sys.stdin)
print(next((r["id"] for r in runs if r["skill"] == "sleeper" and r["state"] == "running"), ""))' || true)
    [[ -n $sid ]] && break
    sleep 0.2
done
[[ -n $sid ]] || fail "the sleeper run never showed as running: $(cat "$work/sleeper.out")"
as alice skillctl cancel "$sid"
show
assert_eq 0 "$rc" "skillctl cancel"
rrc=0
wait "$runner" || rrc=$?
cat "$work/sleeper.out"
assert_eq 130 "$rrc" "exit status of the canceled skillctl run"
as alice skillctl status --json "$sid"
assert_eq canceled "$(json '["status"]')" "status of the canceled run"

# 4. Each user sees only their own runs.
as bob skillctl run --system --json "$examples/shell-report"
assert_eq 0 "$rc" "a run as bob"
bid=$(json '["run_id"]')
as alice skillctl list
! grep -q "$bid" "$work/out" || fail "alice's list shows bob's run $bid"
as alice skillctl status "$bid"
assert_eq 4 "$rc" "alice asking for bob's run (4: no such run)"
assert_contains "$(cat "$work/err")" "run $bid: no such run" "the message"
as bob skillctl list
! grep -q "$id" "$work/out" || fail "bob's list shows alice's run $id"
echo "alice and bob see only their own runs"
