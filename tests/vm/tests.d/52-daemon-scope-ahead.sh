#!/bin/bash
# The next run's scope, started ahead (skilld/daemon/scope-spare.h): after a run starts, the
# service starts skilld-run-<id>.scope for an id not handed out yet, with that run's limits and a
# pin of its own in it; the next run with the same limits takes that id and that scope (its
# sandbox cloned into the scope's cgroup under systemd's limits, the worker back at the service's
# OOM score, the skill at 1000); a run with other limits gets a scope of its own; a scope nobody
# takes goes within seconds, and nothing of it is left.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s'

run_scopes() {
    systemctl list-units --all --plain --no-legend 'skilld-run-*' | awk '{ print $1 }'
}
no_run_scopes() {
    [[ -z "$(run_scopes)" ]]
}
# The active scope started ahead, if any.
scope_ahead() {
    local u
    for u in $(run_scopes); do
        if [[ $(systemctl show -P Description "$u") == *"started ahead"* ]] && systemctl -q is-active "$u"; then
            echo "$u"
            return 0
        fi
    done
    return 1
}
# Sets $unit to the scope started ahead once there is one: one look, since it may go (5 s) between
# two.
find_scope_ahead() {
    unit=$(scope_ahead)
}

# 1. After a run, a scope started ahead with that run's limits (the policy's defaults), holding
#    the service's pin alone. Its figures are read first and judged after: a scope nobody takes
#    goes 5 s after it started, and under emulation on a busy host the reads can take longer;
#    then the figures are of a scope that went, and another run starts another.
hello=$(make_skill hello 'echo "hello $1"')
read_ahead() {
    cat "$cg/memory.max" "$cg/memory.swap.max" "$cg/pids.max" "$cg/cpu.max" 2>/dev/null | paste -sd /
}
for attempt in 1 2 3; do
    assert_eq "succeeded 0" "$(call alice run --wait "$hello" alice | tail -n 1)" "a run (attempt $attempt)"
    wait_until 30 find_scope_ahead || fail "no scope started ahead after a run: $(run_scopes)"
    cg=/sys/fs/cgroup/skilld.slice/$unit
    figures=$(read_ahead || true)
    slice=$(systemctl show -P Slice "$unit" || true)
    pin=$(cat "$cg/cgroup.procs" 2>/dev/null || true)
    pin_comm=$(cat "/proc/$pin/comm" 2>/dev/null || true)
    pin_parent=$(awk '{ print $4 }' "/proc/$pin/stat" 2>/dev/null || true)
    systemctl -q is-active "$unit" && break
    echo "attempt $attempt: $unit went before it was read"
    unit=""
done
[[ -n $unit ]] || fail "no scope started ahead stayed long enough to be read, in three attempts"
assert_eq "536870912/0/257/100000 100000" "$figures" \
    "memory.max, memory.swap.max, pids.max (the pin is one) and cpu.max of the scope started ahead"
assert_eq skilld.slice "$slice" "its slice"
[[ $pin =~ ^[0-9]+$ ]] || fail "the scope started ahead holds '$pin', not its pin alone"
assert_eq skilld-pin "$pin_comm" "the process in the scope started ahead"
assert_eq "$(daemon_main_pid)" "$pin_parent" "the pin's parent"
echo "$unit: started ahead, with the run's limits and the service's pin"

# A scope started ahead, now: the last one may have gone meanwhile (5 s after it started), and a
# run starts the next.
ensure_scope_ahead() {
    find_scope_ahead && return 0
    assert_eq "succeeded 0" "$(call alice run --wait "$hello" again | tail -n 1)" "a run, for a scope ahead"
    wait_until 30 find_scope_ahead
}

# 2. The next run with the same limits takes its id and its scope. Under emulation a scope may go
#    (5 s) before the call gets there: then that run is canceled and the next one tries again.
sleeper=$(make_skill sleeper 'echo "oom $(cat /proc/self/oom_score_adj)"; echo started; sleep "${1:-30}"')
id=""
for attempt in 1 2 3; do
    ensure_scope_ahead || fail "no scope started ahead (attempt $attempt)"
    id=$(call alice run "$sleeper" 60)
    [[ $id =~ ^[0-9a-f]{32}$ ]] || fail "Run: $id"
    [[ $unit == "skilld-run-$id.scope" ]] && break
    echo "attempt $attempt: run $id did not get $unit (gone meanwhile?)"
    run_method alice "$id" Cancel >/dev/null
    call alice wait "$id" >/dev/null
    id=""
done
[[ -n $id ]] || fail "no run took the scope started ahead in three attempts"
cg=/sys/fs/cgroup/skilld.slice/$unit
wait_until 60 grep -q started "$SKILLD_STATE/runs/$id/stdout.log" ||
    fail "the sleeper did not start: $( (as_user alice skillctl result --json "$id" 2>&1 || true) | head -c 1500)"
assert_eq "s \"$unit\"" "$(run_prop "$id" Unit alice)" "Unit of the run in the scope started ahead"
assert_eq active "$(systemctl is-active "$unit")" "the scope while the run goes"
grep -qx "oom 1000" "$SKILLD_STATE/runs/$id/stdout.log" ||
    fail "the skill's OOM score: $(head -n 1 "$SKILLD_STATE/runs/$id/stdout.log")"
procs=$(wc -l <"$cg/cgroup.procs")
[[ $procs -ge 3 ]] || fail "the scope holds $procs processes, not the pin, the init and the skill"
pins=0
while read -r p; do
    [[ $(cat "/proc/$p/comm" 2>/dev/null) == skilld-pin ]] && pins=$((pins + 1))
done <"$cg/cgroup.procs"
assert_eq 1 "$pins" "pins in the run's scope (the one started ahead with it)"
for w in $(pgrep -x skilld-worker); do
    assert_eq -500 "$(cat "/proc/$w/oom_score_adj")" "the worker's OOM score while its run goes"
done
run_method alice "$id" Cancel >/dev/null
assert_eq "finished canceled -1" "$(call alice wait "$id")" "the run in the scope started ahead, canceled"
wait_until 20 test ! -e "$cg" || fail "$cg is still there after the run"
echo "run $id: in $unit, started ahead; canceled, the scope is gone"

# 3. A run with other limits gets a scope of its own, with those limits (52-daemon-run reads them
#    from the cgroup); the one started ahead is not it.
ensure_scope_ahead || fail "no scope started ahead after the sleeper"
mapfile -t lines < <(call alice run --wait --limit memory=67108864 "$hello" other)
id=${lines[0]:-}
assert_eq "succeeded 0" "${lines[-1]:-}" "the run with other limits"
[[ $id =~ ^[0-9a-f]{32}$ ]] || fail "Run with other limits: $id"
[[ $unit != "skilld-run-$id.scope" ]] || fail "a run with other limits took $unit"
echo "a run with other limits: a scope of its own"

# 4. A scope nobody takes goes, with its pin; the service reaped every pin.
wait_until 30 no_run_scopes || fail "scopes left: $(run_scopes)"
wait_until 10 bash -c '! pgrep -x skilld-pin >/dev/null' || fail "pins left: $(pgrep -a -x skilld-pin)"
zombies=$(pgrep -c -r Z -P "$(daemon_main_pid)" || true)
assert_eq 0 "$zombies" "zombies of the service"
echo "unused, the scope started ahead went; no pin left, none unreaped"
