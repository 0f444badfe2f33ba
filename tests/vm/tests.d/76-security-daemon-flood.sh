#!/bin/bash
# D7: a flood of submissions. alice and bob each send 500 Run calls at once (4 connections of 125
# each, under the bus's 128 pending replies per connection, so that all of them reach the
# service), replies unread until all are sent. Every accepted run ends finished and is its
# submitter's, every other call is refused by the service's caps (QuotaExceeded); meanwhile /proc
# is scanned every 20 ms: no two runs hold one uid at the same time, though six uids serve them
# all (each is reused), and the service's cgroup stays under its TasksMax. The service is the same
# process after it all and its fd count is back to what it was. The runs are checked in one
# ListAllRuns: two clients per run, each started through runuser under TCG, took minutes.
# Skill bodies are single-quoted on purpose: they expand in the sandbox, not here.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

ABUSE=$SKILLD_BUILD_ROOT/tests/security/daemon/skilld-abuse
UID_FIRST=1879048192
UID_COUNT=6

daemon_setup
daemon_policy "$(cat <<YAML
service:
  idle-timeout: 300s
concurrency:
  per-user: 2
  global: 4
queue:
  per-user: 12
  global: 24
uids:
  first: $UID_FIRST
  count: $UID_COUNT
YAML
)"

quick=$(make_skill quick 'sleep 0.5; echo "quick $1"')
assert_eq "succeeded 0" "$(call alice run --wait "$quick" 0 | tail -n 1)" "the first run"
pid=$(daemon_main_pid)
wait_until 90 daemon_settled_fds "$pid" >/dev/null || fail "the user database helper or the scope started ahead never ended"
baseline=$(daemon_settled_fds "$pid")
tasks_max=$(systemctl show -P TasksMax skilld.service)
cgroup=/sys/fs/cgroup$(systemctl show -P ControlGroup skilld.service)
echo "skilld (pid $pid): $baseline fds, TasksMax $tasks_max, cgroup $cgroup"

"$ABUSE" uid-scan "$UID_FIRST" "$UID_COUNT" "$cgroup" >scan.out 2>&1 &
scanner=$!
wait_until 30 grep -q '^scanning' scan.out || fail "the scanner did not start: $(cat scan.out)"

mkdir -m 0777 out
floods=()
for k in 1 2 3 4; do
    for user in alice bob; do
        as_user "$user" "$ABUSE" run-flood 125 "$quick" >"out/$user.$k" 2>&1 &
        floods+=($!)
    done
done
for f in "${floods[@]}"; do
    wait "$f" || fail "a flood failed: $(tail -n 3 out/*)"
done

# Every run as the service lists it, once none is queued or running: "ID OWNER STATE STATUS EXIT".
all_runs() {
    busctl --system --json=short call "${MANAGER[@]}" ListAllRuns |
        python3 -c 'import json, sys
for r in json.load(sys.stdin)["data"][0]:
    print(r[0], r[4], r[5], r[6] or "-", r[7])'
}
no_run_pending() {
    ! all_runs | awk '$3 == "queued" || $3 == "running" { found = 1 } END { exit !found }'
}
wait_until 600 no_run_pending || fail "runs still queued or running: $(all_runs | grep -v finished | head)"
all_runs >runs.list

accepted=0 refused=0 unanswered=0 busrefused=0
for f in out/*; do
    user=${f#out/}
    user=${user%%.*}
    while read -r line; do
        case $line in
        "accepted "*)
            id=${line#accepted }
            assert_eq "$id $(id -u "$user") finished succeeded 0" "$(grep "^$id " runs.list)" \
                "run $id of $user (id, owner, state, status, exit code)"
            accepted=$((accepted + 1))
            ;;
        "io.skilld.Skilld1.Error.QuotaExceeded "*)
            refused=$((refused + 1))
            ;;
        # A thousand authorizations at once can outlast sd-bus's 25 s on a slow (emulated,
        # shared) CPU: skilld then denies, as it must when polkit does not answer.
        "org.freedesktop.DBus.Error.AccessDenied Authorization for "*" is not available (polkit does not answer)"*)
            unanswered=$((unanswered + 1))
            ;;
        # The same for the bus's answer to who the caller is, which skilld asks once a
        # connection: without it nothing can be authorized.
        "org.freedesktop.DBus.Error.Timeout Cannot determine the caller's identity: Connection timed out"*)
            unanswered=$((unanswered + 1))
            ;;
        # dbus-daemon's own flood guard: it queues at most 64 fds for skilld (the system bus's
        # max_outgoing_unix_fds), and each Run carries one; calls beyond that are refused by
        # the bus before the service sees them.
        "org.freedesktop.DBus.Error.LimitsExceeded Rejected: destination has a full message queue"*)
            busrefused=$((busrefused + 1))
            ;;
        *)
            fail "$f: neither a run nor a quota refusal: $line"
            ;;
        esac
    done <"$f"
done
assert_eq 1000 $((accepted + refused + unanswered + busrefused)) "calls accounted for"
echo "$accepted runs finished, $refused calls refused by the service's caps," \
    "$unanswered denied because polkit or the bus did not answer in time, $busrefused refused by" \
    "the bus"
[[ $accepted -gt $UID_COUNT ]] || fail "only $accepted runs: too few to reuse a uid"

kill -TERM "$scanner"
wait "$scanner"
cat scan.out
if grep '^shared ' scan.out; then
    fail "two runs held one uid at the same time"
fi
summary=$(tail -n 1 scan.out)
read -r _ scans _ procs _ runs _ uids _ reuses _ peak _ shared <<<"$summary"
assert_eq 0 "$shared" "uids held by two runs at once"
[[ $scans -gt 10 && $procs -gt 0 && $runs -gt 0 ]] || fail "the scan saw no run at all: $summary"
echo "scan: $runs runs seen on $uids uids, $reuses reuses, service tasks at most $peak"
if [[ $tasks_max != infinity ]]; then
    [[ $peak -lt $tasks_max ]] || fail "skilld.service had $peak tasks, TasksMax is $tasks_max"
fi

assert_eq "$pid" "$(daemon_main_pid)" "skilld's pid (it must not have restarted)"
wait_until 90 test "$(daemon_settled_fds "$pid")" = "$baseline" ||
    fail "skilld has $(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l) fds, $baseline before:" \
        "$(ls -l "/proc/$pid/fd")"
echo "fd count back to $baseline"
