#!/bin/bash
# Times N sequential runs of a trivial shell skill and of the Python example (json-transform)
# three ways: bare (the interpreter on the script, no isolation), bwrap with comparable
# isolation (when installed), and `skillctl run` (the embedded engine). Prints the median wall
# time of each and its ratio to bare. A benchmark, not a test: nothing here passes or fails.
#
# Usage: bench/run-bench.sh [N] [BUILD_DIR]      (defaults: 20, build)
# Needs root where the sandbox needs it (namespaces without unprivileged user namespaces).
set -euo pipefail

N=${1:-20}
BUILD=${2:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
SKILLCTL=$(cd "$BUILD" && pwd)/skillctl/skillctl
PY_SKILL=$SRC/examples/skills/json-transform
INPUT='{"numbers": [1, 2, 3, 4], "text": "the quick brown fox"}'

[ -x "$SKILLCTL" ] || { echo "bench: $SKILLCTL not built (meson compile -C $BUILD)" >&2; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The trivial shell skill.
mkdir -p "$T/shell/scripts"
cat >"$T/shell/SKILL.md" <<'MD'
---
name: shell
description: Prints one JSON line; the smallest possible skill.
---
MD
printf '#!/bin/bash\necho "{\\"ok\\": true}"\n' >"$T/shell/scripts/main.sh"
chmod -R a+rX "$T/shell"
printf '%s' "$INPUT" >"$T/input.json"

now_ns() { date +%s%N; }

# Runs "$@" N times (after one warm-up), prints the median in milliseconds.
median_ms() {
        local times=() start end
        "$@" >/dev/null 2>&1 || { echo "bench: failed: $*" >&2; return 1; }
        for _ in $(seq "$N"); do
                start=$(now_ns)
                "$@" >/dev/null 2>&1
                end=$(now_ns)
                times+=($(( (end - start) / 1000 )))
        done
        printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END {
                m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
                printf "%.2f\n", m / 1000 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

bare_shell() { /usr/bin/bash "$T/shell/scripts/main.sh" </dev/null; }
# The same interpreter the sandbox uses (a python3 earlier in PATH, a pyenv shim say, would
# measure something else).
bare_py() {
        SKILL_INPUT_FILE="$T/input.json" SANDBOX_OUTPUT="$T/bare-out.json" \
                /usr/bin/python3 "$PY_SKILL/scripts/main.py" <"$T/input.json"
}

# bwrap with what the engine sets up: every namespace, read-only /usr and the skill, private
# /proc, /dev and tmpfs work, tmp and out directories, a clean environment, no capabilities, a
# new session, the same uid change when root.
bwrap_run() {
        local skill=$1; shift
        local uid_args=()
        [ "$(id -u)" = 0 ] && uid_args=(--unshare-user --uid 2147000000 --gid 2147000000)
        bwrap --unshare-all "${uid_args[@]}" --die-with-parent --new-session --cap-drop ALL \
                --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin \
                --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
                --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache \
                --ro-bind-try /etc/alternatives /etc/alternatives \
                --ro-bind-try /etc/ssl/certs /etc/ssl/certs \
                --proc /proc --dev /dev --tmpfs /tmp --tmpfs /work --tmpfs /out --dir /out/files \
                --ro-bind "$skill" /skill --ro-bind "$T/input.json" /run/skill/input.json --chdir /work \
                --clearenv --setenv PATH /usr/bin:/bin --setenv HOME /home/skill --setenv LANG C.UTF-8 \
                --setenv SKILL_INPUT_FILE /run/skill/input.json --setenv SANDBOX_OUTPUT /out/output.json \
                --setenv SANDBOX_INPUT "$INPUT" \
                "$@" <"$T/input.json"
}
bwrap_shell() { bwrap_run "$T/shell" /usr/bin/bash /skill/scripts/main.sh; }
bwrap_py() { bwrap_run "$PY_SKILL" /usr/bin/python3 /skill/scripts/main.py; }

skillctl_shell() { "$SKILLCTL" run -q --output-dir "$T/out" "$T/shell"; }
skillctl_py() { "$SKILLCTL" run -q --output-dir "$T/out" "$PY_SKILL" --input "$INPUT"; }

have_bwrap=false
command -v bwrap >/dev/null && bwrap_shell >/dev/null 2>&1 && have_bwrap=true

printf 'skilld benchmark: %s sequential runs each, median wall time (kernel %s, %s CPUs)\n\n' \
        "$N" "$(uname -r)" "$(nproc)"
printf '%-14s %-10s %10s %10s\n' "skill" "how" "median ms" "x bare"
for kind in shell py; do
        label=$([ "$kind" = shell ] && echo "trivial shell" || echo "python")
        bare=$(median_ms "bare_$kind")
        printf '%-14s %-10s %10s %10s\n' "$label" "bare" "$bare" "1.0"
        if $have_bwrap; then
                b=$(median_ms "bwrap_$kind")
                printf '%-14s %-10s %10s %10s\n' "$label" "bwrap" "$b" "$(ratio "$b" "$bare")"
        fi
        s=$(median_ms "skillctl_$kind")
        printf '%-14s %-10s %10s %10s\n' "$label" "skillctl" "$s" "$(ratio "$s" "$bare")"
done
$have_bwrap || echo "(bwrap not installed or not usable here: its rows are left out)"
