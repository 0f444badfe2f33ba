#!/bin/bash
# Sessions through the real service, as alice and bob: three runs of a counting skill in alice's
# session print 1, 2, 3 and exec sees the file; a run without it starts clean; bob cannot see,
# use or remove alice's session (access errors), carol (io.skilld.manage-runs) lists and removes
# it; it survives `systemctl restart skilld`; it expires after its idle TTL; its quota (from the
# policy) holds while a run writes; after rm its files are gone and using it is an error.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 60s\nsessions:\n  quota:\n    default: 1M'

work=$PWD
cp -r "$SKILLD_SOURCE_ROOT/tests/sandbox/skills/counter" "$work/counter"
chmod -R a+rX "$work"
for u in alice bob carol; do
    install -d -o "$u" -m 0755 "$work/$u"
done

# 1. alice's session, through the service: 1, 2, 3.
as_in alice skillctl session create --system "$work/counter"
show_last
assert_eq 0 "$rc" "session create --system"
sid=$(cat "$work/out")
[[ $sid =~ ^[0-9a-f]{32}$ ]] || fail "no session id: '$sid'"
[[ -d $SKILLD_STATE/sessions/$sid/work ]] || fail "the session is not under $SKILLD_STATE/sessions"
counts=""
for _ in 1 2 3; do
    as_in alice skillctl run --system -q --session "$sid" "$work/counter"
    counts+=$(cat "$work/out")
done
assert_eq 123 "$counts" "three runs in the session"
as_in alice skillctl exec --system -q --session "$sid" "$work/counter" -- cat /work/count
assert_eq 3 "$(cat "$work/out")" "exec --session sees the file"
as_in alice skillctl run --system -q "$work/counter"
assert_eq 1 "$(cat "$work/out")" "a run without the session starts clean"
as_in alice skillctl session list --system --json
assert_contains "$(cat "$work/out")" "$sid" "alice lists her session"

# 2. bob: nothing of alice's.
as_in bob skillctl session list --system
[[ $(cat "$work/out") != *"$sid"* ]] || fail "bob's list shows alice's session"
as_in bob skillctl session show --system "$sid"
show_last
[[ $rc != 0 ]] || fail "bob read alice's session"
assert_contains "$(cat "$work/err")" "not yours" "bob's session show"
as_in bob skillctl run --system -q --session "$sid" "$work/counter"
show_last
[[ $rc != 0 ]] || fail "bob ran in alice's session"
assert_contains "$(cat "$work/err")" "not yours" "bob's run --session"
as_in bob skillctl session rm --system "$sid"
[[ $rc != 0 ]] || fail "bob removed alice's session"
[[ -d $SKILLD_STATE/sessions/$sid ]] || fail "alice's session is gone after bob's rm"

# 3. It survives a restart of the service.
systemctl restart skilld.service
as_in alice skillctl run --system -q --session "$sid" "$work/counter"
show_last
assert_eq 4 "$(cat "$work/out")" "the session after systemctl restart skilld"

# 4. The quota (1M from the policy) holds while a run writes, and no more is kept.
as_in alice skillctl exec --system -q --session "$sid" "$work/counter" -- sh -c 'head -c 3000000 /dev/zero >/work/big'
show_last
[[ $rc != 0 ]] || fail "a run wrote past the session's quota"
used=$(du -sb "$SKILLD_STATE/sessions/$sid/work" | cut -f1)
[[ $used -le $((1024 * 1024 + 65536)) ]] || fail "the session keeps $used bytes, above its 1M quota"

# 5. rm: the files are gone, and using it is an error.
as_in alice skillctl session rm --system "$sid"
assert_eq 0 "$rc" "alice removes her session"
[[ ! -e $SKILLD_STATE/sessions/$sid ]] || fail "the session's files are still there"
as_in alice skillctl run --system -q --session "$sid" "$work/counter"
[[ $rc != 0 ]] || fail "a run in a removed session went ahead"
assert_contains "$(cat "$work/err")" "No session" "a run in a removed session"

# 6. carol, an admin, lists everyone's and removes alice's.
as_in alice skillctl session create --system "$work/counter"
sid=$(cat "$work/out")
as_in carol skillctl session list --system --all
assert_contains "$(cat "$work/out")" "$sid" "carol lists alice's session"
as_in carol skillctl session rm --system "$sid"
show_last
assert_eq 0 "$rc" "carol removes alice's session"

# 7. The idle TTL: unused for longer, the session is gone.
as_in alice skillctl session create --system --ttl 2s "$work/counter"
sid=$(cat "$work/out")
sleep 3
as_in alice skillctl run --system -q --session "$sid" "$work/counter"
show_last
[[ $rc != 0 ]] || fail "a run in an expired session went ahead"
[[ ! -e $SKILLD_STATE/sessions/$sid ]] || fail "the expired session is still on disk"
