#!/bin/bash
# The test users exist (etc/sysusers.d/skilld-vm.conf): alice and bob unprivileged, carol an
# administrator through group sudo, each with a home and able to run commands.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

for u in alice bob carol; do
    getent passwd "$u" >/dev/null || fail "user $u does not exist"
    assert_eq "$u" "$(as_user "$u" id -un)" "id -un as $u"
    assert_eq "$u" "$(stat -c %U "/home/$u")" "owner of /home/$u"
    [[ $(id -u "$u") -ge 1000 ]] || fail "$u has a system uid"
done
for u in alice bob; do
    ! id -nG "$u" | tr ' ' '\n' | grep -qx sudo || fail "$u must not be in group sudo"
done
id -nG carol | tr ' ' '\n' | grep -qx sudo || fail "carol is not in group sudo"
id alice bob carol
