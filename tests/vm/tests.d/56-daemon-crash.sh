#!/bin/bash
# skilld killed with SIGKILL while runs are in flight loses nothing: its workers and the runs'
# processes die with it (none outlives its deadline), no scope is leaked, and when the service is
# next activated every run is final in the store: interrupted (or its real result, had it
# finished), with a journal entry. A scope a dead instance left behind is stopped at start-up.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s\nconcurrency:\n  per-user: 2\n  global: 4'
first=$(sed -n 's/^ *first: *//p' "$SKILLD_PREFIX/share/skilld/policy.yaml")

no_run_scopes() {
    [[ -z "$(systemctl list-units --all --plain --no-legend 'skilld-run-*')" ]]
}
# Processes of any run: uids from the policy's range up.
run_processes() {
    ps -eo uid=,pid=,comm= | awk -v first="$first" '$1 >= first'
}
no_run_processes() {
    [[ -z "$(run_processes)" ]]
}

sleeper=$(make_skill sleeper 'echo started; sleep "${1:-30}"')
ids=()
for user in alice alice alice bob; do
    ids+=("$(call "$user" run "$sleeper" 50)")
done
for id in "${ids[0]}" "${ids[1]}" "${ids[3]}"; do
    wait_until 60 grep -q started "$SKILLD_STATE/runs/$id/stdout.log" || fail "run $id did not start"
done
assert_eq 's "queued"' "$(run_prop "${ids[2]}" State alice)" "alice's third run (per-user cap 2)"
[[ -n "$(run_processes)" ]] || fail "no run processes while runs are going"
echo "3 runs running, 1 queued; killing skilld at $(date +%s.%N)"

kill -KILL "$(daemon_main_pid)"
wait_until 30 is_inactive || fail "skilld did not go down"
wait_until 30 no_run_processes || fail "processes of runs outlived skilld: $(run_processes)"
wait_until 30 no_run_scopes || fail "scopes outlived skilld: $(systemctl list-units --all 'skilld-run-*')"
echo "skilld, its runs' processes and their scopes are gone"

# A scope some dead instance left (here made by hand): the next start stops it.
stale=skilld-run-00000000000000000000000000000000.scope
systemd-run --quiet --scope --unit="$stale" --collect sleep 300 &
wait_until 30 systemctl -q is-active "$stale" || fail "the stand-in leftover scope did not start"

# Activation again: every run is final, interrupted, and the leftover scope is gone.
as_user alice busctl --system call "${MANAGER[@]}" ListRuns >/dev/null
for id in "${ids[@]}"; do
    state=$(run_prop "$id" State root)
    # A run of the crash was once found finished: its worker took the end of the killed
    # service's cancel pipe for a Cancel (worker.c's canceled_by_service_end(), and the 'run
    # worker' test). Should it happen again, what the record holds tells who wrote it and why.
    [[ $state == 's "interrupted"' ]] ||
        fail "run $id after the crash: expected 's \"interrupted\"', got '$state'; its record:" \
            "$(cat "$SKILLD_STATE/runs/$id/state.json" 2>&1)" \
            "$(head -c 2000 "$SKILLD_STATE/runs/$id/result.json" 2>&1)" \
            "$(ls -l --time-style=+%s.%N "$SKILLD_STATE/runs/$id" 2>&1)"
    journalctl --sync
    journalctl -o cat --no-pager SKILLD_RUN_ID="$id" SKILLD_STATUS=interrupted | grep -q . ||
        fail "no journal entry for the interruption of $id"
done
wait_until 30 no_run_scopes ||
    fail "the leftover scope was not stopped: $(systemctl list-units --all 'skilld-run-*')"
echo "after re-activation: ${#ids[@]} runs interrupted, each in the journal; leftover scope stopped"
