#!/bin/bash
# polkitd answers authorization checks and applies the rules in /etc/polkit-1/rules.d: the
# administrator carol holds the test action, alice does not. Each user checks a process of
# their own (polkit refuses checks about other users' processes from untrusted callers).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

action=org.skilld.vmtest.check
check_as() {
    # exec: the process checked is the one asking. $1 and $$ belong to the inner shell.
    # shellcheck disable=SC2016
    as_user "$1" sh -c 'exec pkcheck --action-id "$1" --process $$' sh "$action"
}

rc=0
out=$(check_as carol 2>&1) || rc=$?
echo "carol: exit $rc $out"
assert_eq 0 "$rc" "pkcheck exit status for carol"

rc=0
out=$(check_as alice 2>&1) || rc=$?
echo "alice: exit $rc $out"
assert_eq 1 "$rc" "pkcheck exit status for alice (1: not authorized)"
