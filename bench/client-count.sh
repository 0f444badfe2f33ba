#!/bin/bash
# What one `skillctl run --system -q` of an installed trivial skill costs its client, counted on
# the host rather than timed: the messages it sends and the round trips it waits for (strace), its
# page faults (perf stat), and its instructions (Valgrind's callgrind), split where each
# sd_bus_call() returns, so that the call (up to Run's reply) and the way back (after
# GetOutcome's) show apart. Under TCG, where the service's goals are judged, a process's time
# follows these counts far more than the host's milliseconds.
#
# The service is bench/host-service.sh's: a private dbus-daemon, skilld as root with its own
# state directory, the trivial skill of run-bench.sh installed. Each BUILD_DIR's skillctl is
# counted against the first one's skilld, so that a change of the client alone is compared.
#
# Usage: bench/client-count.sh BUILD_DIR [OTHER_BUILD_DIR...]   (root; strace, perf, valgrind)
set -euo pipefail

die() { echo "client-count: $*" >&2; exit 1; }
[[ $# -ge 1 ]] || die "usage: client-count.sh BUILD_DIR [OTHER_BUILD_DIR...]"
[[ $(id -u) == 0 ]] || die "run me as root"
for t in strace perf valgrind callgrind_annotate; do command -v $t >/dev/null || die "$t is missing"; done
BUILDS=()
for b in "$@"; do
    b=$(realpath "$b")
    [[ -x $b/skillctl/skillctl ]] || die "$b has no skillctl (meson compile -C $b)"
    BUILDS+=("$b")
done
B=${BUILDS[0]}
[[ -x $B/skilld/skilld ]] || die "$B has no skilld"
SRC=$(cd "$(dirname "$0")/.." && pwd)
SKILLCTL=$B/skillctl/skillctl

T=$(mktemp -d "${TMPDIR:-/tmp}/client-count.XXXXXX")
chmod 755 "$T"
# shellcheck source=bench/host-service.sh disable=SC1091
source "$SRC/bench/host-service.sh"
trap host_service_cleanup EXIT

mkdir -p "$T/cwd"
make_trivial_skill "$T/trivial"
# shellcheck disable=SC2034 # host-service.sh's start_skilld reads it
STATE=$T/state
host_service_setup
start_skilld
(cd / && "$SKILLCTL" skill install "$T/trivial" >/dev/null) || die "cannot install the trivial skill"

cd "$T/cwd"
printf '%-40s %9s %11s %11s %12s %12s %12s\n' "skillctl of" "messages" "round trips" "page faults" \
    "instructions" "to Run" "after GetOutcome"
for b in "${BUILDS[@]}"; do
    c=$b/skillctl/skillctl
    for _ in 1 2 3; do "$c" run --system -q trivial >/dev/null; done
    # Messages: each sendmsg() on the bus connection but the first (the authentication).
    strace -f -o "$T/strace" -e trace=sendmsg "$c" run --system -q trivial >/dev/null
    sent=$(( $(grep -c 'sendmsg(' "$T/strace") - 1 ))
    faults=$(perf stat -x, -e page-faults "$c" run --system -q trivial 2>&1 >/dev/null | cut -d, -f1)
    rm -f "$T"/cg.out*
    valgrind --tool=callgrind --dump-after=sd_bus_call --callgrind-out-file="$T/cg.out" \
        "$c" run --system -q trivial >/dev/null 2>"$T/cg.err"
    # cg.out.N ends at the Nth sd_bus_call()'s return; cg.out (no number) is what follows the last.
    total=0
    for f in "$T"/cg.out*; do total=$((total + $(sed -n 's/^summary: //p' "$f"))); done
    last=$(sed -n 's/^summary: //p' "$T/cg.out")
    # Round trips waited for: each sd_bus_call(), and Hello's reply, which the first one awaits.
    # Up to Run's reply: the stretches before GetOutcome's call, all but the last two.
    calls=$(find "$T" -maxdepth 1 -name 'cg.out.*' | wc -l)
    waits=$((calls + 1))
    to_run=0
    for i in $(seq 1 $((calls - 1))); do to_run=$((to_run + $(sed -n 's/^summary: //p' "$T/cg.out.$i"))); done
    label=$b
    (( ${#label} <= 40 )) || label=...${label: -37}
    printf '%-40s %9d %11d %11s %12d %12d %12d\n' "$label" "$sent" "$waits" "$faults" "$total" "$to_run" "$last"
done
