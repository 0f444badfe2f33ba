#!/bin/bash
# 50 runs at once from two users: each one either finishes or is refused by the queue caps with
# QuotaExceeded; none is lost, none stays queued or running, and the service's fd count returns
# to what it was before.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

daemon_setup
daemon_policy "$(cat <<'YAML'
service:
  idle-timeout: 120s
concurrency:
  per-user: 2
  global: 3
queue:
  per-user: 8
  global: 12
YAML
)"

tiny=$(make_skill tiny 'echo "tiny $1"')
# One run first: what the service opens once and keeps (the journal's socket) is in the baseline.
assert_eq "succeeded 0" "$(call alice run --wait "$tiny" 0 | tail -n 1)" "the first run"
pid=$(daemon_main_pid)
wait_until 90 daemon_settled_fds "$pid" >/dev/null || fail "the user database helper or the scope started ahead never ended"
baseline=$(daemon_settled_fds "$pid")
echo "skilld (pid $pid) has $baseline fds"

mkdir -m 0777 out
for i in $(seq 1 25); do
    for user in alice bob; do
        as_user "$user" "$SKILLD_CALL" run "$tiny" "$i" >"out/$user.$i" 2>&1 &
    done
done
wait

accepted=0 refused=0
for f in out/*; do
    user=${f#out/}
    user=${user%%.*}
    line=$(head -n 1 "$f")
    if [[ $line =~ ^[0-9a-f]{32}$ ]]; then
        out=$(call "$user" wait "$line")
        assert_eq "finished succeeded 0" "$out" "run $line of $user"
        accepted=$((accepted + 1))
    elif [[ $line == io.skilld.Skilld1.Error.QuotaExceeded:* ]]; then
        refused=$((refused + 1))
    else
        fail "$f: neither a run nor a quota refusal: $(cat "$f")"
    fi
done
assert_eq 50 $((accepted + refused)) "runs accounted for"
echo "$accepted runs finished, $refused refused by the queue caps"

all=$(busctl --system call "${MANAGER[@]}" ListAllRuns)
[[ $all != *'"queued"'* && $all != *'"running"'* ]] || fail "a run is still queued or running: $all"
assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid (it must not have restarted)"
wait_until 90 test "$(daemon_settled_fds "$pid")" = "$baseline" ||
    fail "skilld has $(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l) fds, $baseline before:" \
        "$(ls -l "/proc/$pid/fd")"
echo "fd count back to $baseline"
