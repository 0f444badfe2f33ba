#!/bin/bash
# The Debian packages, installed at boot by `apt-get install ./*.deb` with nothing else done
# (test-main, when run-vm.sh ran with SKILLD_VM_INSTALL=deb): the install succeeded offline on the
# clean image; nothing was enabled or started; tmpfiles.d made the state directories; dbus's
# trigger reloaded the bus, which now activates skilld; systemd's trigger indexed the journal
# catalog; alice runs a skill through the activated service with skillctl. Then removing the
# package stops the running service and the bus forgets the name, skillctl alone then runs
# embedded without a notice (the notice only where skilld is installed), and installing it again
# brings everything back for the tests after this one.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

debs=/usr/lib/skilld-vm/debs
[[ -f /var/log/skilld-vm/deb-install.rc ]] ||
    skip "the project was installed by meson, not packaged (run-vm.sh with SKILLD_VM_INSTALL=deb)"
rc=$(cat /var/log/skilld-vm/deb-install.rc)
if [[ $rc != 0 ]]; then
    cat /var/log/skilld-vm/deb-install.log
    fail "apt-get install ./*.deb exited with $rc"
fi
grep -E '^(Setting up|Processing triggers)' /var/log/skilld-vm/deb-install.log

for p in skilld skillctl; do
    assert_eq "install ok installed" "$(dpkg-query -W -f '${Status}' "$p")" "dpkg status of $p"
done

# Activated, never enabled or started by the install.
assert_eq static "$(systemctl is-enabled skilld.service || true)" "skilld.service is-enabled"
assert_eq disabled "$(systemctl is-enabled skilld.socket || true)" "skilld.socket is-enabled"
is_inactive || fail "the install started skilld.service"
systemctl -q is-active skilld.socket && fail "the install started skilld.socket"

# tmpfiles.d at configure time.
assert_eq "700 root" "$(stat -c '%a %U' /var/lib/skilld)" "/var/lib/skilld"
assert_eq "755 root" "$(stat -c '%a %U' /run/skilld)" "/run/skilld"

# The bus read the new policy and activation file (dbus's trigger), polkit the actions.
activatable() {
    busctl --system --activatable list --no-legend | awk '{ print $1 }' | grep -qx io.skilld.Skilld1
}
activatable || fail "the system bus does not know io.skilld.Skilld1 after the install"
pkaction --action-id io.skilld.run >/dev/null || fail "polkit does not know io.skilld.run"

# The journal catalog (systemd's trigger ran journalctl --update-catalog; it works again).
journalctl --update-catalog || fail "journalctl --update-catalog failed"
for id in c871a814389e4cdaa7427a87e16c8d1e 7bf39efccf71417b96c57cdfcf31c58d; do
    journalctl --list-catalog "$id" | grep -q " skilld: Run" ||
        fail "the catalog has no skilld entry for $id: $(journalctl --list-catalog "$id" 2>&1)"
done
echo "catalog: $(journalctl --list-catalog | grep -c ' skilld: ') skilld entries"

# alice, with the run grant her desktop session would give her (runuser has no active session,
# see tests/vm/README.md), runs a skill through the service the bus activates.
daemon_setup
mkdir -p alice-work
chown alice: alice-work
cd alice-work
as_user alice mkdir -p hello/scripts
as_user alice sh -c 'printf -- "---\nname: hello\ndescription: Says hello.\n---\n\n# hello\n" >hello/SKILL.md'
as_user alice sh -c 'printf "#!/bin/sh\necho hello from the packaged service\n" >hello/scripts/main.sh'
chmod 0755 hello/scripts/main.sh
out=$(as_user alice skillctl run --system ./hello 2>&1) || fail "alice's run failed: $out"
assert_contains "$out" "hello from the packaged service" "alice's run"
systemctl -q is-active skilld.service || fail "skilld.service is not active after alice's run"
journalctl --sync
explained=$(journalctl -b -x -u skilld.service --no-pager MESSAGE_ID=7bf39efccf71417b96c57cdfcf31c58d)
grep -q 'Subject: Run .* of skill hello ended: succeeded' <<<"$explained" ||
    fail "journalctl -x does not explain the end of alice's run: $explained"
echo "alice ran through the activated service: $(tail -n 1 <<<"$out")"
# Her run, by the id list --quiet gives (as the completions ask), removed: the tests after this
# one expect a store without her runs.
ids=$(as_user alice skillctl list --quiet) || fail "skillctl list --quiet failed"
[[ $ids =~ ^[0-9a-f]{32}$ ]] || fail "list --quiet did not give alice's one run id: '$ids'"
as_user alice skillctl rm "$ids" || fail "alice could not remove her run $ids"

# With skilld installed, a run that finds no service (no bus here) says it runs embedded.
nobus=(env DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent SKILLD_BUS_ADDRESS=unix:path=/nonexistent)
out=$(as_user alice "${nobus[@]}" skillctl run ./hello 2>&1) || fail "alice's embedded run failed: $out"
assert_contains "$out" "the skilld service is installed but did not answer, running embedded" \
    "an embedded run where skilld is installed"
cd ..

# Removal stops the running service; the bus forgets the name.
DEBIAN_FRONTEND=noninteractive apt-get remove -y skilld >removal.log 2>&1 || {
    cat removal.log
    fail "apt-get remove skilld failed"
}
is_inactive || fail "skilld.service still runs after the package was removed"
wait_until 10 sh -c '! busctl --system --activatable list --no-legend | grep -q io.skilld.Skilld1' ||
    fail "the bus still activates io.skilld.Skilld1 after removal"
echo "removed: service stopped, name gone from the bus"

# skillctl alone (a desktop without the service): embedded runs, and not a word about it.
out=$(cd alice-work && as_user alice "${nobus[@]}" skillctl run ./hello 2>&1) ||
    fail "alice's embedded run without skilld failed: $out"
assert_contains "$out" "hello from the packaged service" "an embedded run without skilld"
[[ $out != *embedded* ]] || fail "skillctl without skilld spoke of running embedded: $out"
echo "skillctl alone runs embedded without a notice"

# And back, for the tests that follow.
(cd "$debs" && DEBIAN_FRONTEND=noninteractive apt-get install -y ./skilld_*.deb) \
    >reinstall.log 2>&1 || { cat reinstall.log; fail "reinstalling skilld failed"; }
wait_until 10 activatable || fail "the bus does not activate io.skilld.Skilld1 after reinstalling"
echo "reinstalled"
