#!/bin/sh
# Checks the files skilld installs for D-Bus, polkit and systemd: well-formed XML (and valid
# against polkit's DTD where installed), the whole API and all six actions present, and the
# unit and activation settings the issue fixes. Skipped (77) only when xmllint is missing.
#
# "systemd-analyze verify" on the units needs a running systemd; the VM suite (tests/vm/) does it.
set -eu

src=${SKILLD_SOURCE_ROOT:?}
build=${SKILLD_BUILD_ROOT:?}

if ! command -v xmllint >/dev/null 2>&1; then
    echo "xmllint not found (apt install libxml2-utils), skipping"
    exit 77
fi

fail=0
check() {
    if "$@" >/dev/null 2>&1; then
        echo "ok: $*"
    else
        echo "FAIL: $*"
        fail=1
    fi
}
# xpath_count FILE XPATH EXPECTED
xpath_count() {
    n=$(xmllint --xpath "count($2)" "$1" 2>/dev/null || echo error)
    if [ "$n" = "$3" ]; then
        echo "ok: $(basename "$1"): $2 = $3"
    else
        echo "FAIL: $(basename "$1"): $2 is $n, expected $3"
        fail=1
    fi
}
has_line() {
    if grep -qxF -- "$2" "$1"; then
        echo "ok: $(basename "$1") has '$2'"
    else
        echo "FAIL: $(basename "$1") lacks '$2'"
        fail=1
    fi
}

xml="$src/dbus/io.skilld.Skilld1.xml"
conf="$src/dbus/io.skilld.Skilld1.conf"
policy="$src/polkit/io.skilld.policy"

# Well-formed (xmllint never fetches the DTDs named in DOCTYPE without --valid).
check xmllint --noout "$xml"
check xmllint --noout "$conf"
check xmllint --noout "$policy"
if [ -r /usr/share/polkit-1/policyconfig-1.dtd ]; then
    check xmllint --noout --dtdvalid /usr/share/polkit-1/policyconfig-1.dtd "$policy"
fi

# The API of issue 5.
m='/node/interface[@name="io.skilld.Skilld1.Manager"]'
r='/node/interface[@name="io.skilld.Skilld1.Run"]'
for method in Run RunInstalled ListRuns ListAllRuns ListRunsFiltered GetRun ListSkills InstallSkill RemoveSkill BuildEnvironment; do
    xpath_count "$xml" "$m/method[@name=\"$method\"]" 1
done
xpath_count "$xml" "$m/method[@name=\"Run\"]/arg[@direction=\"in\"][1][@type=\"h\"]" 1
xpath_count "$xml" "$m/method[@name=\"Run\"]/arg[@direction=\"in\"][5][@type=\"a{sv}\"]" 1
xpath_count "$xml" "$m/method[@name=\"BuildEnvironment\"]/arg[@direction=\"in\"][1][@type=\"h\"]" 1
xpath_count "$xml" "$m/method[@name=\"BuildEnvironment\"]/arg[@direction=\"out\"][3][@type=\"as\"]" 1
xpath_count "$xml" "$m/signal[@name=\"RunStarted\"]" 1
xpath_count "$xml" "$m/signal[@name=\"RunFinished\"]/arg" 4
for method in Cancel ListArtifacts GetOutcome OpenArtifact OpenLog ReadArtifact ReadLog Remove; do
    xpath_count "$xml" "$r/method[@name=\"$method\"]" 1
done
for prop in Id Skill SkillHash Script Owner State ExitCode Signal Result Unit CreatedTimestamp \
            StartedTimestamp FinishedTimestamp Usage; do
    xpath_count "$xml" "$r/property[@name=\"$prop\"][@access=\"read\"]" 1
done
xpath_count "$xml" '//property[@access!="read"]' 0

# Bus policy: root alone owns the name; others reach a whitelist of interfaces only.
xpath_count "$conf" '//allow[@own]' 1
xpath_count "$conf" '/busconfig/policy[@user="root"]/allow[@own="io.skilld.Skilld1"]' 1
xpath_count "$conf" '/busconfig/policy[@context="default"]/allow[not(@send_interface)]' 0
xpath_count "$conf" '/busconfig/policy[@context="default"]/allow[@send_interface="org.freedesktop.DBus.Properties"][not(@send_member)]' 0

# polkit: the seven actions, each with the SECURITY comment right before it.
for action in run run-unlisted network raise-limits manage-skills manage-runs build-environment; do
    xpath_count "$policy" "/policyconfig/action[@id=\"io.skilld.$action\"]" 1
    xpath_count "$policy" "/policyconfig/action[@id=\"io.skilld.$action\"]/preceding-sibling::comment()[1][starts-with(normalize-space(.), \"SECURITY:\")]" 1
done
xpath_count "$policy" '/policyconfig/action' 7
for action in network raise-limits manage-skills manage-runs; do
    xpath_count "$policy" "/policyconfig/action[@id=\"io.skilld.$action\"]/defaults/*[. != \"auth_admin_keep\"]" 0
done

# Building for everyone: an admin's decision, remembered only for the active session.
xpath_count "$policy" '/policyconfig/action[@id="io.skilld.build-environment"]/defaults/allow_any[. = "auth_admin"]' 1
xpath_count "$policy" '/policyconfig/action[@id="io.skilld.build-environment"]/defaults/allow_inactive[. = "auth_admin"]' 1
xpath_count "$policy" '/policyconfig/action[@id="io.skilld.build-environment"]/defaults/allow_active[. = "auth_admin_keep"]' 1

# Activation file and units.
svc="$src/dbus/io.skilld.Skilld1.service"
has_line "$svc" "[D-BUS Service]"
has_line "$svc" "Name=io.skilld.Skilld1"
has_line "$svc" "Exec=/bin/false"
has_line "$svc" "User=root"
has_line "$svc" "SystemdService=dbus-io.skilld.Skilld1.service"

unit="$build/units/skilld.service"
has_line "$unit" "Type=dbus"
has_line "$unit" "BusName=io.skilld.Skilld1"
if grep -q '^ExecStart=/.*/skilld$' "$unit" && ! grep -q '@[a-z]*dir@' "$unit"; then
    echo "ok: skilld.service: ExecStart configured"
else
    echo "FAIL: skilld.service: ExecStart not configured"; fail=1
fi
if grep -q '^\[Install\]' "$unit"; then
    echo "FAIL: skilld.service must have no [Install] section"; fail=1
else
    echo "ok: skilld.service has no [Install]"
fi
has_line "$src/units/skilld.socket" "ListenStream=/run/skilld/bus"
has_line "$src/units/skilld.socket" "Service=skilld.service"
has_line "$src/units/skilld.slice" "[Slice]"
has_line "$src/units/tmpfiles-skilld.conf" "d /var/lib/skilld            0700 root root -"

# Service accounts: the group, and the rule granting its members the two run actions only (its
# syntax checked by node where installed: polkitd would skip a rule file that does not parse).
has_line "$src/units/sysusers-skilld.conf" "g skilld -"
rules="$src/polkit/60-skilld-group.rules"
if [ "$(grep -o 'action.id == "io\.skilld\.[a-z-]*"' "$rules" | sort | tr '\n' ' ')" = \
     'action.id == "io.skilld.run" action.id == "io.skilld.run-unlisted" ' ] &&
   grep -q 'subject.isInGroup("skilld")' "$rules"; then
    echo "ok: 60-skilld-group.rules grants the group skilld io.skilld.run and io.skilld.run-unlisted"
else
    echo "FAIL: 60-skilld-group.rules does not grant exactly the two run actions to the group skilld"; fail=1
fi
if command -v node >/dev/null 2>&1; then
    check sh -c "node --check <'$rules'"
fi

exit $fail
