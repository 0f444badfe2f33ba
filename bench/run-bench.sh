#!/bin/bash
# Times a trivial shell skill and the Python example (json-transform) three ways, interleaved in
# one run (bench/interleave.py: every round runs each variant once, in a shuffled order): bare
# (the interpreter on the script, no isolation), bwrap with comparable isolation (when
# installed; as root also with skillctl's own seccomp filter), and `skillctl run` (the embedded
# engine). Prints medians and the ratios issue 15
# sets goals for. A benchmark, not a test: nothing here passes or fails.
#
# Usage: bench/run-bench.sh [ROUNDS] [BUILD_DIR] [BASELINE_BUILD_DIR]     (defaults: 30, build)
# A baseline build (another commit's build directory) adds its skillctl to the same rounds, and
# the ratios of the two: a change measured before and after under the same load.
# Needs root where the sandbox needs it (namespaces without unprivileged user namespaces).
set -euo pipefail

N=${1:-30}
BUILD=${2:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
SKILLCTL=$(cd "$BUILD" && pwd)/skillctl/skillctl
BASELINE=
if [ -n "${3:-}" ]; then
        BASELINE=$(cd "$3" && pwd)/skillctl/skillctl
        [ -x "$BASELINE" ] || { echo "bench: $BASELINE not built" >&2; exit 1; }
fi
PY_SKILL=$SRC/examples/skills/json-transform
INPUT='{"numbers": [1, 2, 3, 4], "text": "the quick brown fox"}'

[ -x "$SKILLCTL" ] || { echo "bench: $SKILLCTL not built (meson compile -C $BUILD)" >&2; exit 1; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The seccomp cache keeps one entry per program name and variant (skilld/sandbox/seccomp-cache.c):
# two builds both called skillctl would replace each other's entry at every run and both generate
# their programs each time. The baseline runs under a name of its own.
if [ -n "$BASELINE" ]; then
        ln -s "$BASELINE" "$T/skillctl-baseline"
        BASELINE=$T/skillctl-baseline
fi

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

# bwrap with what the engine sets up: every namespace, read-only /usr and the skill, private
# /proc, /dev and tmpfs work, tmp and out directories, a clean environment, no capabilities, a
# new session, the same uid change when root.
bwrap_argv() {
        local skill=$1; shift
        local uid_args=()
        [ "$(id -u)" = 0 ] && uid_args=(--unshare-user --uid 2147000000 --gid 2147000000)
        printf '%s\0' bwrap --unshare-all "${uid_args[@]}" --die-with-parent --new-session --cap-drop ALL \
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
                "$@"
}

# One variant: NAME STDIN ARGV... as a JSON object (argv read NUL-separated, so nothing is
# re-split by the shell). FILTER_FD=N in the environment passes the seccomp filter as fd N.
variant() {
        local name=$1 stdin=$2; shift 2
        printf '%s\0' "$@" | /usr/bin/python3 -c '
import json, os, sys
argv = sys.stdin.buffer.read().decode().split("\0")[:-1]
v = {"name": sys.argv[1], "stdin": sys.argv[2] or None, "argv": argv}
if os.environ.get("FILTER_FD"):
    v["fds"] = {os.environ["FILTER_FD"]: sys.argv[3]}
print(json.dumps(v))' "$name" "$stdin" "$T/filter.bpf"
}

have_bwrap=false
if command -v bwrap >/dev/null; then
        mapfile -d '' probe < <(bwrap_argv "$T/shell" /usr/bin/bash /skill/scripts/main.sh)
        "${probe[@]}" </dev/null >/dev/null 2>&1 && have_bwrap=true
fi

# bwrap again with the seccomp filter skillctl loads into the skill process (--seccomp, the
# program taken from the engine's cache after a first run: skilld/sandbox/seccomp-cache.c's
# header and key skipped): then only the cgroup limits, the run uid's check against the user
# database and the durable record are the engine's alone. The program asks skillctl's listener
# about refused calls; without one the kernel answers those ENOSYS, which neither skill makes.
have_filter=false
if $have_bwrap && [ "$(id -u)" = 0 ]; then
        "$SKILLCTL" run --local -q --output-dir "$T/out" "$T/shell" </dev/null >/dev/null 2>&1 || true
        entry=/run/skilld/seccomp/$(basename "$SKILLCTL").notify.bpf
        if [ -f "$entry" ] && /usr/bin/python3 - "$entry" "$T/filter.bpf" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
if data[:14] != b"skilld-seccomp":
    sys.exit(1)
key_size, n = struct.unpack_from("=II", data, 16)
program = data[32 + key_size:32 + key_size + 8 * n]
if len(program) != 8 * n or n == 0:
    sys.exit(1)
open(sys.argv[2], "wb").write(program)
PY
        then
                mapfile -d '' probe < <(bwrap_argv "$T/shell" --seccomp 9 /usr/bin/bash /skill/scripts/main.sh)
                "${probe[@]}" </dev/null >/dev/null 2>&1 9<"$T/filter.bpf" && have_filter=true
        fi
fi

{
        # The same interpreter the sandbox uses (a python3 earlier in PATH, a pyenv shim say,
        # would measure something else).
        variant "shell bare" "" /usr/bin/bash "$T/shell/scripts/main.sh"
        if $have_bwrap; then
                mapfile -d '' a < <(bwrap_argv "$T/shell" /usr/bin/bash /skill/scripts/main.sh)
                variant "shell bwrap" "" "${a[@]}"
        fi
        if $have_filter; then
                mapfile -d '' a < <(bwrap_argv "$T/shell" --seccomp 9 /usr/bin/bash /skill/scripts/main.sh)
                FILTER_FD=9 variant "shell bwrap+filter" "" "${a[@]}"
        fi
        variant "shell skillctl" "" "$SKILLCTL" run --local -q --output-dir "$T/out" "$T/shell"
        [ -z "$BASELINE" ] ||
                variant "shell baseline" "" "$BASELINE" run --local -q --output-dir "$T/out" "$T/shell"
        variant "python bare" "$T/input.json" /usr/bin/env SKILL_INPUT_FILE="$T/input.json" \
                SANDBOX_OUTPUT="$T/bare-out.json" /usr/bin/python3 "$PY_SKILL/scripts/main.py"
        if $have_bwrap; then
                mapfile -d '' a < <(bwrap_argv "$PY_SKILL" /usr/bin/python3 /skill/scripts/main.py)
                variant "python bwrap" "$T/input.json" "${a[@]}"
        fi
        if $have_filter; then
                mapfile -d '' a < <(bwrap_argv "$PY_SKILL" --seccomp 9 /usr/bin/python3 /skill/scripts/main.py)
                FILTER_FD=9 variant "python bwrap+filter" "$T/input.json" "${a[@]}"
        fi
        variant "python skillctl" "" "$SKILLCTL" run --local -q --output-dir "$T/out" "$PY_SKILL" \
                --input "$INPUT"
        [ -z "$BASELINE" ] || variant "python baseline" "" "$BASELINE" run --local -q --output-dir "$T/out" \
                "$PY_SKILL" --input "$INPUT"
        if [ -n "$BASELINE" ]; then
                # Start-up alone: both binaries' --version.
                variant "start-up skillctl" "" "$SKILLCTL" --version
                variant "start-up baseline" "" "$BASELINE" --version
        fi
} | /usr/bin/python3 -c '
import json, sys
variants = [json.loads(line) for line in sys.stdin]
ratios = [
    {"label": "shell: skillctl / bwrap", "num": "shell skillctl", "den": "shell bwrap", "goal": 1.0},
    {"label": "shell: skillctl / bare", "num": "shell skillctl", "den": "shell bare", "goal": None},
    {"label": "python: skillctl / bare", "num": "python skillctl", "den": "python bare", "goal": 1.10},
    {"label": "python: skillctl / bwrap", "num": "python skillctl", "den": "python bwrap", "goal": None},
    {"label": "python: bwrap / bare", "num": "python bwrap", "den": "python bare", "goal": None},
    {"label": "shell: skillctl / bwrap+filter", "num": "shell skillctl", "den": "shell bwrap+filter",
     "goal": None},
    {"label": "python: skillctl / bwrap+filter", "num": "python skillctl", "den": "python bwrap+filter",
     "goal": None},
    {"label": "shell: bwrap+filter / bwrap", "num": "shell bwrap+filter", "den": "shell bwrap", "goal": None},
    {"label": "shell: skillctl / baseline", "num": "shell skillctl", "den": "shell baseline", "goal": None},
    {"label": "python: skillctl / baseline", "num": "python skillctl", "den": "python baseline", "goal": None},
    {"label": "start-up: skillctl / baseline", "num": "start-up skillctl", "den": "start-up baseline",
     "goal": None},
]
json.dump({"variants": variants, "ratios": ratios}, sys.stdout)' >"$T/spec.json"

printf 'skilld benchmark: %s interleaved rounds (kernel %s, %s CPUs, %s)\n\n' \
        "$N" "$(uname -r)" "$(nproc)" "$([ "$(id -u)" = 0 ] && echo root || echo unprivileged)"
/usr/bin/python3 "$SRC/bench/interleave.py" "$N" 2 "$T/spec.json"
$have_bwrap || echo "(bwrap not installed or not usable here: its rows are left out)"
