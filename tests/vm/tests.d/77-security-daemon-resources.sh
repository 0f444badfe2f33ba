#!/bin/bash
# D14 through the service (52-daemon-run proves the statuses of a quick memory hog, a bounded
# forker and a sleeper's timeout): a real fork bomb (every process forks, forever), a memory hog
# that grows slowly, and four CPU burners, each submitted by alice. Each ends with its status
# (tasks, oom, timeout); the service answers GetRun while each runs; afterwards no process of
# the run's uid is left anywhere and its scope unit is gone; the service is the same process.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s'

hello=$(make_skill hello 'echo "hello $1"')
assert_eq "succeeded 0" "$(call bob run --wait "$hello" bob | tail -n 1)" "bob's first run"
pid=$(daemon_main_pid)

# Processes whose effective uid is $1, anywhere on the host.
uid_procs() {
    grep -h '^Uid:' /proc/[0-9]*/status 2>/dev/null | awk -v u="$1" '$3 == u' | wc -l
}
no_scope() {
    [[ -z "$(systemctl list-units --all --plain --no-legend "skilld-run-$1.scope")" ]]
}

# attack NAME STATUS LIMITS... -- SKILL_BODY [EXT]: runs it as alice, asks the service about it
# while it runs, checks its end and what it leaves.
attack() {
    local name=$1 want=$2 limits=() skill id uid status
    shift 2
    while [[ $1 != -- ]]; do
        limits+=(--limit "$1")
        shift
    done
    shift
    skill=$(make_skill "$name" "$@")
    id=$(call alice run "${limits[@]}" "$skill")
    [[ $id =~ ^[0-9a-f]{32}$ ]] || fail "$name: Run: $id"
    wait_until 120 grep -q started "$SKILLD_STATE/runs/$id/stdout.log" || fail "$name did not start"
    # The service while the attack goes on: GetRun and the run's State, answered.
    assert_eq "o \"/io/skilld/Skilld1/run/$id\"" \
        "$(as_user alice busctl --system call "${MANAGER[@]}" GetRun s "$id")" "GetRun during $name"
    status=$(run_prop "$id" State alice)
    [[ $status == 's "running"' || $status == 's "finished"' ]] || fail "$name: State $status"
    status=$(call alice wait "$id")
    [[ $status == "finished $want "* ]] || fail "$name: expected $want, got $status"
    # result exits with the run's status, not 0 here.
    uid=$( (as_user alice skillctl result --json "$id" 2>/dev/null || true) |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["uid"])')
    [[ $uid =~ ^[0-9]+$ && $uid -ge 65536 ]] || fail "$name: the run's uid: $uid"
    wait_until 10 test "$(uid_procs "$uid")" -eq 0 ||
        fail "$name: $(uid_procs "$uid") processes of uid $uid survive the run"
    wait_until 10 no_scope "$id" || fail "$name: skilld-run-$id.scope is still there"
    if systemctl -q is-active "skilld-run-$id.scope"; then
        fail "$name: skilld-run-$id.scope is active"
    fi
    assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid after $name"
    echo "$name: $status; uid $uid has no process left, skilld-run-$id.scope is gone"
}

# Every process forks two more, forever; the top one waits a while and fails.
attack forkbomb tasks tasks=32 -- \
    'echo started; bomb() { bomb | bomb & }; bomb; sleep 5; exit 7'
# A megabyte at a time, into a 64M limit.
attack hog oom memory=67108864 -- "$(cat <<'PY'
import time
print("started", flush=True)
time.sleep(1)
chunks = []
while True:
    chunks.append(bytearray(1 << 20))
    time.sleep(0.01)
PY
)" py
# Four busy loops until the 5 s timeout.
attack burners timeout timeout=5000000 -- \
    'for i in 1 2 3 4; do (while :; do :; done) & done; echo started; wait'

assert_eq "succeeded 0" "$(call bob run --wait "$hello" after | tail -n 1)" "bob's run after the attacks"
