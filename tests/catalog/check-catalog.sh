#!/bin/bash
# The journal catalog covers every MESSAGE_ID the sources define (SKILLD_MESSAGE_* in C headers),
# has no entry for an ID nothing logs, and is read by journalctl itself: `journalctl --root
# --update-catalog` indexes it into a scratch root and `--list-catalog` lists each ID with its
# subject. Skipped (77) without journalctl.
#
# Usage: check-catalog.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
src=$1
scratch=$2/catalog-check
catalog="$src/catalog/skilld.catalog"
fail=0

mapfile -t defined < <(grep -rhoE '#define +SKILLD_MESSAGE_[A-Z_]+ +"[0-9a-f]{32}"' \
    "$src/skilld" "$src/skillctl" | grep -oE '[0-9a-f]{32}' | sort -u)
mapfile -t entries < <(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$catalog" | sort)
[[ ${#defined[@]} -gt 0 ]] || { echo "FAIL: no SKILLD_MESSAGE_* defined in the sources" >&2; exit 1; }
for id in "${defined[@]}"; do
    grep -qx "$id" < <(printf '%s\n' "${entries[@]}") ||
        { echo "FAIL: MESSAGE_ID $id is logged but has no entry in $catalog" >&2; fail=1; }
done
for id in "${entries[@]}"; do
    grep -qx "$id" < <(printf '%s\n' "${defined[@]}") ||
        { echo "FAIL: $catalog has an entry for $id, which nothing logs" >&2; fail=1; }
done
[[ $(printf '%s\n' "${entries[@]}" | uniq -d) == "" ]] ||
    { echo "FAIL: $catalog has an ID twice" >&2; fail=1; }
echo "${#defined[@]} MESSAGE_IDs, ${#entries[@]} catalog entries"

if ! command -v journalctl >/dev/null; then
    echo "SKIP: journalctl is not installed; the IDs match but the file was not parsed" >&2
    exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch/usr/lib/systemd/catalog"
cp "$catalog" "$scratch/usr/lib/systemd/catalog/"
journalctl --root="$scratch" --update-catalog
listed=$(journalctl --root="$scratch" --list-catalog)
for id in "${defined[@]}"; do
    line=$(grep "^$id " <<<"$listed") || { echo "FAIL: journalctl did not index $id" >&2; fail=1; continue; }
    [[ $line == *"skilld: Run @SKILLD_RUN_ID@"* || $line == *"skilld: Environment for skill @SKILL_NAME@"* ]] ||
        { echo "FAIL: $id is indexed without skilld's subject: $line" >&2; fail=1; }
    echo "$line"
done
rm -rf "$scratch"
exit "$fail"
