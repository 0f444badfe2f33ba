#!/bin/bash
# Runs one fuzz target for meson test (and by hand, see README.md in this folder).
#
#   run-fuzz.sh replay TARGET BINARY WORKDIR [SKILLCTL]
#       Generates the seeds and replays them and the committed regression inputs through the
#       replay driver (no libFuzzer needed): suite 'unit'.
#   run-fuzz.sh fuzz TARGET BINARY WORKDIR SECONDS [SKILLCTL]
#       Fuzzes with libFuzzer for SECONDS from a fresh corpus (the seeds), fixed seed. Any crash,
#       leak, sanitizer report, timeout or out-of-memory fails; the input is kept in
#       WORKDIR/artifacts and printed in base64, ready to become a regression input.
#
# Extra libFuzzer flags can be passed in FUZZ_FLAGS (e.g. FUZZ_FLAGS="-jobs=2 -workers=2").
set -euo pipefail

mode=$1 target=$2 binary=$3 work=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)

# Every sanitizer finding is fatal and explained. These only fill in what the caller left unset.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:print_stacktrace=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

rm -rf "$work"
mkdir -p "$work/seeds" "$work/tmp"
# The targets' scratch directories land here, not in the system's /tmp.
export TMPDIR=$work/tmp

case $mode in
replay)
        skillctl=${1:-}
        python3 "$here/gen-seeds.py" --generated-only "$target" "$work/seeds" \
                ${skillctl:+--skillctl "$skillctl"}
        if [ -d "$here/regressions/$target" ]; then
                exec "$binary" "$here/regressions/$target" "$work/seeds"
        fi
        exec "$binary" "$work/seeds"
        ;;
fuzz)
        seconds=$1 skillctl=${2:-}
        ;;
*)
        echo "run-fuzz.sh: unknown mode $mode" >&2
        exit 2
        ;;
esac

python3 "$here/gen-seeds.py" "$target" "$work/seeds" ${skillctl:+--skillctl "$skillctl"}
mkdir -p "$work/corpus" "$work/artifacts"

flags=(
        -seed=1
        -max_total_time="$seconds"
        -rss_limit_mb=2048
        -malloc_limit_mb=1024
        -timeout=30
        -max_len=65536
        -error_exitcode=1
        -timeout_exitcode=1
        -print_final_stats=1
        -artifact_prefix="$work/artifacts/"
)
if [ -f "$here/dict/$target.dict" ]; then
        flags+=(-dict="$here/dict/$target.dict")
fi

echo "fuzzing $target for ${seconds}s: $binary ${flags[*]} ${FUZZ_FLAGS:-} $work/corpus $work/seeds"
status=0
# shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags on purpose
"$binary" "${flags[@]}" ${FUZZ_FLAGS:-} "$work/corpus" "$work/seeds" || status=$?

found=0
for f in "$work"/artifacts/*; do
        [ -f "$f" ] || continue
        found=1
        echo
        echo "==== finding: $f ($(stat -c %s "$f") bytes)"
        echo "To keep it as a regression input:"
        echo "    base64 -w 76 '$f' > tests/fuzz/regressions/$target/<what-it-is>.b64"
        if [ "$(stat -c %s "$f")" -le 65536 ]; then
                echo "---- base64"
                base64 -w 76 "$f"
                echo "----"
        fi
        echo "Replay: $binary '$f'"
done

if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
        echo "fuzz target $target failed (status $status)" >&2
        exit 1
fi
echo "fuzz target $target: no findings in ${seconds}s"
