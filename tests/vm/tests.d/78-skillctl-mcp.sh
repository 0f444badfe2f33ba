#!/bin/bash
# skillctl mcp through the installed skilld (D-Bus activated on the system bus, polkit asked,
# runs in systemd scopes), as alice, whom a rule lets run skills: the service's installed skill
# listed and run by name with its output exact, a vendor skill's files offered and the skill run
# by name, a folder skill run through the service, an
# artifact read back, a cancelled request cancelling the service's run. The checks are
# tests/mcp/test-mcp-service.py's, which the sandbox suite runs against a private service.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

skilld=$SKILLD_PREFIX/libexec/skilld
[[ -x $skilld ]] || skip "skilld is not installed at $skilld yet"

rule=/etc/polkit-1/rules.d/60-skillctl-mcp-test.rules
cat >"$rule" <<'RULES'
polkit.addRule(function(action, subject) {
    if ((action.id == "io.skilld.run" || action.id == "io.skilld.run-unlisted") && subject.user == "alice")
        return polkit.Result.YES;
});
RULES
work=$(mktemp -d)
chmod 0755 "$work"
vendor=$SKILLD_PREFIX/share/skilld/skills
cleanup() {
    rm -f "$rule"
    rm -rf "$vendor/vendor-echo"
    skillctl skill remove svc-only >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
# shellcheck disable=SC2016
for _ in $(seq 50); do
    as_user alice sh -c 'exec pkcheck --action-id io.skilld.run-unlisted --process $$' >/dev/null 2>&1 && break
    sleep 0.2
done

# The installed skill (root installs without polkit): exact-output under another name.
cp -r "$SKILLD_SOURCE_ROOT/tests/mcp/skills/exact-output" "$work/svc-only"
sed -i 's/^name: exact-output$/name: svc-only/' "$work/svc-only/SKILL.md"
skillctl skill install --replace "$work/svc-only"
# A skill shipped by a package: world-readable where the service finds it.
mkdir -p "$vendor"
cp -r "$SKILLD_SOURCE_ROOT/tests/mcp/skills/echo-input" "$vendor/vendor-echo"
sed -i 's/^name: echo-input$/name: vendor-echo/' "$vendor/vendor-echo/SKILL.md"
chmod -R a+rX "$vendor"

cd "$work"
as_user alice /usr/bin/python3 "$SKILLD_SOURCE_ROOT/tests/mcp/test-mcp-service.py" --system-bus \
    "$(command -v skillctl)" "$SKILLD_SOURCE_ROOT/tests/mcp/skills"
