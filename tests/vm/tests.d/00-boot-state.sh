#!/bin/bash
# The platform itself: systemd is PID 1 and no unit failed while booting, so that a later test
# failure is about skilld, not about a broken image.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

assert_eq systemd "$(cat /proc/1/comm)" "PID 1"
systemctl --version | head -n 1
failed=$(systemctl list-units --state=failed --no-legend --plain |
    grep -v '^skilld-vm-test' || true)
[[ -z "$failed" ]] || fail "units failed during boot: $failed"
