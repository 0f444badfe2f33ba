#!/bin/bash
# `skillctl list` over a store of 100 000 runs, on the host itself: no VM and no systemd, so that
# the listing is timed without the minutes a TCG guest spends writing and loading such a store
# (bench/service-bench.sh's step 5 measures the same in the VM). skilld runs as root with
# --bus-address on a private dbus-daemon (a session bus that every user may reach) and a
# --state-dir of its own; skillctl reaches it through DBUS_SYSTEM_BUS_ADDRESS. One real run (as
# root, of examples/skills/shell-report) is the template bench/store-fill.py copies into
# 100 000 records: 1 000 of them the timed user's, the rest spread over 99 uids that have no
# name (20000-20098, as service accounts would), then the service is started again over them.
#
# Timed, interleaved (bench/interleave.py, medians): `skillctl list` (the table: the newest 100),
# `list --lines=all` (every row, in pages of 10 000), `list --quiet` (every id), and `list` as a
# user who owns 1 000 of the runs; with a baseline skillctl (another build's: one without
# ListRunsFiltered lists everything through ListRuns), its `list` and `list --quiet` too.
#
# A benchmark, not a test: it needs root (setpriv for the user), dbus-daemon, and about 1 GB of
# disk in the temporary directory for the store. Nothing outside that directory is changed.
#
# Usage: bench/list-bench.sh BUILD_DIR [ROUNDS] [BASELINE_SKILLCTL]
# Environment: SKILLD_BENCH_STORED_RUNS (100000), SKILLD_BENCH_UID (the user timed, 65534),
# TMPDIR (where the store goes), SKILLD_BENCH_STORE (a store directory kept between runs: filled
# when it has no runs yet, else used as it is, to time again without filling it again).
set -euo pipefail

B=$(realpath "${1:?usage: list-bench.sh BUILD_DIR [ROUNDS] [BASELINE_SKILLCTL]}")
N=${2:-15}
BASE=${3:-}
STORED=${SKILLD_BENCH_STORED_RUNS:-100000}
USER_UID=${SKILLD_BENCH_UID:-65534}
SRC=$(cd "$(dirname "$0")/.." && pwd)
SKILLCTL=$B/skillctl/skillctl

die() { echo "list-bench: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run me as root"
[[ -x $SKILLCTL && -x $B/skilld/skilld ]] || die "$B has no skillctl and skilld (meson compile -C $B)"
[[ -z $BASE || -x $BASE ]] || die "$BASE is not an executable"
[[ $STORED -gt 1000 ]] || die "SKILLD_BENCH_STORED_RUNS must be above 1000"

T=$(mktemp -d "${TMPDIR:-/tmp}/list-bench.XXXXXX")
chmod 755 "$T"
# shellcheck source=bench/host-service.sh
source "$SRC/bench/host-service.sh"
trap host_service_cleanup EXIT

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

STATE=${SKILLD_BENCH_STORE:-$T/state}
host_service_setup

if [[ -d $STATE/runs && -n $(find "$STATE/runs" -mindepth 1 -maxdepth 1 -print -quit) ]]; then
    start=$(date +%s%N)
    start_skilld
    echo "== skillctl list over the $(find "$STATE/runs" -mindepth 1 -maxdepth 1 | wc -l) runs of $STATE"
    echo "start over them, until skillctl list answers: $(ms_since "$start") ms"
else
    start_skilld
    (cd "$T" && "$SKILLCTL" run --system "$SRC/examples/skills/shell-report" >/dev/null 2>"$T/run.err") ||
        die "the template run failed: $(tail -n 3 "$T/run.err")"
    template=$(cd / && "$SKILLCTL" list --quiet -n 1)
    stop_skilld
    start=$(date +%s%N)
    /usr/bin/python3 "$SRC/bench/store-fill.py" "$STATE" "$template" "$STORED" \
        "$USER_UID:1000" "20000-20098:$((STORED - 1000))" >/dev/null
    echo "== skillctl list over $((STORED + 1)) stored runs (written in $(ms_since "$start") ms by store-fill.py)"
    start=$(date +%s%N)
    start_skilld
    echo "first start over the new records, until skillctl list answers: $(ms_since "$start") ms"
    stop_skilld
    start=$(date +%s%N)
    start_skilld
    echo "second start (the store's index), until skillctl list answers: $(ms_since "$start") ms"
fi

as_user=(setpriv --reuid="$USER_UID" --regid="$USER_UID" --clear-groups --reset-env
         env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS")
variant() {     # NAME ARGV...
    local name=$1; shift
    /usr/bin/python3 -c 'import json, sys; print(json.dumps({"name": sys.argv[1], "argv": sys.argv[2:], "cwd": "/"}))' \
        "$name" "$@"
}
{
    variant "list (newest 100), root" "$SKILLCTL" list
    variant "list --lines=all, root" "$SKILLCTL" list --lines=all
    variant "list --quiet, root (all)" "$SKILLCTL" list --quiet
    variant "list, uid $USER_UID (1000 runs)" "${as_user[@]}" "$SKILLCTL" list
    if [[ -n $BASE ]]; then
        variant "baseline list, root (all)" "$BASE" list
        variant "baseline list --quiet, root (all)" "$BASE" list --quiet
        variant "baseline list, uid $USER_UID (1000 runs)" "${as_user[@]}" "$BASE" list
    fi
} | /usr/bin/python3 -c '
import json, sys
json.dump({"variants": [json.loads(line) for line in sys.stdin], "ratios": []}, sys.stdout)' >"$T/list.json"
/usr/bin/python3 "$SRC/bench/interleave.py" "$N" 1 "$T/list.json"
echo "(goal: skillctl list under 50 ms)"
