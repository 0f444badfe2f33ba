#!/bin/bash
# A run through the service, as alice: output streamed live and stored, artifacts and logs
# passed back as fds; the run executes in its own transient scope skilld-run-<id>.scope in
# skilld.slice with the limits asked for (read back from the scope's cgroup files while it runs),
# which is gone afterwards; and the outcomes cancel, timeout, oom and tasks.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s'

no_run_scopes() {
    [[ -z "$(systemctl list-units --all --plain --no-legend 'skilld-run-*')" ]]
}

# 1. Output, artifacts, logs.
hello=$(make_skill hello 'echo "hello $1"; echo "greeting for $1" >"$SANDBOX_FILES_DIR/greeting.txt"')
mapfile -t lines < <(call alice run --stdout --wait "$hello" world)
id=${lines[0]}
assert_eq "hello world" "${lines[1]:-}" "live stdout"
assert_eq "succeeded 0" "${lines[2]:-}" "status of hello"
assert_eq "greeting for world" "$(call alice artifact "$id" greeting.txt)" "artifact greeting.txt"
assert_eq "hello world" "$(call alice log "$id" stdout)" "stored stdout"
assert_eq 's ""' "$(run_prop "$id" Unit alice)" "Unit of a finished run"
echo "hello: output, artifact and log fine"

# 2. Live output: the caller has it while the run still goes.
ticker=$(make_skill ticker 'echo tick; sleep 30; echo tock')
call alice run --stdout "$ticker" >ticker.out &
ticker_pid=$!
wait_until 60 grep -q tick ticker.out || fail "no live output from the ticker: $(cat ticker.out)"
tid=$(head -n 1 ticker.out)
assert_eq 's "running"' "$(run_prop "$tid" State alice)" "State of the ticker while its output arrives"
run_method alice "$tid" Cancel
wait "$ticker_pid"
[[ $(cat ticker.out) != *tock* ]] || fail "the ticker ran to its end despite Cancel"
echo "live output arrived while the run went"

# 3. The scope while it runs: the limits asked for, in the cgroup files. tasks+1: the service's
#    pin process is in the scope too, holding its cgroup until the outcome is read.
sleeper=$(make_skill sleeper 'echo started; sleep "${1:-30}"')
id=$(call alice run --limit memory=67108864 --limit tasks=32 --limit cpu=50 "$sleeper" 60)
unit=skilld-run-$id.scope
cg=/sys/fs/cgroup/skilld.slice/$unit
wait_until 60 test -e "$cg/cgroup.procs" || fail "no cgroup $cg for the running run"
wait_until 30 grep -q started "$SKILLD_STATE/runs/$id/stdout.log" || fail "the run did not start"
assert_eq 's "running"' "$(run_prop "$id" State alice)" "State of the sleeper"
assert_eq "s \"$unit\"" "$(run_prop "$id" Unit alice)" "Unit of the sleeper"
assert_eq 67108864 "$(cat "$cg/memory.max")" "memory.max"
assert_eq 0 "$(cat "$cg/memory.swap.max")" "memory.swap.max"
assert_eq 33 "$(cat "$cg/pids.max")" "pids.max"
assert_eq "50000 100000" "$(cat "$cg/cpu.max")" "cpu.max"
assert_eq active "$(systemctl is-active "$unit")" "the scope unit"
assert_eq skilld.slice "$(systemctl show -P Slice "$unit")" "the scope's slice"
echo "scope $unit: memory.max, memory.swap.max, pids.max, cpu.max as asked"

# 4. Cancel: the run ends canceled, the scope goes.
run_method alice "$id" Cancel
assert_eq "finished canceled -1" "$(call alice wait "$id")" "canceled run"
wait_until 10 test ! -e "$cg" || fail "$cg is still there after the run"
wait_until 10 no_run_scopes || fail "scope left: $(systemctl list-units --all 'skilld-run-*')"
echo "canceled; the scope is gone"

# 5. Timeout.
out=$(call alice run --wait --limit timeout=1000000 "$sleeper" 30 | tail -n 1)
assert_eq "timeout -1" "$out" "timed out run"
echo "timeout"

# 6. OOM: 256M in a run of 32M.
hog=$(make_skill hog $'b = bytearray(256 * 1024 * 1024)\nprint(len(b))' py)
out=$(call alice run --wait --limit memory=33554432 "$hog" | tail -n 1)
[[ $out == "oom "* ]] || fail "expected oom, got '$out'"
echo "oom: $out"

# 7. Tasks: forking past a limit of 8.
forker=$(make_skill forker "$(cat <<'PY'
import os, sys, time
for i in range(64):
    try:
        pid = os.fork()
    except OSError:
        sys.exit(3)
    if pid == 0:
        time.sleep(5)
        os._exit(0)
print("no limit")
PY
)" py)
out=$(call alice run --wait --limit tasks=8 "$forker" | tail -n 1)
assert_eq "tasks 3" "$out" "fork past the tasks limit"
echo "tasks: $out"

wait_until 10 no_run_scopes || fail "scopes left: $(systemctl list-units --all 'skilld-run-*')"
