#!/bin/bash
# Runs are their owner's: alice cannot list, read, open artifacts or logs of, or cancel bob's
# runs, which answer NoSuchRun to her as runs that do not exist do; carol, an admin authorized for
# io.skilld.manage-runs, can do all of it. The same for the listing a page at a time
# (ListRunsFiltered, and skillctl list -n over it): everyone's only with io.skilld.manage-runs
# (polkitd's answer), options checked before that, the cursor paging back through the runs.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s'

hello=$(make_skill hello 'echo "secret of $1"; echo "bob'"'"'s file" >"$SANDBOX_FILES_DIR/private.txt"')
sleeper=$(make_skill sleeper 'echo started; sleep "${1:-30}"')
done_id=$(call bob run --wait "$hello" bob | head -n 1)
busy_id=$(call bob run "$sleeper" 60)
wait_until 60 grep -q started "$SKILLD_STATE/runs/$busy_id/stdout.log" || fail "bob's sleeper did not start"

# alice: nothing of bob's.
list=$(as_user alice busctl --system call "${MANAGER[@]}" ListRuns)
[[ $list != *"$done_id"* && $list != *"$busy_id"* ]] || fail "alice's ListRuns shows bob's runs: $list"
for id in "$done_id" "$busy_id" 0123456789abcdef0123456789abcdef; do
    err=$(as_user alice busctl --system call "${MANAGER[@]}" GetRun s "$id" 2>&1) && fail "alice got $id"
    assert_contains "$err" "No run $id" "GetRun of $id by alice"
    err=$(run_prop "$id" State alice 2>&1) && fail "alice read the State of $id"
    assert_contains "$err" "No run $id" "State of $id read by alice"
done
err=$(call alice artifact "$done_id" private.txt 2>&1) && fail "alice opened bob's artifact: $err"
assert_contains "$err" "io.skilld.Skilld1.Error.NoSuchRun" "OpenArtifact by alice"
err=$(call alice log "$done_id" stdout 2>&1) && fail "alice opened bob's log: $err"
assert_contains "$err" "io.skilld.Skilld1.Error.NoSuchRun" "OpenLog by alice"
err=$(run_method alice "$busy_id" Cancel 2>&1) && fail "alice canceled bob's run"
assert_contains "$err" "No run $busy_id" "Cancel by alice"
err=$(as_user alice busctl --system call "${MANAGER[@]}" ListAllRuns 2>&1) && fail "alice listed all runs"
assert_contains "$err" "io.skilld.manage-runs" "ListAllRuns by alice"
err=$(as_user alice busctl --system call "${MANAGER[@]}" ListRunsFiltered 'a{sv}' 1 all b true 2>&1) &&
    fail "alice listed all runs through ListRunsFiltered"
assert_contains "$err" "io.skilld.manage-runs" "ListRunsFiltered with all by alice"
err=$(as_user alice busctl --system call "${MANAGER[@]}" ListRunsFiltered 'a{sv}' 2 all b true colour b true 2>&1) &&
    fail "ListRunsFiltered took an unknown option"
assert_contains "$err" "Unknown option 'colour'" "an unknown option, checked before the authorization"
list=$(as_user alice busctl --system call "${MANAGER[@]}" ListRunsFiltered 'a{sv}' 0)
[[ $list != *"$done_id"* && $list != *"$busy_id"* ]] || fail "alice's ListRunsFiltered shows bob's runs: $list"
out=$(as_user alice skillctl list --lines=all 2>&1)
[[ $out != *"$done_id"* ]] || fail "alice's skillctl list shows bob's runs: $out"
tree=$(as_user alice busctl --system tree io.skilld.Skilld1 2>&1)
[[ $tree != *"$done_id"* ]] || fail "alice's introspection shows bob's runs: $tree"
assert_eq 's "running"' "$(run_prop "$busy_id" State bob)" "bob's run after alice tried to cancel it"
echo "alice sees none of bob's runs"

# carol, the admin: everything.
list=$(as_user carol busctl --system call "${MANAGER[@]}" ListAllRuns)
assert_contains "$list" "$done_id" "carol's ListAllRuns"
assert_contains "$list" "$busy_id" "carol's ListAllRuns"
# A page of one, the newest, then the page before it through the cursor: bob's two runs, the
# sleeper last (both are the newest runs: nothing else runs now). busctl prints the count of
# older runs, the cursor, then the runs: tsa(sossussitt) OLDER "NEXT" N "ID" ...
one_run() {     # WHAT ID PAGE: the page holds that run alone
    [[ $3 =~ ^tsa\(sossussitt\)\ [0-9]+\ \"[^\"]*\"\ 1\ \"$2\" ]] || fail "$1: not $2 alone: $3"
}
page=$(as_user carol busctl --system call "${MANAGER[@]}" ListRunsFiltered 'a{sv}' 2 limit u 1 all b true)
one_run "carol's newest run, of everyone's" "$busy_id" "$page"
next=$(sed -E 's/^tsa\(sossussitt\) [0-9]+ "([^"]*)".*/\1/' <<<"$page")
[[ $next =~ ^[0-9]+-[0-9a-f]{32}$ ]] || fail "no cursor after a page with older runs: $page"
page=$(as_user carol busctl --system call "${MANAGER[@]}" ListRunsFiltered 'a{sv}' 3 limit u 1 all b true \
    before s "$next")
one_run "the page before it" "$done_id" "$page"
page=$(as_user bob busctl --system call "${MANAGER[@]}" ListRunsFiltered 'a{sv}' 2 skill s sleeper state s running)
one_run "bob's running sleeper, by skill and state" "$busy_id" "$page"
errf=$(mktemp)
out=$(as_user carol skillctl --no-ask-password list --all -n 1 2>"$errf")
assert_contains "$out" "$busy_id" "skillctl list --all -n 1 as carol"
[[ $out != *"$done_id"* ]] || fail "skillctl list -n 1 showed two runs: $out"
assert_contains "$(cat "$errf")" "older run" "skillctl list -n 1 names what it left out"
rm -f "$errf"
out=$(as_user bob skillctl list --quiet)
assert_eq "$done_id $busy_id" "$(tail -n 2 <<<"$out" | tr '\n' ' ' | sed 's/ $//')" "bob's skillctl list --quiet"
# A run id prefix is resolved among the runs the caller may see (ListRunsFiltered's prefix).
assert_contains "$(as_user bob skillctl status "${busy_id:0:8}")" "Run $busy_id" "bob's run by a prefix"
err=$(as_user alice skillctl status "${busy_id:0:8}" 2>&1) && fail "alice found bob's run by a prefix: $err"
assert_contains "$err" "no such run" "bob's run by a prefix, asked by alice"
echo "ListRunsFiltered: a page at a time, everyone's for carol alone"
assert_eq "o \"/io/skilld/Skilld1/run/$done_id\"" \
    "$(as_user carol busctl --system call "${MANAGER[@]}" GetRun s "$done_id")" "GetRun by carol"
assert_eq 's "finished"' "$(run_prop "$done_id" State carol)" "State read by carol"
assert_eq "bob's file" "$(call carol artifact "$done_id" private.txt)" "bob's artifact opened by carol"
assert_eq "secret of bob" "$(call carol log "$done_id" stdout)" "bob's log opened by carol"
run_method carol "$busy_id" Cancel
assert_eq "finished canceled -1" "$(call bob wait "$busy_id")" "bob's run canceled by carol"
echo "carol sees, reads and cancels bob's runs"

# And bob himself may remove his run; then it is gone for everyone.
run_method bob "$done_id" Remove
err=$(run_prop "$done_id" State carol 2>&1) && fail "a removed run is still there"
assert_contains "$err" "No run $done_id" "State of a removed run"
[[ ! -e $SKILLD_STATE/runs/$done_id ]] || fail "the record of a removed run is still on disk"
echo "bob removed his run"
