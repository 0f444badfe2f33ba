#!/bin/bash
# Every file meson installs (its own list, written by the host at image time) is in the image,
# with the install's paths: what packagers would ship is what the other tests run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

n=0
missing=()
while IFS= read -r f; do
    n=$((n + 1))
    [[ -e "$f" || -L "$f" ]] || missing+=("$f")
done </usr/lib/skilld-vm/installed.list
[[ $n -gt 0 ]] || fail "installed.list is empty: meson installed nothing"
[[ ${#missing[@]} -eq 0 ]] || fail "installed files missing from the image: ${missing[*]}"
echo "$n installed files present"
