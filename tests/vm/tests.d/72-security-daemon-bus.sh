#!/bin/bash
# The daemon's adversarial cases on the bus itself (tests/security/daemon/README.md): D1, a Run
# with an input past the daemon's 64M (sent over the private socket, where no bus daemon caps the
# message first) and one with a variant nested 64 levels deep, refused, making no record, the
# daemon's memory back near where it was; D3, a socket fd as the skill, refused; D2, one
# connection flooding calls with 1M arguments and never reading a reply, while bob is served and
# the daemon's fds return to their baseline once the flooder is gone; D5, a caller that
# disconnects while polkit is still deciding (a rule that takes seconds): nothing is started on
# its behalf.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

ABUSE=$SKILLD_BUILD_ROOT/tests/security/daemon/skilld-abuse
socket=unix:path=/run/skilld/bus
slow_rules=/etc/polkit-1/rules.d/40-skilld-slow-alice.rules
cleanup() {
    [[ -z ${flooder:-} ]] || kill "$flooder" 2>/dev/null || true
    if [[ -e $slow_rules ]]; then
        rm -f "$slow_rules"
        systemctl restart polkit.service
    fi
    systemctl stop skilld.socket skilld.service || true
}
trap cleanup EXIT

daemon_setup
daemon_policy $'service:\n  idle-timeout: 300s'
systemctl start skilld.socket

hello=$(make_skill hello 'echo "hello $1"')
assert_eq "succeeded 0" "$(call bob run --wait "$hello" bob | tail -n 1)" "bob's first run"
pid=$(daemon_main_pid)
n_records() {
    find "$SKILLD_STATE/runs" -mindepth 1 -maxdepth 1 | wc -l
}
still_serving() {
    assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid after $1"
    assert_eq "succeeded 0" "$(call bob run --wait "$hello" "after $1" | tail -n 1)" "bob's run after $1"
}
memory() {
    systemctl show -P MemoryCurrent skilld.service
}
records=$(n_records)
mem0=$(memory)
[[ $mem0 =~ ^[0-9]+$ ]] || fail "no MemoryCurrent for skilld.service: '$mem0'"
echo "skilld (pid $pid): MemoryCurrent $mem0"

# D1. 100M of input over the private socket, as alice.
out=$(as_user alice "$ABUSE" --address "$socket" huge-input 104857600 "$hello") ||
    fail "the huge input was accepted or the client failed: $out"
assert_contains "$out" "larger than 64M" "a 100M input"
echo "D1 100M input: $out"
# Over the system bus the bus daemon's own message limit comes first; either way no run.
out=$(as_user alice "$ABUSE" huge-input 104857600 "$hello") || fail "the huge input on the bus: $out"
echo "D1 100M input on the system bus: $out"
# 64 nested variants where a{st} belongs.
out=$(as_user alice "$ABUSE" --address "$socket" deep-variant 64 "$hello") ||
    fail "the deep variant was accepted or the client failed: $out"
[[ $out == unbuildable:* || $out == org.freedesktop.DBus.Error.InvalidArgs:* ]] ||
    fail "the deep variant: $out"
echo "D1 64 nested variants: $out"
assert_eq "$records" "$(n_records)" "records after the huge calls"
# Memory: back within 32M of the baseline (the 100M message must not stay).
mem_ok() {
    [[ $(memory) -lt $((mem0 + 33554432)) ]]
}
wait_until 30 mem_ok || fail "skilld's MemoryCurrent is $(memory), $mem0 before the huge calls"
echo "D1 MemoryCurrent back to $(memory)"
still_serving D1

# D3. A socket as the skill.
records=$(n_records)
out=$(as_user alice "$ABUSE" --address "$socket" socket-skill) || fail "a socket skill: $out"
assert_contains "$out" "regular file" "a socket as the skill"
echo "D3 socket as the skill: $out"
assert_eq "$records" "$(n_records)" "records after the socket skill"
still_serving D3

# D2. A flood on one connection that never reads.
fds() {
    find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l
}
fd0=$(fds)
# setpriv execs, so that $! is the flooder itself (runuser would stay in between).
setpriv --reuid=alice --regid=alice --init-groups "$ABUSE" --address "$socket" flood 300 1048576 \
    >flood.out 2>&1 &
flooder=$!
sleep 3
out=$(timeout 120 "$SKILLD_CALL" --address "$socket" wait 0123456789abcdef0123456789abcdef 2>&1) || true
assert_contains "$out" "NoSuchRun" "root's call during the flood"
assert_eq "succeeded 0" "$(timeout 180 "$SKILLD_CALL" run --wait "$hello" during | tail -n 1)" \
    "a run on the bus during the flood"
assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid during the flood"
echo "D2 flooder: $(cat flood.out)"
kill "$flooder"
wait "$flooder" 2>/dev/null || true
flooder=
wait_until 30 test "$(fds)" -le "$fd0" || fail "skilld has $(fds) fds, $fd0 before the flood"
wait_until 30 mem_ok || fail "skilld's MemoryCurrent is $(memory) after the flood, $mem0 before"
echo "D2 served during the flood; fds back to $(fds), MemoryCurrent $(memory)"
still_serving D2
records=$(n_records)

records=$(n_records)
# D5. polkit takes 6 s for alice's ad-hoc runs; she is gone after 1 s.
cat >"$slow_rules" <<'RULES'
polkit.addRule(function(action, subject) {
    if (action.id == "io.skilld.run-unlisted" && subject.user == "alice") {
        polkit.spawn(["/bin/sleep", "6"]);
        return polkit.Result.YES;
    }
    return polkit.Result.NOT_HANDLED;
});
RULES
systemctl restart polkit.service
marker=$(make_skill marker 'echo ran')
as_user alice bash -c '"$1" run "$2" & sleep 1; kill -KILL $!; ! wait $!' sh "$SKILLD_CALL" "$marker" ||
    fail "the call returned before polkit decided"
sleep 10
assert_eq "$records" "$(n_records)" "records after the caller left during polkit"
list=$(busctl --system call "${MANAGER[@]}" ListAllRuns)
[[ $list != *'"marker"'* ]] || fail "a run of the departed caller exists: $list"
journalctl --sync
echo "D5 the caller left while polkit decided: nothing started"
# The slow rule still lets a patient alice run.
assert_eq "succeeded 0" "$(call alice run --wait "$marker" | tail -n 1)" "alice's patient run"
still_serving D5
