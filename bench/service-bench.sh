#!/bin/bash
# The service twin of bench/run-bench.sh: times skilld on a real system (the test VM: systemd,
# dbus-daemon, polkitd, cgroup v2), as issue 15 sets goals for it. Five measures:
#
#   1. cold: the first call after activation (skilld stopped before each), reported apart;
#   2. latency: `skillctl run --system` of an installed trivial skill against `systemd-run
#      --scope` and `systemd-run -P --wait` of the same script, interleaved (bench/interleave.py);
#   3. throughput: two users running the skill from parallel streams for a while: runs per
#      second, and every run accounted for (each client exit 0, each run finished and succeeded
#      in the store);
#   4. skilld's RSS when idle, after activation and after the runs;
#   5. `skillctl list` over a store of 100 000 runs, written by bench/store-fill.py in the
#      store's format (not run), cold (activation loading the store) and warm: the table (the
#      newest 100), every row (--lines=all) and every id (--quiet). bench/list-bench.sh times
#      the same on the host, without the VM.
#
# A benchmark, not a test: nothing passes or fails but a run that goes wrong (a client failing,
# a run lost). Run it as root inside the test VM: `tests/vm/run-vm.sh --bench BUILD_DIR` (see
# bench/README.md), or at the VM's shell. It changes the system it runs on: the admin policy
# (restored), a polkit rule for the two users (removed), the installed skill "bench-trivial"
# (removed) and the store, which it empties of everything first (the VM's is a scratch store).
#
# Usage: bench/service-bench.sh [ROUNDS]
# Environment: SKILLD_BENCH_USERS ("alice bob"), SKILLD_BENCH_STREAMS (per user, 4),
# SKILLD_BENCH_SECONDS (of throughput, 20), SKILLD_BENCH_STORED_RUNS (100000; 0 skips 5.),
# SKILLD_BENCH_COLD (cold starts timed, 5), SKILLD_BENCH_BASELINE_SKILLCTL (another skillctl
# binary, a path below the source tree: its root runs join the latency rounds and the phases,
# against the same service, so that a change of the client alone is measured side by side).
set -euo pipefail

N=${1:-30}
read -r -a USERS <<<"${SKILLD_BENCH_USERS:-alice bob}"
STREAMS=${SKILLD_BENCH_STREAMS:-4}
SECONDS_TP=${SKILLD_BENCH_SECONDS:-20}
STORED=${SKILLD_BENCH_STORED_RUNS:-100000}
COLD=${SKILLD_BENCH_COLD:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
SKILL=bench-trivial
BASELINE=""
if [[ -n ${SKILLD_BENCH_BASELINE_SKILLCTL:-} ]]; then
    BASELINE=$SRC/$SKILLD_BENCH_BASELINE_SKILLCTL
    [[ -x $BASELINE ]] || die "SKILLD_BENCH_BASELINE_SKILLCTL: no executable $BASELINE"
fi
STATE=/var/lib/skilld
POLICY=/etc/skilld/policy.yaml
RULE=/etc/polkit-1/rules.d/60-skilld-bench.rules

die() { echo "service-bench: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || die "run me as root (in the test VM: tests/vm/run-vm.sh --bench)"
[[ ${#USERS[@]} == 2 ]] || die "SKILLD_BENCH_USERS names two users, not '${USERS[*]}'"
for u in "${USERS[@]}"; do id "$u" >/dev/null 2>&1 || die "no user $u"; done
command -v skillctl >/dev/null || die "skillctl is not installed"
systemctl cat skilld.service >/dev/null 2>&1 || die "skilld.service is not installed"

T=$(mktemp -d /tmp/service-bench.XXXXXX)
chmod 0755 "$T"
had_policy=false
[[ -e $POLICY ]] && { cp -a "$POLICY" "$T/policy.saved"; had_policy=true; }
cleanup() {
    set +e
    skillctl skill remove "$SKILL" >/dev/null 2>&1
    rm -f "$RULE" /run/systemd/system/skilld.service.d/90-bench.conf
    if $had_policy; then cp -a "$T/policy.saved" "$POLICY"; else rm -f "$POLICY"; fi
    systemctl stop skilld.service
    rm -rf "$T"
}
trap cleanup EXIT

ms_since() {        # ms_since START_NS
    echo $(( ($(date +%s%N) - $1) / 1000 ))e-3 | awk '{ printf "%.1f", $1 }'
}
# "VmRSS RssAnon RssFile+RssShmem Pss private" in KiB. Mapped files count as RssShmem where they
# live on a tmpfs, as everything does in the VM (its root is one): the libraries are that column.
# Pss divides each shared page among the processes that map it; private counts the pages only
# skilld maps.
rss_of_skilld() {
    local pid
    pid=$(systemctl show -P MainPID skilld.service)
    [[ $pid != 0 ]] || { echo "- - - - -"; return; }
    awk '/^VmRSS|^RssAnon|^RssFile|^RssShmem/ { v[$1] = $2 }
         END { printf "%s %s %s ", v["VmRSS:"], v["RssAnon:"], v["RssFile:"] + v["RssShmem:"] }' "/proc/$pid/status"
    awk '/^Pss:/ { p = $2 } /^Private_(Clean|Dirty):/ { u += $2 } END { print p, u }' "/proc/$pid/smaps_rollup"
}
# The largest parts of skilld's RSS, by mapping (file name, or [heap], [anon], ...), in KiB.
rss_by_mapping() {
    local pid
    pid=$(systemctl show -P MainPID skilld.service)
    [[ $pid != 0 ]] || return 0
    awk '/^[0-9a-f]+-[0-9a-f]+ / { name = NF >= 6 ? $6 : "[anon]"; sub(/.*\//, "", name) }
         /^Rss:/ { rss[name] += $2 }
         END { for (n in rss) if (rss[n] > 0) printf "%8d  %s\n", rss[n], n }' "/proc/$pid/smaps" |
        sort -rn | head -n "${1:-12}"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# The two users may run skills (as active local users may; runuser and setpriv give no logind
# session, so the defaults would ask for a password).
cat >"$RULE" <<RULES
polkit.addRule(function(action, subject) {
    if ((subject.user == "${USERS[0]}" || subject.user == "${USERS[1]}") &&
        (action.id == "io.skilld.run" || action.id == "io.skilld.run-unlisted"))
        return polkit.Result.YES;
    return polkit.Result.NOT_HANDLED;
});
RULES
systemctl restart polkit.service

# Keep every run (the store is to hold 100 000) and the service up between the phases; the caps
# on concurrency and queueing are the shipped ones.
mkdir -p "$(dirname "$POLICY")"
cat >"$POLICY" <<'YAML'
retention:
  max-runs: infinity
  max-bytes: infinity
  max-age: infinity
  per-user:
    max-runs: infinity
    max-bytes: infinity
service:
  idle-timeout: 600s
YAML
systemctl stop skilld.service
rm -rf "${STATE:?}/runs"

# The trivial skill of run-bench.sh, installed, and the same script for systemd-run.
mkdir -p "$T/$SKILL/scripts"
printf -- '---\nname: %s\ndescription: Prints one JSON line; the smallest possible skill.\n---\n' "$SKILL" \
    >"$T/$SKILL/SKILL.md"
printf '#!/bin/bash\necho "{\\"ok\\": true}"\n' >"$T/$SKILL/scripts/main.sh"
chmod -R a+rX "$T/$SKILL"
skillctl skill install --replace "$T/$SKILL" >/dev/null
SCRIPT=$T/$SKILL/scripts/main.sh
# The clients write what they fetch (./skill-out/ID) here.
for u in root "${USERS[@]}"; do
    mkdir -p "$T/cwd-$u"
    chown "$u:" "$T/cwd-$u"
done

printf 'skilld service benchmark: kernel %s, %s CPUs, systemd %s\n\n' "$(uname -r)" "$(nproc)" \
    "$(systemctl --version | awk 'NR == 1 { print $2 }')"

# ---- 1. Cold: the first call after activation ----
cold_run=() rss_fresh="" mappings_fresh=""
for _ in $(seq 1 "$COLD"); do
    systemctl stop skilld.service
    start=$(date +%s%N)
    (cd "$T/cwd-root" && skillctl run --system -q "$SKILL" >/dev/null)
    cold_run+=("$(ms_since "$start")")
    if [[ -z $rss_fresh ]]; then
        sleep 2     # idle: past the malloc_trim and the end of the user database helper after 1 s
        rss_fresh=$(rss_of_skilld)
        mappings_fresh=$(rss_by_mapping 20 | sed 's/^/  /')
    fi
done

# ---- 2. Latency, interleaved ----
variant() {         # NAME CWD ARGV... -> one JSON object
    local name=$1 cwd=$2
    shift 2
    printf '%s\0' "$@" | /usr/bin/python3 -c '
import json, sys
argv = sys.stdin.buffer.read().decode().split("\0")[:-1]
print(json.dumps({"name": sys.argv[1], "cwd": sys.argv[2], "stdin": None, "argv": argv}))' "$name" "$cwd"
}
as_user() {         # USER: the argv prefix that runs a command as USER (no PAM, no session)
    printf '%s\0' setpriv --reuid="$1" --regid="$1" --init-groups --reset-env
}
mapfile -d '' alice < <(as_user "${USERS[0]}")
{
    variant "systemd-run --scope" "$T/cwd-root" systemd-run --quiet --scope --collect /usr/bin/bash "$SCRIPT"
    variant "systemd-run -P --wait" "$T/cwd-root" systemd-run --quiet -P --wait --collect /usr/bin/bash "$SCRIPT"
    variant "skillctl run (root)" "$T/cwd-root" skillctl run --system -q "$SKILL"
    variant "skillctl run --local" "$T/cwd-root" skillctl run --local -q "$T/$SKILL"
    variant "skillctl run (${USERS[0]})" "$T/cwd-${USERS[0]}" "${alice[@]}" skillctl run --system -q "$SKILL"
    [[ -z $BASELINE ]] || variant "baseline client (root)" "$T/cwd-root" "$BASELINE" run --system -q "$SKILL"
} | /usr/bin/python3 -c '
import json, sys
variants = [json.loads(line) for line in sys.stdin]
user = sys.argv[1]
baseline = any(v["name"] == "baseline client (root)" for v in variants)
ratios = [
    {"label": "root: skillctl / systemd-run --scope", "num": "skillctl run (root)", "den": "systemd-run --scope", "goal": 1.0},
    {"label": "root: skillctl / systemd-run -P --wait", "num": "skillctl run (root)", "den": "systemd-run -P --wait", "goal": 1.0},
    {"label": user + ": skillctl / systemd-run -P --wait", "num": "skillctl run (" + user + ")", "den": "systemd-run -P --wait", "goal": None},
    {"label": "root: through the service / embedded", "num": "skillctl run (root)", "den": "skillctl run --local", "goal": None},
    {"label": "embedded / systemd-run --scope", "num": "skillctl run --local", "den": "systemd-run --scope", "goal": None},
]
if baseline:
    ratios += [
        {"label": "root: baseline client / systemd-run -P --wait", "num": "baseline client (root)", "den": "systemd-run -P --wait", "goal": None},
        {"label": "root: skillctl / baseline client", "num": "skillctl run (root)", "den": "baseline client (root)", "goal": None},
    ]
json.dump({"variants": variants, "ratios": ratios}, sys.stdout)' "${USERS[0]}" >"$T/spec.json"

echo "== latency: $N interleaved rounds (root skips polkit; ${USERS[0]} is authorized by polkit each run)"
/usr/bin/python3 "$SRC/bench/interleave.py" "$N" 2 "$T/spec.json"
echo

# ---- 2b. Where a run's time goes ----
# The timestamps the service and the engine keep anyway (the run's Created, Started and Finished,
# the result's started_at and ended_at), between the client's own start and end: no tracing,
# nothing added to the run. Root, as in the latency rounds; each run in a directory of its own
# so that its skill-out/ID is the only one.
PHASE_RUNS=${SKILLD_BENCH_PHASE_RUNS:-5}
echo "== where a run's time goes: root, skillctl run --system -q, one run at a time"
clients=(skillctl)
[[ -z $BASELINE ]] || clients+=("$BASELINE")
for i in $(seq 1 "$PHASE_RUNS"); do
    # With a baseline client, the two alternate, and each has its own column.
    for c in "${!clients[@]}"; do
        mkdir -p "$T/phase-$i-$c"
        start=$(date +%s%N)
        (cd "$T/phase-$i-$c" && "${clients[$c]}" run --system -q "$SKILL" >/dev/null)
        end=$(date +%s%N)
        id=$(basename "$T/phase-$i-$c"/skill-out/*)
        skillctl status --json "$id" >"$T/phase-$i-$c/status.json"
        echo "$c $start $end $T/phase-$i-$c/status.json $T/phase-$i-$c/skill-out/$id/result.json"
    done
done | /usr/bin/python3 -c '
import json, statistics, sys
names = ["call: skillctl starts, connects, Run (inspection, authorization, record)",
         "queue: dispatch, run uid, state, worker forked",
         "worker: set-up, follower, until the engine starts",
         "engine: pin, sandbox, scope, the skill, its end",
         "result: logs and result.json stored, worker reaped",
         "back: RunFinished, GetOutcome, skill-out/ID, exit"]
rows = {}
for line in sys.stdin:
    client, start, end, status, result = line.split()
    st, res = json.load(open(status)), json.load(open(result))
    t = [int(start) / 1000, st["created_usec"], st["started_usec"], res["started_at_usec"],
         res["ended_at_usec"], st["finished_usec"], int(end) / 1000]
    rows.setdefault(client, []).append([(t[k + 1] - t[k]) / 1000 for k in range(len(names))] +
                                       [(t[-1] - t[0]) / 1000])
cols = sorted(rows)
n = len(rows[cols[0]])
print("%-72s" % ("phase (median of %d runs, ms)" % n) + ("" if len(cols) == 1 else " %10s %10s" % ("skillctl", "baseline")))
for k, name in enumerate(names + ["total"]):
    print("%-72s" % name + "".join(" %10.1f" % statistics.median(r[k] for r in rows[c]) for c in cols))
'
echo

# ---- 3. Throughput from two users ----
# Each stream runs the skill again and again until the time is up and logs each client's exit
# status; the store must then hold exactly that many new runs of the user, all succeeded.
stream() {          # USER INDEX DEADLINE_NS
    local u=$1 i=$2 deadline=$3 rc
    while [[ $(date +%s%N) -lt $deadline ]]; do
        rc=0
        (cd "$T/cwd-$u" && setpriv --reuid="$u" --regid="$u" --init-groups --reset-env \
            skillctl run --system -q "$SKILL" >/dev/null 2>>"$T/tp-$u-$i.err") || rc=$?
        echo "$rc" >>"$T/tp-$u-$i.rc"
    done
}
list_json() {       # USER: the user's runs as JSON
    (cd / && setpriv --reuid="$1" --regid="$1" --init-groups --reset-env skillctl list --json)
}
for u in "${USERS[@]}"; do list_json "$u" >"$T/before-$u.json"; done
tp_start=$(date +%s%N)
deadline=$((tp_start + SECONDS_TP * 1000000000))
for u in "${USERS[@]}"; do
    for i in $(seq 1 "$STREAMS"); do
        : >"$T/tp-$u-$i.rc"
        stream "$u" "$i" "$deadline" &
    done
done
wait
tp_ns=$(( $(date +%s%N) - tp_start ))

echo "== throughput: ${USERS[*]}, $STREAMS streams each, ${SECONDS_TP} s"
total=0 failed=0
for u in "${USERS[@]}"; do
    list_json "$u" >"$T/after-$u.json"
    n=$(cat "$T"/tp-"$u"-*.rc | wc -l)
    bad=$(cat "$T"/tp-"$u"-*.rc | grep -cv '^0$' || true)
    # The runs the store gained for this user, and how they ended.
    read -r new ok < <(/usr/bin/python3 -c '
import json, sys
before = {r["id"] for r in json.load(open(sys.argv[1]))}
new = [r for r in json.load(open(sys.argv[2])) if r["id"] not in before]
ok = [r for r in new if r["state"] == "finished" and r["status"] == "succeeded" and r["exit_code"] == 0]
print(len(new), len(ok))' "$T/before-$u.json" "$T/after-$u.json")
    printf '%-8s %6d runs by the clients, %d failed; %d new in the store, %d finished and succeeded\n' \
        "$u" "$n" "$bad" "$new" "$ok"
    [[ $bad == 0 ]] || { echo "  first errors:"; cat "$T"/tp-"$u"-*.err | head -n 5 | sed 's/^/  /'; }
    [[ $bad == 0 && $new == "$n" && $ok == "$n" ]] || failed=1
    total=$((total + n))
done
awk -v n="$total" -v ns="$tp_ns" 'BEGIN { printf "%d runs in %.2f s: %.1f runs/s (goal 100)\n", n, ns / 1e9, n / (ns / 1e9) }'
[[ $failed == 0 ]] && echo "nothing lost: every client exited 0, every run is in the store, finished and succeeded" ||
    echo "RUNS LOST OR FAILED (see above)"
echo

# ---- 4. Idle RSS ----
sleep 2
read -r rss anon file pss private <<<"$(rss_of_skilld)"
read -r rss0 anon0 file0 pss0 private0 <<<"$rss_fresh"
echo "== skilld's RSS when idle (KiB; goal 4096)"
printf '%-34s %8s %8s %8s %8s %8s\n' "" VmRSS RssAnon files Pss private
printf '%-34s %8s %8s %8s %8s %8s\n' "idle after activation and one run" "$rss0" "$anon0" "$file0" "$pss0" \
    "$private0"
printf '%-34s %8s %8s %8s %8s %8s\n' "after the $((N + 2)) x 4 + $total runs" "$rss" "$anon" "$file" "$pss" \
    "$private"
echo "the largest parts after activation and one run (KiB, by mapping):"
echo "$mappings_fresh"
echo "the largest parts after all the runs (KiB, by mapping):"
rss_by_mapping 12 | sed 's/^/  /'
echo

echo "== cold: first call after activation (skilld stopped before each; median of $COLD)"
printf 'skillctl run --system, root: %s ms (each: %s)\n' "$(printf '%s\n' "${cold_run[@]}" | median)" "${cold_run[*]}"
echo

# ---- 5. skillctl list over a store of $STORED runs ----
if [[ $STORED -gt 0 ]]; then
    template=$(/usr/bin/python3 -c '
import json, sys
print(next(r["id"] for r in json.load(open(sys.argv[1])) if r["status"] == "succeeded"))' "$T/after-${USERS[0]}.json")
    stored_before=$(find "$STATE/runs" -mindepth 1 -maxdepth 1 | wc -l)
    systemctl stop skilld.service
    uid0=$(id -u "${USERS[0]}") uid1=$(id -u "${USERS[1]}")
    # The two users own 1 000 each more; 98 service accounts (uids 20000-20097) the rest.
    fill_start=$(date +%s%N)
    /usr/bin/python3 "$SRC/bench/store-fill.py" "$STATE" "$template" "$STORED" \
        "$uid0:1000" "$uid1:1000" "20000-20097:$((STORED - 2000))" >/dev/null
    echo "== skillctl list over $((STORED + stored_before)) stored runs (written in $(ms_since "$fill_start") ms by store-fill.py)"
    mine=$(( $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/after-${USERS[0]}.json") + 1000 ))

    # The first start over records it has never seen reads every one of them (and, where the
    # store keeps an index, writes it): timed apart, with systemd's start timeout lifted.
    mkdir -p /run/systemd/system/skilld.service.d
    printf '[Service]\nTimeoutStartSec=infinity\n' >/run/systemd/system/skilld.service.d/90-bench.conf
    systemctl daemon-reload
    start=$(date +%s%N)
    systemctl start skilld.service
    echo "first start over the new records (systemctl start until the bus name is taken): $(ms_since "$start") ms"
    systemctl stop skilld.service

    # Cold: the call that activates the service. A service slower than D-Bus activation's 25 s
    # fails that call; the time until it answers is shown then.
    start=$(date +%s%N)
    if (cd / && skillctl list --quiet 2>"$T/cold.err" | wc -l) >"$T/count" && [[ ! -s $T/cold.err ]]; then
        echo "cold (activation, loading the store), root, --quiet: $(ms_since "$start") ms, $(cat "$T/count") runs"
    else
        echo "cold, root, --quiet: FAILED after $(ms_since "$start") ms: $(head -c 300 "$T/cold.err")"
        until (cd / && skillctl list --quiet >/dev/null 2>&1); do sleep 1; done
        echo "  the service answered $(ms_since "$start") ms after the first call"
    fi
    rm -f /run/systemd/system/skilld.service.d/90-bench.conf
    systemctl daemon-reload
    read -r rss anon file _ _ <<<"$(rss_of_skilld)"
    echo "skilld's RSS with the store loaded: $rss KiB (anon $anon, file $file)"
    {
        variant "list (newest 100), root" / skillctl list
        variant "list --lines=all, root (all)" / skillctl list --lines=all
        variant "list --quiet, root (all)" / skillctl list --quiet
        variant "list, ${USERS[0]} (newest 100 of $mine)" / "${alice[@]}" skillctl list
    } | /usr/bin/python3 -c '
import json, sys
json.dump({"variants": [json.loads(line) for line in sys.stdin], "ratios": []}, sys.stdout)' >"$T/list.json"
    /usr/bin/python3 "$SRC/bench/interleave.py" "$((N / 3 > 5 ? N / 3 : 5))" 1 "$T/list.json" | sed '/^$/,$d'
    echo "(goal: skillctl list under 50 ms)"
    read -r rss anon file _ _ <<<"$(rss_of_skilld)"
    echo "skilld's RSS after listing: $rss KiB (anon $anon, file $file)"
    echo
fi

[[ $failed == 0 ]]
