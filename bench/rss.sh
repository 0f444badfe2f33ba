#!/bin/bash
# Where skilld's idle RSS is, on the host, repeatably: the built skilld as root on a private
# dbus-daemon (no systemd, no polkit: root's calls skip it), one run of a folder skill through
# it with the built skillctl, then, once it has been idle for longer than its 1 s malloc_trim,
# VmRSS, RssAnon and the mapped files from /proc/PID/status and the Rss of each mapping from
# /proc/PID/smaps, with Pss (shared pages divided among their users) and the private pages from
# smaps_rollup: most of the RSS is library text every process shares. Optionally an archive run too (SKILLD_RSS_ARCHIVE=1: a .skill file, which
# makes skilld load libarchive), to see what the first archive costs.
#
#   bench/rss.sh [BUILD_DIR] [REPEAT]      (default: build, 1)
#
# Each repeat starts a new skilld. The service bench (service-bench.sh, step 4) measures the
# same in the VM, under systemd, where the libraries live on a tmpfs and count as RssShmem.
set -euo pipefail

BUILD=$(realpath "${1:-build}")
REPEAT=${2:-1}
SKILLD=$BUILD/skilld/skilld
SKILLCTL=$BUILD/skillctl/skillctl
[[ $(id -u) == 0 ]] || { echo "rss.sh: run as root (skilld runs skills as throwaway uids)" >&2; exit 2; }
[[ -x $SKILLD && -x $SKILLCTL ]] || { echo "rss.sh: build $BUILD first" >&2; exit 2; }

T=$(mktemp -d /tmp/skilld-rss.XXXXXX)
# Only its cleanup and trivial skill: this bus is a plain session bus, and skilld idles out.
# shellcheck source=bench/host-service.sh
source "$(dirname "$(realpath "$0")")/host-service.sh"
trap host_service_cleanup EXIT

mkdir -p "$T/out"
make_trivial_skill "$T/trivial"
chmod -R a+rX "$T"
printf 'service:\n  idle-timeout: 600s\n' >"$T/policy.yaml"

dbus-daemon --session --nofork --nopidfile --print-address=3 --address="unix:path=$T/bus" \
    3>"$T/address" &
bus_pid=$!
for _ in $(seq 100); do [[ -s $T/address ]] && break; sleep 0.05; done
export DBUS_SYSTEM_BUS_ADDRESS
DBUS_SYSTEM_BUS_ADDRESS=$(head -n1 "$T/address")

status_of() {       # PID -> "VmRSS RssAnon RssFile+RssShmem" in KiB
    awk '/^VmRSS|^RssAnon|^RssFile|^RssShmem/ { v[$1] = $2 }
         END { print v["VmRSS:"], v["RssAnon:"], v["RssFile:"] + v["RssShmem:"] }' "/proc/$1/status"
}
rollup_of() {       # PID -> "Pss Private" in KiB: its share of shared pages, and its own pages
    awk '/^Pss:/ { p = $2 } /^Private_(Clean|Dirty):/ { u += $2 } END { print p, u }' "/proc/$1/smaps_rollup"
}
by_mapping() {      # PID -> "KiB name" a line, largest first
    awk '/^[0-9a-f]+-[0-9a-f]+ / { name = NF >= 6 ? $6 : "[anon]"; sub(/.*\//, "", name) }
         /^Rss:/ { rss[name] += $2 }
         END { for (n in rss) if (rss[n] > 0) printf "%8d  %s\n", rss[n], n }' "/proc/$1/smaps" |
        sort -rn
}

for i in $(seq 1 "$REPEAT"); do
    rm -rf "$T/state" "$T/run"
    "$SKILLD" --bus-address="$DBUS_SYSTEM_BUS_ADDRESS" --state-dir="$T/state" --runtime-dir="$T/run" \
        --policy="$T/policy.yaml" 2>"$T/skilld.log" &
    skilld_pid=$!
    # The first call after activation: here, after the process is started, until the run ends.
    start=$(date +%s%N)
    for _ in $(seq 200); do
        busctl --address="$DBUS_SYSTEM_BUS_ADDRESS" status io.skilld.Skilld1 >/dev/null 2>&1 && break
        sleep 0.01
    done
    (cd "$T/out" && "$SKILLCTL" run --system -q "$T/trivial" >/dev/null)
    cold=$(( ($(date +%s%N) - start) / 1000000 ))
    sleep 0.3
    read -r rss0 _ _ <<<"$(status_of "$skilld_pid")"
    sleep 2     # idle: past the malloc_trim after 1 s
    read -r rss anon file <<<"$(status_of "$skilld_pid")"
    read -r pss private <<<"$(rollup_of "$skilld_pid")"
    printf '#%d skilld idle after one folder run: VmRSS %s KiB, RssAnon %s, files %s, Pss %s, private %s (0.3 s after the run: VmRSS %s); start + run %d ms\n' \
        "$i" "$rss" "$anon" "$file" "$pss" "$private" "$rss0" "$cold"
    if [[ $i == "$REPEAT" ]]; then
        echo "by mapping (KiB):"
        by_mapping "$skilld_pid" | sed 's/^/  /'
        if [[ ${SKILLD_RSS_ARCHIVE:-0} == 1 ]]; then
            "$SKILLCTL" skill package "$T/trivial" -o "$T/trivial.skill" >/dev/null
            chmod a+r "$T/trivial.skill"
            (cd "$T/out" && "$SKILLCTL" run --system -q "$T/trivial.skill" >/dev/null)
            sleep 2
            read -r rss anon file <<<"$(status_of "$skilld_pid")"
            printf 'after an archive run too: VmRSS %s KiB, RssAnon %s, files %s\n' "$rss" "$anon" "$file"
            by_mapping "$skilld_pid" | head -n 12 | sed 's/^/  /'
        fi
    fi
    kill "$skilld_pid"
    wait "$skilld_pid" 2>/dev/null || true
    skilld_pid=""
done
