#!/bin/bash
# skillctl as installed by `meson install` is on PATH, runs on this system's libraries and
# reports the version of the build that was installed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

path=$(command -v skillctl) || fail "skillctl is not on PATH"
assert_eq "$SKILLD_PREFIX/bin/skillctl" "$path" "skillctl location"
out=$(skillctl --version)
echo "$out"
assert_contains "$out" "$SKILLD_VERSION" "skillctl --version"
