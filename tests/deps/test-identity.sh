#!/bin/bash
# One identity: the content hash, `skill package` and what a run executes agree. A vendored
# node_modules is code (hashed, packaged, run from the package too); __pycache__ and *.pyc are
# caches left out of the hash, and the sandbox hides them, so a planted .pyc never runs. Needs
# root (namespaces) like the other skillctl run tests; prints TAP.
set -u

SKILLCTL=${SKILLCTL:?}
PYTHON=/usr/bin/python3

if [ "$(id -u)" != 0 ]; then
        echo "1..0 # SKIP skillctl run needs root here"
        exit 0
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

. "$(dirname "$0")/../lib/tap.sh"
run() { "$SKILLCTL" run --local -q "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/rc"; }
hash_of() { "$SKILLCTL" skill show --json "$1" | $PYTHON -c 'import json,sys; print(json.load(sys.stdin)["content_hash"])'; }

# ---- a planted __pycache__ entry and a stray sourceless .pyc -------------------------------------
S=$T/planted
mkdir -p "$S/scripts" "$T/evil"
printf -- '---\nname: planted\ndescription: Imports a sibling module.\n---\nRun main.py.\n' >"$S/SKILL.md"
printf 'import helper\nprint("helper says", helper.who())\n' >"$S/scripts/main.py"
printf 'def who():\n    return "source"\n' >"$S/scripts/helper.py"
printf 'def who():\n    return "PLANTED"\n' >"$T/evil/helper.py"
printf 'def who():\n    return "PLANTED-SOURCELESS"\n' >"$T/evil/stray.py"
before=$(hash_of "$S")

# Unchecked-hash .pyc files: CPython loads them without looking at the source at all.
$PYTHON - "$T/evil" "$S/scripts" <<'PY'
import py_compile, sys
evil, scripts = sys.argv[1], sys.argv[2]
mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
py_compile.compile(f"{evil}/helper.py", cfile=f"{scripts}/__pycache__/helper.cpython-311.pyc",
                   invalidation_mode=mode, doraise=True)
py_compile.compile(f"{evil}/stray.py", cfile=f"{scripts}/stray.pyc", invalidation_mode=mode, doraise=True)
PY
check "the host's python3 would run the planted .pyc" \
        sh -c "cd '$S/scripts' && $PYTHON -c 'import helper; print(helper.who())' | grep -qx PLANTED"

check "the hash leaves the caches out" test "$(hash_of "$S")" = "$before"
run "$S"
check "a run with a planted __pycache__ succeeds" test "$(cat "$T/rc")" = 0
check "the run executed the hashed source, not the planted .pyc" grep -qx 'helper says source' "$T/out"
check "nothing planted ran" sh -c "! grep -q PLANTED '$T/out'"

printf 'import stray\nprint(stray.who())\n' >"$S/scripts/main.py"
run "$S"
# The import scan sees no source for stray, so it is a package to install: the run stops before
# its script with skillctl's message naming it (skilld/env), else Python's own error.
check "a sourceless .pyc cannot be imported in a run" \
        sh -c "grep -q \"No module named 'stray'\" '$T/err' || grep -q 'Python packages stray' '$T/err'"
check "the sourceless .pyc did not run" sh -c "! grep -q PLANTED '$T/out'"

"$SKILLCTL" skill package "$S" -o "$T/planted.skill" >/dev/null 2>"$T/err"
check "the package leaves the caches out" \
        sh -c "! $PYTHON -m zipfile -l '$T/planted.skill' | grep -Eq '__pycache__|\\.pyc'"

# An archive from another tool may carry the planted cache: the run hides it just the same.
printf 'import helper\nprint("helper says", helper.who())\n' >"$S/scripts/main.py"
(cd "$T" && $PYTHON -c 'import os, zipfile
with zipfile.ZipFile("other-tool.skill", "w") as z:
    for root, dirs, files in os.walk("planted"):
        for f in files:
            z.write(os.path.join(root, f))')
check "the other tool's archive holds the planted .pyc" \
        sh -c "$PYTHON -m zipfile -l '$T/other-tool.skill' | grep -q 'helper.cpython-311.pyc'"
run "$T/other-tool.skill"
check "a run of that archive executes the hashed source" grep -qx 'helper says source' "$T/out"

# ---- a vendored node_modules package -------------------------------------------------------------
V=$T/vendored
mkdir -p "$V/scripts/node_modules/left-pad"
printf -- '---\nname: vendored\ndescription: Uses a vendored npm package.\n---\nRun main.js.\n' >"$V/SKILL.md"
printf 'const pad = require("left-pad");\nconsole.log("[" + pad("x", 3) + "]");\n' >"$V/scripts/main.js"
printf '{"name": "left-pad", "version": "1.3.0", "main": "index.js"}\n' \
        >"$V/scripts/node_modules/left-pad/package.json"
printf 'module.exports = (s, n) => String(s).padStart(n);\n' >"$V/scripts/node_modules/left-pad/index.js"

h1=$(hash_of "$V")
run "$V"
check "the vendored package runs from the folder" grep -qx '\[  x\]' "$T/out"
printf 'module.exports = (s, n) => "changed";\n' >"$V/scripts/node_modules/left-pad/index.js"
h2=$(hash_of "$V")
check "changing vendored code changes the hash" test "$h1" != "$h2"

"$SKILLCTL" skill package "$V" -o "$T/vendored.skill" >/dev/null 2>"$T/err"
check "the package holds node_modules" \
        sh -c "$PYTHON -m zipfile -l '$T/vendored.skill' | grep -q 'vendored/scripts/node_modules/left-pad/index.js'"
check "the package hashes as the folder" test "$(hash_of "$T/vendored.skill")" = "$h2"
run "$T/vendored.skill"
check "the vendored package runs from the package" grep -qx '\[changed\]' "$T/out"

tap_finish
