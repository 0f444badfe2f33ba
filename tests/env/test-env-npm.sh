#!/bin/bash
# Environments from npm: npm ci --omit=dev --ignore-scripts from the committed lockfile of
# fixtures/skills/node-ms, against the registry npm is configured with on this machine; the run
# finds the packages for ESM import and require() alike, offline. A package.json without a
# lockfile is refused by name. Needs root (namespaces). Exit 77 (skipped) when no registry
# answers. Prints TAP lines.
set -u

SKILLCTL=${SKILLCTL:?}
F=${SKILLD_SOURCE_ROOT:?}/tests/env/fixtures/skills

if [ "$(id -u)" != 0 ]; then
        echo "# SKIP skillctl run needs root here"
        exit 77
fi
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
        echo "# SKIP npm and node are not installed"
        exit 77
fi
if ! timeout 60 npm view ms@2.1.3 version >/dev/null 2>&1; then
        echo "# SKIP no npm registry answers"
        exit 77
fi

T=$(mktemp -d)
. "$SKILLD_SOURCE_ROOT/tests/env/lib.sh"
trap cleanup EXIT
cd "$T" || exit 1
export XDG_CACHE_HOME=$T/cache


S=$T/node-ms
cp -r "$F/node-ms" "$S"
sk run --local -q --script scripts/main.mjs "$S"
check "unbuilt: the run fails with 122 naming the npm packages" \
        bash -c "[ \"\$(cat '$T/rc')\" = 122 ] && grep -q 'npm packages ms, nanoid' '$T/err'"
sk env build --local --json "$S"
check "env build runs npm ci from the lockfile" rc_is 0
check "the manifest has the locked versions" bash -c "grep -q '\"5.0.9\"' '$T/out' && grep -q '\"2.1.3\"' '$T/out'"
sk run --local -q --script scripts/main.mjs "$S"
check "ESM import and require() find the packages" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q 'id length 21, 2 days = 172800000 ms' '$T/out' && grep -q 'from /env/node/node_modules/ms' '$T/out'"
sk run --local -q --script scripts/require.cjs "$S"
check "a CommonJS script requires them" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && grep -q '1h = 3600000 ms' '$T/out'"

N=$T/nolock
cp -r "$S" "$N"
rm "$N/package-lock.json"
sed -i 's/^name: node-ms/name: nolock/' "$N/SKILL.md"
sk env build --local "$N"
check "package.json without a lockfile is refused, saying what to do" \
        bash -c "[ \"\$(cat '$T/rc')\" != 0 ] && grep -q 'no package-lock.json' '$T/err'"

finish
