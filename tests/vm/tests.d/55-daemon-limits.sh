#!/bin/bash
# Limits above the policy's defaults need io.skilld.raise-limits (alice has not got it, carol
# has); above the policy's maximums nobody gets them, root included.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s\nlimits:\n  memory:\n    default: 256M\n    max: 1G'

hello=$(make_skill hello 'echo hello')

out=$(call alice run --wait --limit memory=268435456 "$hello" | tail -n 1)
assert_eq "succeeded 0" "$out" "alice at the default"

err=$(call alice run --wait --limit memory=536870912 "$hello" 2>&1) && fail "alice raised a limit: $err"
assert_contains "$err" "io.skilld.raise-limits" "alice above the default"
echo "alice above the default: $err"

out=$(call carol run --wait --limit memory=536870912 "$hello" | tail -n 1)
assert_eq "succeeded 0" "$out" "carol above the default"
id=$(call carol run --wait --limit memory=536870912 "$hello" | head -n 1)
assert_contains "$(run_prop "$id" Limits carol)" '"memory" 536870912' "the Limits of carol's run"
echo "carol above the default: $out"

for user in alice carol root; do
    err=$(call "$user" run --wait --limit memory=2147483648 "$hello" 2>&1) && fail "$user went above the max"
    assert_contains "$err" "io.skilld.Skilld1.Error.LimitExceeded" "$user above the maximum"
done
echo "above the maximum: $err"

err=$(call alice run --wait --limit bogus=1 "$hello" 2>&1) && fail "an unknown limit was accepted"
assert_contains "$err" "org.freedesktop.DBus.Error.InvalidArgs" "an unknown limit"
echo "unknown limit: $err"
