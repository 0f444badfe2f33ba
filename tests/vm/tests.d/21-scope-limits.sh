#!/bin/bash
# A transient scope with memory, task and CPU limits, as skilld will create for every run: the
# limits systemd was given are what the kernel's cgroup files of the scope hold.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

unit=skilld-vm-limits-$$.scope
# shellcheck disable=SC2016 # expanded by the shell inside the scope
out=$(systemd-run --quiet --scope --unit="$unit" -p MemoryMax=64M -p TasksMax=10 \
    -p CPUQuota=50% -- bash -c '
    cg=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)
    echo "cgroup=$cg"
    echo "memory.max=$(cat "$cg/memory.max")"
    echo "pids.max=$(cat "$cg/pids.max")"
    echo "cpu.max=$(cat "$cg/cpu.max")"')
echo "$out"
assert_contains "$out" "cgroup=/sys/fs/cgroup/system.slice/$unit" "scope cgroup"
assert_contains "$out" "memory.max=67108864" "memory.max"
assert_contains "$out" "pids.max=10" "pids.max"
assert_contains "$out" "cpu.max=50000 100000" "cpu.max"
