#!/bin/bash
# Writes what each in-VM test took in the last whole run of BUILD_DIR (its TAP logs under
# BUILD_DIR/tests/vm/last/) into the table that deals the tests out to the VMs
# (rootfs/usr/lib/skilld-vm/durations, read by run-tests): run it after tests are added or have
# grown, and commit the table. Seconds under TCG on the machine that ran them; only their
# proportions matter. The table is replaced whole, or not at all.
#
# Usage: tests/vm/update-durations.sh BUILD_DIR
set -euo pipefail

die() {
    echo "update-durations: $*" >&2
    exit 1
}

[[ $# -eq 1 ]] || die "usage: $0 BUILD_DIR"
logs=("$1"/tests/vm/last/shard-*/tap.log)
[[ -f ${logs[0]} ]] || die "no TAP logs of a sharded run in $1/tests/vm/last/shard-*/: run 'tests/vm/run-vm.sh $1' first"
table="$(dirname "$0")/rootfs/usr/lib/skilld-vm/durations"
tmp=$(mktemp "$table.XXXXXX")
trap 'rm -f "$tmp"' EXIT

{
    echo "# What each in-VM test took (seconds, TCG) in a whole run, for run-tests to deal the tests out"
    echo "# to the VMs booted side by side. Written by tests/vm/update-durations.sh; a test not"
    echo "# listed counts as 60 s."
    # run-tests ends each test with "# NAME: exit RC after SECONDS s". A test that skipped (77:
    # debian-package where the build was installed with meson) keeps what the table said.
    awk 'FILENAME == table { if ($0 !~ /^#/ && NF == 2) old[$1] = $2; next }
         /^# [^ ]+: exit [0-9]+ after [0-9.]+ s$/ {
             name = $2; sub(/:$/, "", name)
             secs = ($4 == 77 && name in old) ? old[name] : int($6 + 0.5)
             printf "%s %d\n", name, secs
         }' table="$table" "$table" "${logs[@]}" | sort
} >"$tmp"
[[ $(grep -vc '^#' "$tmp") -gt 0 ]] || die "the logs in $1/tests/vm/last/ name no finished test"
chmod 0644 "$tmp"
mv "$tmp" "$table"
trap - EXIT
echo "update-durations: $(grep -vc '^#' "$table") tests in $table"
