#!/bin/bash
# The memory limit is enforced, not just written: a 100 MB allocation in a 32M scope is killed
# by the kernel's memory cgroup OOM killer (SIGKILL, and the kernel says which cgroup).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

unit=skilld-vm-oom-$$.scope
rc=0
# bytes * n writes every page, unlike bytearray(n) whose zero pages are never touched.
systemd-run --quiet --scope --unit="$unit" -p MemoryMax=32M -p MemorySwapMax=0 -- \
    python3 -c 'b = b"x" * (100 << 20); print("allocated", len(b))' || rc=$?
assert_eq 137 "$rc" "exit status of the allocation (128 + SIGKILL)"
kmsg=$(journalctl -k --no-pager -o cat --grep "oom_memcg=/system.slice/$unit" || true)
echo "$kmsg"
assert_contains "$kmsg" "oom_memcg=/system.slice/$unit" "kernel log"
