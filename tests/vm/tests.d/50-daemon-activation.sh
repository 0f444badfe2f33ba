#!/bin/bash
# skilld is started on demand: a call from an ordinary user activates it through the system bus
# from cold, it exits on its own when idle, and the next call starts it again. Its units pass
# systemd-analyze verify, and systemd-analyze security rates the service.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 3s'
is_inactive || fail "skilld is running before anyone called it"

# 1. Activation from cold, by alice.
out=$(as_user alice busctl --system call "${MANAGER[@]}" ListRuns)
assert_eq "a(sossussitt) 0" "$out" "ListRuns of alice on a fresh service"
assert_eq active "$(systemctl is-active skilld.service)" "skilld after alice's call"
version=$(as_user alice busctl --system get-property "${MANAGER[@]}" Version)
assert_eq "s \"$SKILLD_VERSION\"" "$version" "Version property"
echo "activated by alice's call: $version"

# 2. Idle exit: nothing running, nothing pending, for the policy's 3 s.
wait_until 30 is_inactive || fail "skilld did not exit when idle"
echo "exited when idle"

# 3. And activated again by the next call.
out=$(as_user bob busctl --system call "${MANAGER[@]}" ListRuns)
assert_eq "a(sossussitt) 0" "$out" "ListRuns of bob"
assert_eq active "$(systemctl is-active skilld.service)" "skilld after bob's call"
echo "activated again by bob's call"
wait_until 30 is_inactive || fail "skilld did not exit when idle again"

# 4. A policy that does not load: skilld --check-policy says where, and the service, started with
#    it anyway, refuses runs rather than guessing, and says why in its log.
printf 'limits:\n  memory:\n    default: 8G\n  bogus: 1\n' >"$SKILLD_POLICY"
out=$("$SKILLD_BIN" --check-policy "$SKILLD_POLICY" 2>&1) && fail "--check-policy accepted a bad policy"
assert_contains "$out" "$SKILLD_POLICY:4: limits.bogus: unknown key" "--check-policy"
assert_contains "$out" "$SKILLD_POLICY:3: limits.memory.default" "--check-policy"
hello=$(make_skill hello 'echo hello')
err=$(call alice run "$hello" 2>&1) && fail "a run was accepted under a bad policy"
assert_contains "$err" "io.skilld.Skilld1.Error.PolicyInvalid" "a run under a bad policy"
journalctl --sync
journalctl -b -u skilld.service -o cat --no-pager | grep -q "The admin policy does not load" ||
    fail "no log entry about the bad policy"
echo "bad policy: $err"
daemon_policy $'service:\n  idle-timeout: 3s'

# 5. The units.
units=()
while IFS= read -r f; do
    case $f in
    */systemd/system/skilld.service | */systemd/system/skilld.socket | */systemd/system/skilld.slice)
        units+=("$f") ;;
    esac
done </usr/lib/skilld-vm/installed.list
[[ ${#units[@]} -eq 3 ]] || fail "expected 3 installed units, found: ${units[*]}"
verify=$(systemd-analyze verify --man=no "${units[@]}" 2>&1) || fail "systemd-analyze verify failed: $verify"
[[ -z "$verify" ]] || fail "systemd-analyze verify complained: $verify"
echo "systemd-analyze verify: clean (${units[*]})"

security=$(systemd-analyze security --no-pager skilld.service 2>&1) || true
echo "$security" | tail -n 3
score=$(sed -n 's/.*Overall exposure level for skilld.service: *\([0-9.]*\).*/\1/p' <<<"$security")
[[ -n "$score" ]] || fail "systemd-analyze security printed no score"
echo "systemd-analyze security skilld.service: exposure $score"
