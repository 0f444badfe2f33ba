#!/bin/bash
# The system bus is up with systemd and logind on it, and polkit is activatable on demand, as
# the daemon's D-Bus activation and authorization will need.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

names=$(busctl --system list --no-legend --acquired | awk '{ print $1 }')
activatable=$(busctl --system list --no-legend --activatable | awk '{ print $1 }')
for n in org.freedesktop.systemd1 org.freedesktop.login1; do
    grep -qx "$n" <<<"$names" || fail "$n is not on the system bus"
done
grep -qx org.freedesktop.PolicyKit1 <<<"$names$activatable" ||
    fail "org.freedesktop.PolicyKit1 is neither on the bus nor activatable"
echo "system bus: systemd1, login1, PolicyKit1 present"
