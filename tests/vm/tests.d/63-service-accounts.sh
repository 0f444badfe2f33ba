#!/bin/bash
# Service accounts: the shipped group "skilld" (sysusers.d) and polkit rule (60-skilld-group.rules)
# let a system user with no login session run skills through the service, installed ones
# (io.skilld.run) and ad-hoc ones (io.skilld.run-unlisted), from runuser and from a systemd unit;
# a system user outside the group is refused both. The rule is the shipped file, read by polkitd
# from the package's rules directory; nothing of the test rig's own rules grants these users.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

[[ -x $SKILLD_BIN ]] || skip "skilld is not installed at $SKILLD_BIN yet"
daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s'

rules=$SKILLD_PREFIX/share/polkit-1/rules.d/60-skilld-group.rules
sysusers=/usr/lib/sysusers.d/skilld.conf
[[ -f $rules ]] || fail "the group rule is not installed at $rules"
[[ -f $sysusers ]] || fail "the group is not declared in $sysusers"

cleanup() {
    userdel svc-agent 2>/dev/null || true
    userdel svc-other 2>/dev/null || true
    skillctl skill remove svc-greeter >/dev/null 2>&1 || true
}
trap cleanup EXIT

# What a package's postinst does (dh_installsysusers): the group, empty.
systemd-sysusers "$sysusers"
getent group skilld >/dev/null || fail "systemd-sysusers did not create the group skilld"
assert_eq "" "$(getent group skilld | cut -d: -f4)" "the members of the new group"

for u in svc-agent svc-other; do
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$u"
    install -d -o "$u" -m 0755 "$PWD/$u"
done
usermod -a -G skilld svc-agent
echo "svc-agent: $(id svc-agent); svc-other: $(id svc-other)"

greeter=$(make_skill svc-greeter 'echo "hello $1"')
skillctl skill install "$greeter" >/dev/null
make_skill svc-adhoc 'echo "ad hoc $1"' >/dev/null

# as USER ARGS...: skillctl through the service as USER, from runuser: no logind session.
as() {
    local u=$1
    shift
    rc=0
    (cd "$PWD/$u" && runuser -u "$u" -- skillctl "$@") >"$PWD/out" 2>"$PWD/err" || rc=$?
}

as svc-agent run --system svc-greeter -- agent
assert_eq 0 "$rc" "svc-agent's run of an installed skill (io.skilld.run): $(cat "$PWD/err")"
assert_contains "$(cat "$PWD/out")" "hello agent" "svc-agent's run of an installed skill"
as svc-agent run --system "$PWD/svc-adhoc" -- agent
assert_eq 0 "$rc" "svc-agent's ad-hoc run (io.skilld.run-unlisted): $(cat "$PWD/err")"
assert_contains "$(cat "$PWD/out")" "ad hoc agent" "svc-agent's ad-hoc run"
sessions=$(loginctl list-sessions --no-legend | awk '{print $3}')
[[ $sessions != *svc-agent* ]] || fail "svc-agent has a login session: $sessions"
echo "svc-agent ran both skills without a session"

# As a system service would: a transient unit of svc-agent.
out=$(systemd-run --quiet --wait --pipe --uid=svc-agent -p WorkingDirectory="$PWD/svc-agent" \
    skillctl run --system -q svc-greeter -- unit)
assert_contains "$out" "hello unit" "svc-agent's run from a systemd unit"
echo "svc-agent ran a skill from a systemd unit: $out"

# Outside the group the shipped defaults apply: auth_admin, which needs an agent nobody runs here.
refused() {
    [[ $rc != 0 ]] || fail "svc-other, outside the group, ran a skill ($1)"
    grep -Eq "authentication is required|not authorized" "$PWD/err" ||
        fail "svc-other's $1 failed, but not for authorization: $(cat "$PWD/err")"
    ! grep -q "svc-other\|other" "$PWD/out" || fail "svc-other's $1 ran: $(cat "$PWD/out")"
}
as svc-other run --system svc-greeter -- other
refused "run of an installed skill"
as svc-other run --system "$PWD/svc-adhoc" -- other
refused "ad-hoc run"
echo "svc-other was refused: $(head -n 1 "$PWD/err")"

# The group grants runs only: not installing skills.
as svc-agent skill install "$greeter" --replace
[[ $rc != 0 ]] || fail "svc-agent installed a skill"
echo "svc-agent may not install skills: $(head -n 1 "$PWD/err")"
