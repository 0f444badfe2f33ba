#!/bin/bash
# D6, signals: a run's RunStarted, RunFinished and PropertiesChanged go to those entitled to see
# it, never to the whole bus. alice, listening on the system bus with matches for every signal of
# the service from before bob's run starts until after it ends, hears none of them, nor after
# asking about the run by its id (NoSuchRun); a root connection that only listens hears none
# either. bob's own listener that asked about the run, and carol (the admin, granted
# io.skilld.manage-runs) after asking, hear its end; `skillctl wait` from a fresh process of bob's
# gets it.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

ABUSE=$SKILLD_BUILD_ROOT/tests/security/daemon/skilld-abuse

daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s'

# The test ends it by canceling it.
sleeper=$(make_skill sleeper 'echo started; sleep 120')
hello=$(make_skill hello 'echo "hello $1"')
# The service up before the listeners, so that they hear its first run.
call bob run --wait "$hello" warm-up >/dev/null

# listen NAME USER [ID]: a listener in the background, its output in NAME.out; waits until it
# listens and prints its pid.
listen() {
    local name=$1 user=$2
    shift 2
    as_user "$user" "$ABUSE" listen "$@" >"$name.out" 2>&1 &
    wait_until 60 grep -q '^listening ' "$name.out" || fail "$name never listened: $(cat "$name.out")"
    sed -n 's/^listening //p' "$name.out"
}

# stop PID NAME: ends a listener; prints how many signals it heard.
stop() {
    kill -TERM "$1"
    wait_until 60 grep -q '^heard ' "$2.out" || fail "$2 did not stop: $(cat "$2.out")"
    sed -n 's/^heard //p' "$2.out"
}

alice_pid=$(listen alice alice)
root_pid=$(listen root root)

id=$(call bob run "$sleeper")
[[ $id =~ ^[0-9a-f]{32}$ ]] || fail "bob's Run: $id"
wait_until 60 grep -q started "$SKILLD_STATE/runs/$id/stdout.log" || fail "bob's sleeper did not start"

# Those who ask about the run, once it runs: bob and carol hear about it from then on, alice is
# told there is no such run.
bob_pid=$(listen bob bob "$id")
carol_pid=$(listen carol carol "$id")
alice2_pid=$(listen alice2 alice "$id")
assert_eq "asked: running" "$(sed -n 1p bob.out)" "bob's listener asking"
assert_eq "asked: running" "$(sed -n 1p carol.out)" "carol's listener asking"
assert_eq "asked: io.skilld.Skilld1.Error.NoSuchRun" "$(sed -n 1p alice2.out)" "alice's listener asking"

as_user bob skillctl wait "$id" >wait.out 2>&1 &
waiter=$!
run_method bob "$id" Cancel >/dev/null
# skillctl wait exits with the run's status: not 0 for a canceled run.
wait "$waiter" || true
assert_contains "$(cat wait.out)" "canceled" "skillctl wait by bob"
assert_eq 's "finished"' "$(run_prop "$id" State bob)" "bob's run"

assert_eq 0 "$(stop "$alice_pid" alice)" "signals alice heard: $(cat alice.out)"
assert_eq 0 "$(stop "$alice2_pid" alice2)" "signals alice heard after asking: $(cat alice2.out)"
assert_eq 0 "$(stop "$root_pid" root)" "signals a root connection that only listened heard: $(cat root.out)"
n=$(stop "$bob_pid" bob)
grep -q "^signal RunFinished /io/skilld/Skilld1\$" bob.out ||
    fail "bob's listener missed RunFinished: $(cat bob.out)"
grep -q "^signal PropertiesChanged /io/skilld/Skilld1/run/$id\$" bob.out ||
    fail "bob's listener missed PropertiesChanged: $(cat bob.out)"
n=$(stop "$carol_pid" carol)
grep -q "^signal RunFinished /io/skilld/Skilld1\$" carol.out ||
    fail "carol's listener missed RunFinished: $(cat carol.out)"
echo "bob's run was heard by bob's and carol's listeners only ($n signals for carol); alice heard nothing"
