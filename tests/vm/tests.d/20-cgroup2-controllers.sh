#!/bin/bash
# The unified hierarchy is mounted and the controllers skilld's limits rely on are enabled for
# system.slice, unlike on the build machines (v2 without controllers).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

assert_eq cgroup2fs "$(stat -f -c %T /sys/fs/cgroup)" "filesystem type of /sys/fs/cgroup"
controllers=$(cat /sys/fs/cgroup/cgroup.controllers)
echo "controllers: $controllers"
for c in cpu memory pids io; do
    [[ " $controllers " == *" $c "* ]] || fail "controller $c missing from cgroup.controllers"
done
