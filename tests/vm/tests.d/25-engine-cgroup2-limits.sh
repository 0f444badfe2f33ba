#!/bin/bash
# skillctl run, embedded, as root under real cgroup v2: the engine's cgroup2 backend starts the run
# in its own cgroup (clone3 into it) whose memory.max, memory.swap.max, pids.max and cpu.max hold
# the asked limits while it runs, the CPU quota holds the skill's CPU use to its share, the cgroup
# is gone after, and the result names the backend.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"

work=$(mktemp -d /var/tmp/engine-cg2-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/burn/scripts"
printf -- '---\nname: burn\ndescription: Spins on the CPU for four seconds.\n---\nBurn.\n' \
        >"$work/burn/SKILL.md"
cat >"$work/burn/scripts/main.sh" <<'SH'
#!/bin/bash
end=$((SECONDS + 4))
while [ "$SECONDS" -lt "$end" ]; do :; done
echo '{"done": true}'
SH
chmod -R a+rX "$work"

skillctl -v run --local --json --cpu 25 --memory 96M --tasks 17 --timeout 60 \
        --output-dir "$work/out" "$work/burn" >"$work/result.json" 2>"$work/err" &
pid=$!

# Read the run's cgroup files while it runs (the engine names it skilld/run-<id>).
cg=
for _ in $(seq 1 100); do
        cg=$(find /sys/fs/cgroup/skilld -maxdepth 1 -type d -name 'run-*' 2>/dev/null | head -n 1 || true)
        [ -n "$cg" ] && [ -e "$cg/cpu.max" ] && break
        sleep 0.1
done
[ -n "$cg" ] || fail "no run cgroup appeared under /sys/fs/cgroup/skilld"
echo "cgroup: $cg"
assert_eq "100663296" "$(cat "$cg/memory.max")" "memory.max"
assert_eq "0" "$(cat "$cg/memory.swap.max")" "memory.swap.max"
assert_eq "17" "$(cat "$cg/pids.max")" "pids.max"
assert_eq "25000 100000" "$(cat "$cg/cpu.max")" "cpu.max"

wait "$pid" || fail "skillctl run failed: $(cat "$work/err")"
[ ! -e "$cg" ] || fail "the run's cgroup $cg is left behind"
# Born in it (clone3 with CLONE_INTO_CGROUP), not moved there afterwards: -v says which.
grep -q "cloned into its cgroup" "$work/err" ||
        fail "the init was not cloned into its cgroup: $(grep -i cgroup "$work/err" || true)"

# The result: the backend, and CPU use held to the quota. A quarter of a CPU over four seconds of
# wall time is about one second; busy host or not, the quota can only lower it, so the bound is
# safe against noise: at most half of the wall time.
python3 - "$work/result.json" <<'PY' || fail "result does not show the cgroup2 backend enforcing the quota"
import json, sys
r = json.load(open(sys.argv[1]))
u = r["usage"]
cpu = u["user_usec"] + u["system_usec"]
print("backend", r["limits"]["backend"], "status", r["status"], "wall", u["wall_usec"], "cpu", cpu)
assert r["limits"]["backend"] == "cgroup2", r["limits"]["backend"]
assert "cpu" in r["limits"]["enforced"], r["limits"]["enforced"]
assert r["status"] == "succeeded", r["status"]
assert u["wall_usec"] >= 3_000_000, u  # bash SECONDS ticks in whole seconds
assert 0 < cpu <= u["wall_usec"] / 2, (cpu, u["wall_usec"])
PY
