#!/bin/bash
# cppcheck over skilld/ and skillctl/ as the build compiles them (compile_commands.json), for
# meson test --suite static. Any finding not suppressed in cppcheck-suppressions.txt (each with
# its reason) fails. Exit 77 (skip) when cppcheck is not installed.
#
#   run-cppcheck.sh BUILD_DIR
set -euo pipefail

build=$1
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v cppcheck >/dev/null; then
        echo "cppcheck is not installed: skipping" >&2
        exit 77
fi

# warning: undefined behaviour and likely bugs; portability; performance. "style" is left out:
# most of what it says here is about _cleanup_ variables that must be initialized at declaration.
exec cppcheck \
        --project="$build/compile_commands.json" \
        --file-filter='*/skilld/*' --file-filter='*/skillctl/*' \
        --enable=warning,portability,performance \
        --std=c11 --library=posix \
        --suppressions-list="$here/cppcheck-suppressions.txt" \
        --inline-suppr \
        --error-exitcode=1 \
        --template='{file}:{line}:{column}: {severity}: {message} [{id}]' \
        --quiet \
        -j "$(nproc)"
