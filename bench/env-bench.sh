#!/bin/bash
# What a skill environment adds to a run: the same stdlib-only Python script run with
# `skillctl run --local` from two skills that differ only in a requirements.txt (tabulate, from
# Debian's archive), the second with its environment built. The runs alternate, so machine noise
# hits both alike; prints each median and the difference (the environment's cost: finding it, the
# bind mount at /env, the search paths and the interpreter reading them). A benchmark, not a test.
#
# Usage: bench/env-bench.sh [N] [BUILD_DIR]      (defaults: 40, build)
# Needs root where the sandbox needs it, and an apt source for the one-time build.
set -euo pipefail

N=${1:-40}
BUILD=${2:-build}
SKILLCTL=$(cd "$BUILD" && pwd)/skillctl/skillctl
[ -x "$SKILLCTL" ] || { echo "bench: $SKILLCTL not built (meson compile -C $BUILD)" >&2; exit 1; }

T=$(mktemp -d)
trap 'chmod -R u+w "$T"; rm -rf "$T"' EXIT
export XDG_CACHE_HOME=$T/cache

for s in plain withenv; do
        mkdir -p "$T/$s/scripts"
        printf -- '---\nname: %s\ndescription: Prints one JSON line from Python.\n---\n' "$s" >"$T/$s/SKILL.md"
        printf 'import json\nprint(json.dumps({"ok": True}))\n' >"$T/$s/scripts/main.py"
done
printf 'tabulate\n' >"$T/withenv/requirements.txt"
"$SKILLCTL" env build --local "$T/withenv" >/dev/null 2>"$T/build.log" || {
        echo "bench: building the environment failed:" >&2; cat "$T/build.log" >&2; exit 1; }

now_ns() { date +%s%N; }
run() { "$SKILLCTL" run --local -q --output-dir "$T/out" "$T/$1" >/dev/null 2>&1; }
run plain && run withenv || { echo "bench: a run failed" >&2; exit 1; }

a=() b=()
for _ in $(seq "$N"); do
        s=$(now_ns); run plain; e=$(now_ns); a+=($(( (e - s) / 1000 )))
        s=$(now_ns); run withenv; e=$(now_ns); b+=($(( (e - s) / 1000 )))
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f\n", m / 1000 }'; }
ma=$(median "${a[@]}")
mb=$(median "${b[@]}")
printf '%-26s %10s\n' "run" "median ms"
printf '%-26s %10s\n' "python, no environment" "$ma"
printf '%-26s %10s\n' "python, environment at /env" "$mb"
awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%-26s %10.2f\n", "the environment adds", b - a }'
