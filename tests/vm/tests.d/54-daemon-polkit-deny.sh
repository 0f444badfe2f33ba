#!/bin/bash
# An admin's polkit rule denying io.skilld.run-unlisted to alice: her ad-hoc run (a skill passed
# by fd) fails with an authorization error, while she may still run an installed skill
# (io.skilld.run), and bob is not affected. Then a rule keyed on the skill_hash detail (the
# documented one) refuses bob that very skill.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s'

rules=/etc/polkit-1/rules.d/55-skilld-deny-alice.rules
hash_rules=/etc/polkit-1/rules.d/54-skilld-deny-hash.rules
cleanup() {
    rm -f "$rules" "$hash_rules"
    systemctl restart polkit.service
    busctl --system call "${MANAGER[@]}" RemoveSkill s greeter >/dev/null 2>&1 || true
}
trap cleanup EXIT
cat >"$rules" <<'RULES'
polkit.addRule(function(action, subject) {
    if (action.id == "io.skilld.run-unlisted" && subject.user == "alice")
        return polkit.Result.NO;
    return polkit.Result.NOT_HANDLED;
});
RULES
systemctl restart polkit.service

greeter=$(make_skill greeter 'echo "hi $1"')
"$SKILLD_CALL" install "$greeter" >/dev/null

err=$(call alice run --wait "$greeter" alice 2>&1) && fail "alice ran an unlisted skill: $err"
assert_contains "$err" "org.freedesktop.DBus.Error.AccessDenied" "alice's ad-hoc run"
assert_contains "$err" "io.skilld.run-unlisted" "alice's ad-hoc run"
echo "alice's ad-hoc run: $err"

mapfile -t lines < <(call alice run-installed --stdout --wait greeter alice)
assert_eq "hi alice" "${lines[1]:-}" "alice's run of the installed skill"
assert_eq "succeeded 0" "${lines[2]:-}" "alice's run of the installed skill"
echo "alice's run of the installed greeter: ${lines[*]:1}"

out=$(call bob run --wait "$greeter" bob | tail -n 1)
assert_eq "succeeded 0" "$out" "bob's ad-hoc run"
echo "bob's ad-hoc run: $out"

hash=$(skillctl skill show --json "$greeter" | python3 -c 'import json, sys; print(json.load(sys.stdin)["content_hash"])')
cat >"$hash_rules" <<RULES
polkit.addRule(function(action, subject) {
    if (action.id == "io.skilld.run-unlisted" && subject.user == "bob" &&
        action.lookup("skill_hash") == "$hash")
        return polkit.Result.NO;
    return polkit.Result.NOT_HANDLED;
});
RULES
systemctl restart polkit.service
err=$(call bob run --wait "$greeter" bob 2>&1) && fail "bob ran a skill whose skill_hash a rule refuses: $err"
assert_contains "$err" "org.freedesktop.DBus.Error.AccessDenied" "bob's run of the refused hash"
echo "a rule on skill_hash $hash refused bob's run: $err"
