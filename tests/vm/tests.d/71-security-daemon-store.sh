#!/bin/bash
# The daemon's adversarial cases on its results store (tests/security/daemon/README.md): D10,
# corrupted records (truncated JSON, a symlink in place of a run directory, a record claiming
# another id, a name that is no run id) are quarantined at start while the good records stay
# listed and readable, and nothing is written through the symlink; D11, a full store (a small
# tmpfs mounted over the state directory, filled): new runs are refused with NoSpace, a run whose
# artifacts hit the full disk ends final without killing the daemon, completed results stay
# byte for byte, and once space is freed runs succeed again.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
cleanup() {
    systemctl stop skilld.service || true
    if mountpoint -q "$SKILLD_STATE"; then
        umount "$SKILLD_STATE"
    fi
    rm -rf /var/lib/skilld-vm-d10
}
trap cleanup EXIT
daemon_policy $'service:\n  idle-timeout: 120s\nstore:\n  min-free: 4M\n  min-free-percent: 0'

hello=$(make_skill hello 'echo "hello $1"; echo "artifact of $1" >"$SANDBOX_FILES_DIR/a.txt"')
# record_sums ID: the hashes of a record's files but state.json (which start-up may rewrite).
record_sums() {
    (cd "$SKILLD_STATE/runs/$1" && find . -type f ! -name state.json -print0 | sort -z |
        xargs -0 sha256sum)
}

# D10. Records corrupted while the service is down.
good=$(call alice run --wait "$hello" good | head -n 1)
good_sums=$(record_sums "$good")
systemctl stop skilld.service
runs=$SKILLD_STATE/runs
mk_id() {
    od -An -N16 -tx1 /dev/urandom | tr -d ' \n'
}
truncated=$(mk_id)
cp -a "$runs/$good" "$runs/$truncated"
head -c 20 "$runs/$good/request.json" >"$runs/$truncated/request.json"
other=$(mk_id)
cp -a "$runs/$good" "$runs/$other"  # its request.json still names $good
linked=$(mk_id)
# Outside the store, where the service can see it (not under /tmp or /root).
outside=/var/lib/skilld-vm-d10
rm -rf "$outside"
mkdir -m 0700 "$outside"
cp -a "$runs/$good/." "$outside/"
sed -i "s/$good/$linked/" "$outside/request.json"
rm -f "$outside/state.json"  # start-up would write one into a record without it
outside_before=$(cd "$outside" && find . -printf '%p %s %T@\n' | sort)
ln -s "$outside" "$runs/$linked"
mkdir "$runs/not-a-run-id"
echo junk >"$runs/not-a-run-id/request.json"

as_user alice busctl --system call "${MANAGER[@]}" ListRuns >/dev/null
pid=$(daemon_main_pid)
list=$(as_user alice busctl --system call "${MANAGER[@]}" ListRuns)
assert_contains "$list" "$good" "alice's runs after the corrupted start"
for bad in "$truncated" "$other" "$linked"; do
    [[ $list != *"$bad"* ]] || fail "the bad record $bad is listed: $list"
    [[ ! -e $runs/$bad && ! -L $runs/$bad ]] || fail "the bad record $bad is still in runs/"
    [[ -e $SKILLD_STATE/quarantine/$bad || -L $SKILLD_STATE/quarantine/$bad ]] ||
        fail "the bad record $bad is not in quarantine/: $(ls "$SKILLD_STATE/quarantine")"
done
[[ -e $SKILLD_STATE/quarantine/not-a-run-id ]] || fail "not-a-run-id was not quarantined"
assert_eq "$outside_before" "$(cd "$outside" && find . -printf '%p %s %T@\n' | sort)" \
    "the directory behind the symlinked record"
assert_eq 's "finished"' "$(run_prop "$good" State alice)" "the good run"
assert_eq "artifact of good" "$(call alice artifact "$good" a.txt)" "the good run's artifact"
assert_eq "$good_sums" "$(record_sums "$good")" "the good record's files"
journalctl --sync
journalctl -b -u skilld.service -o cat --no-pager | grep -q "4 unreadable ones quarantined" ||
    fail "no journal entry about the quarantine: $(journalctl -b -u skilld.service -o cat | tail -n 5)"
assert_eq "succeeded 0" "$(call bob run --wait "$hello" bob | tail -n 1)" "bob's run after D10"
assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid after D10"
echo "D10 4 bad records quarantined, the good one served, nothing written behind the symlink"

# D11. A 48M store, filled.
systemctl stop skilld.service
mount -t tmpfs -o size=48M,mode=0700 skilld-test-store "$SKILLD_STATE"
done_id=$(call alice run --wait "$hello" kept | head -n 1)
assert_eq 's "finished"' "$(run_prop "$done_id" State alice)" "the run before the disk filled"
kept_sums=$(record_sums "$done_id")
pid=$(daemon_main_pid)

# Full: below the policy's 4M, new runs are refused and make no record.
dd if=/dev/zero of="$SKILLD_STATE/filler" bs=1M 2>/dev/null || true
n=$(find "$runs" -mindepth 1 -maxdepth 1 | wc -l)
err=$(call bob run --wait "$hello" full 2>&1) && fail "a run was accepted on a full store: $err"
assert_contains "$err" "io.skilld.Skilld1.Error.NoSpace" "a run on a full store"
assert_eq "$n" "$(find "$runs" -mindepth 1 -maxdepth 1 | wc -l)" "records after the refusal"
echo "D11 full store: $err"

# Nearly full: 6M free, above the policy's 4M; the run writes a 16M artifact into it.
rm -f "$SKILLD_STATE/filler"
avail=$(($(stat -f -c '%a*%S' "$SKILLD_STATE")))
dd if=/dev/zero of="$SKILLD_STATE/filler" bs=1M count=$((avail / 1048576 - 6)) 2>/dev/null
big=$(make_skill big 'head -c 16777216 /dev/urandom >"$SANDBOX_FILES_DIR/big.bin" || exit 7; echo wrote')
id=$(call alice run "$big")
out=$(timeout 120 "$SKILLD_CALL" wait "$id") || fail "the run on a nearly full store did not end"
[[ $out == finished* || $out == interrupted* ]] || fail "the big run ended '$out'"
[[ $(run_prop "$id" Status alice) != 's "succeeded"' ]] ||
    [[ $(stat -c %s "$runs/$id/artifacts/big.bin" 2>/dev/null) == 16777216 ]] ||
    fail "the big run claims success without its artifact"
echo "D11 a run filling the store ended: $out"
assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid after the store filled"
assert_eq "$kept_sums" "$(record_sums "$done_id")" "the completed record's files"
assert_eq "artifact of kept" "$(call alice artifact "$done_id" a.txt)" "the completed run's artifact"

# Space back: runs succeed.
rm -f "$SKILLD_STATE/filler"
assert_eq "succeeded 0" "$(call bob run --wait "$hello" freed | tail -n 1)" "bob's run once space is back"
assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid at the end"
echo "D11 completed results intact, the daemon served again once space was freed"
