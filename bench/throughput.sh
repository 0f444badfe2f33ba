#!/bin/bash
# Sustained runs/s through the service, on the host itself at hardware speed (the VM runs under
# TCG, 20-50x slower): issue 15's ">= 100 trivial runs/s from two users on 2 vCPUs with nothing
# lost". skilld runs as root with --bus-address on a private dbus-daemon and a --state-dir of its
# own, as bench/list-bench.sh and bench/rss.sh do; no systemd here, so no transient scopes: runs
# use the sandbox engine's own cgroup limits (the scope's cost is only in the VM numbers). The
# host has no polkitd for a private bus, so bench/polkit-yes.c (built here with cc) stands in:
# yes to io.skilld.run, no to everything else; skilld still asks it for every unprivileged run.
#
# Two users (SKILLD_BENCH_UIDS, default nobody 65534 and daemon 1: dbus-daemon refuses a uid without
# a name; 0 for root, whose clients take skilld's root socket, as root's do on a real system), STREAMS each
# (default 4), every stream a loop of `skillctl run --system -q` of a trivial skill (the one of
# run-bench.sh) for SECONDS, in two forms, each its own rounds: installed (`skillctl skill
# install`, then run by name, as service-bench.sh times it in the VM: the service's fast path)
# and as a folder (packed into a zip by every client and unpacked by the service for every run). Reported per round: runs/s over the wall time; "nothing lost"
# (every client exited 0, and the store holds exactly that many new finished+succeeded runs, by
# `skillctl list --json --lines=all` as root); the CPU split from /proc/PID/stat before and after
# (skilld's own time, the runs' time as skilld's reaped children, dbus-daemon, the polkit
# stand-in) and this script's reaped children (the client loops: setpriv, bash, skillctl).
#
# A benchmark, not a test: it needs root, dbus-daemon, cc and libsystemd-dev.
#
# With SKILLD_BENCH_PROBE=1, bench/loop-probe.py (python3-jeepney) pings skilld every 5 ms from
# the round's second second to its last but one, and reports how long those calls waited: the
# time other callers wait for skilld's event loop while it serves the runs.
#
# Usage: bench/throughput.sh BUILD_DIR [SECONDS] [ROUNDS]       (default 20 s, 3 rounds)
# Environment: SKILLD_BENCH_STREAMS (4 per user), SKILLD_BENCH_UIDS ("65534 1"),
# SKILLD_BENCH_FORMS ("installed folder"), SKILLD_BENCH_PROBE (0).
set -euo pipefail

B=$(realpath "${1:?usage: throughput.sh BUILD_DIR [SECONDS] [ROUNDS]}")
SECS=${2:-20}
ROUNDS=${3:-3}
STREAMS=${SKILLD_BENCH_STREAMS:-4}
read -r -a UIDS <<<"${SKILLD_BENCH_UIDS:-65534 1}"
read -r -a FORMS <<<"${SKILLD_BENCH_FORMS:-installed folder}"
SRC=$(cd "$(dirname "$0")/.." && pwd)
SKILLCTL=$B/skillctl/skillctl

die() { echo "throughput: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run me as root"
[[ -x $SKILLCTL && -x $B/skilld/skilld ]] || die "$B has no skillctl and skilld (meson compile -C $B)"
[[ $SECS =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ && $STREAMS =~ ^[1-9][0-9]*$ ]] ||
    die "SECONDS, ROUNDS and SKILLD_BENCH_STREAMS must be positive integers"

T=$(mktemp -d "${TMPDIR:-/tmp}/throughput.XXXXXX")
chmod 755 "$T"
polkit_pid=''
# shellcheck source=bench/host-service.sh
source "$SRC/bench/host-service.sh"
cleanup() {
    [[ -z $polkit_pid ]] || kill "$polkit_pid" 2>/dev/null || true
    host_service_cleanup
}
trap cleanup EXIT

# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -o "$T/polkit-yes" "$SRC/bench/polkit-yes.c" $(pkg-config --cflags --libs libsystemd) ||
    die "cannot build bench/polkit-yes.c (cc, libsystemd-dev)"

# The trivial skill of run-bench.sh.
make_trivial_skill "$T/trivial"
for u in "${UIDS[@]}"; do mkdir -p "$T/out-$u"; chown "$u:$u" "$T/out-$u"; done
STATE=$T/state
host_service_setup
"$T/polkit-yes" &
polkit_pid=$!
start_skilld
(cd / && "$SKILLCTL" skill install "$T/trivial" >/dev/null) || die "cannot install the trivial skill"

TCK=$(getconf CLK_TCK)
ticks() {       # PID FIELD... -> the sum of those fields of /proc/PID/stat (after the comm)
    local pid=$1; shift
    local s; s=$(<"/proc/$pid/stat"); s=${s##*) }
    local -a f; read -r -a f <<<"$s"
    local sum=0 i; for i in "$@"; do sum=$(( sum + f[i - 3] )); done
    echo "$sum"
}
succeeded() {   # the store's finished+succeeded runs, and all its runs
    (cd / && "$SKILLCTL" list --all --json --lines=all) | /usr/bin/python3 -c '
import json, sys
doc = json.load(sys.stdin)
runs = doc if isinstance(doc, list) else doc.get("runs", [])
ok = sum(1 for r in runs if r.get("state") == "finished" and r.get("status") == "succeeded")
print(ok, len(runs))'
}
snapshot() {    # -> "skilld-self runs dbus polkit clients" in ticks
    echo "$(ticks "$skilld_pid" 14 15) $(ticks "$skilld_pid" 16 17) $(ticks "$bus_pid" 14 15)" \
         "$(ticks "$polkit_pid" 14 15) $(ticks $$ 16 17)"
}

# shellcheck disable=SC2016 # the inner script is expanded by the inner bash, as the user
stream() {      # UID INDEX SKILL: runs SKILL for SECS as UID; writes "RUNS FAILURES" to $T/count-UID-INDEX
    setpriv --reuid="$1" --regid="$1" --clear-groups --reset-env \
        env DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" SECS="$SECS" \
        SKILLD_ROOT_BUS_ADDRESS="unix:path=$T/run/private" \
        SKILLCTL="$SKILLCTL" SKILL="$3" OUT="$T/out-$1" \
        bash -c 'cd "$OUT"; end=$(( ${EPOCHREALTIME/./} + SECS * 1000000 )); n=0 bad=0
                 while (( ${EPOCHREALTIME/./} < end )); do
                     "$SKILLCTL" run --system -q "$SKILL" >/dev/null 2>>"$OUT/errors" || bad=$((bad + 1))
                     n=$((n + 1))
                 done
                 echo "$n $bad"' >"$T/count-$1-$2"
}

for form in "${FORMS[@]}"; do
    case $form in
        installed) skill=trivial ;;
        folder) skill=$T/trivial ;;
        *) die "SKILLD_BENCH_FORMS: unknown form $form (installed, folder)" ;;
    esac
    echo "== $((${#UIDS[@]} * STREAMS)) streams (uids ${UIDS[*]}, $STREAMS each) of \`skillctl run --system -q\` of a trivial skill, $form, ${SECS} s a round, $(nproc) CPUs"
    for round in $(seq "$ROUNDS"); do
        read -r ok0 _ <<<"$(succeeded)"
        read -r s0 r0 d0 p0 c0 <<<"$(snapshot)"
        t0=${EPOCHREALTIME/./}
        pids=()
        for u in "${UIDS[@]}"; do
            for i in $(seq "$STREAMS"); do stream "$u" "$i" "$skill" & pids+=($!); done
        done
        if [[ ${SKILLD_BENCH_PROBE:-0} == 1 && $SECS -ge 4 ]]; then
            sleep 1
            /usr/bin/python3 "$SRC/bench/loop-probe.py" "$DBUS_SYSTEM_BUS_ADDRESS" "$((SECS - 3))" >"$T/probe" ||
                echo "  (the probe failed)" >"$T/probe"
        fi
        for p in "${pids[@]}"; do wait "$p"; done
        t1=${EPOCHREALTIME/./}
        read -r s1 r1 d1 p1 c1 <<<"$(snapshot)"
        read -r ok1 total <<<"$(succeeded)"
        runs=0 bad=0
        for f in "$T"/count-*; do read -r n b <"$f"; runs=$((runs + n)); bad=$((bad + b)); done
        /usr/bin/python3 - "$round" "$runs" "$bad" "$((ok1 - ok0))" "$total" "$((t1 - t0))" "$TCK" "$(nproc)" \
            "$((s1 - s0))" "$((r1 - r0))" "$((d1 - d0))" "$((p1 - p0))" "$((c1 - c0))" <<'PY'
import sys
rnd, runs, bad, new, total, us, tck, ncpu = (int(a) for a in sys.argv[1:9])
wall = us / 1e6
cpu = dict(zip(("skilld", "runs (skilld's children)", "dbus-daemon", "polkit stand-in", "clients"),
               (int(a) / tck for a in sys.argv[9:])))
lost = "nothing lost" if bad == 0 and new == runs else f"LOST: {bad} clients failed, {new} new succeeded runs for {runs} clients"
print(f"round {rnd}: {runs} runs in {wall:.1f} s = {runs / wall:.1f} runs/s; {lost} (store: {total} runs)")
used = sum(cpu.values())
print(f"  CPU {used:.1f} s of {ncpu * wall:.1f} ({100 * used / (ncpu * wall):.0f}%), per run {1000 * used / max(runs, 1):.1f} ms: " +
      ", ".join(f"{k} {v:.1f} s ({100 * v / max(used, 1e-9):.0f}%)" for k, v in cpu.items()))
PY
        [[ ! -s $T/probe ]] || cat "$T/probe"
        rm -f "$T/probe"
        if [[ $bad -gt 0 ]]; then
            echo "  client errors (first 5):"; sort "$T"/out-*/errors | uniq -c | sort -rn | head -n 5
        fi
        rm -f "$T"/count-* "$T"/out-*/errors
    done
done
