#!/bin/bash
# The ways skills' own instructions run them, through the built skillctl, embedded: scripts that
# import the skill's modules from its root (as anthropics' skill-creator does). Needs root
# (namespaces); prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}
SKILLS=$SRC/tests/sandbox/skills

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP skillctl runs need root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
        n=$((n + 1)); failed=$((failed + 1))
        echo "not ok $n - $1"; shift
        for l in "$@"; do echo "# $l"; done
}
check() {
        local what=$1; shift
        if "$@"; then ok "$what"; else
                not_ok "$what" "command: $*" "stdout: $(head -c 2000 "$T/out")" "stderr: $(head -c 2000 "$T/err")"
        fi
}
# --local: the embedded engine; tests/vm covers the service.
run() { "$SKILLCTL" run --local -q "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
rc() { cat "$T/rc"; }

# A copy, so that the modes are the ones git does not keep (the sandbox user needs to read it).
cp -r "$SKILLS/skill-root" "$T/skill-root"
chmod -R a+rX "$T/skill-root"

# Skill-root imports: by path, a script's own folder is on sys.path, not the skill root.
run "$T/skill-root" --script scripts/tool.py -- hi
check "python script by path imports scripts.helper" grep -qx 'helper says hi' "$T/out"
run "$T/skill-root" --script scripts/tool.js -- hi
check "node script: relative requires and one from the skill root" grep -qx 'helper says hi' "$T/out"
run "$T/skill-root" --script scripts/tool.py --env PYTHONPATH=/tmp
check "callers still may not set PYTHONPATH" test "$(rc)" = 125

echo "1..$n"
[ "$failed" = 0 ]
