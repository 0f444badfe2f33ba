#!/bin/bash
# Environments from pip: wheels built offline from tests/env/fixtures/pip, served as a PEP 503 index
# on 127.0.0.1 by python3 -m http.server (the build's sandbox shares the host's network, so it
# reaches it; runs must not). Covers the build, partial builds, hashes, the run over the tree,
# the missing-environment error, the cache hit, reproducible digests and the lifecycle verbs; then
# the same wheels as a wheelhouse (--find-links, PIP_FIND_LINKS, a pip.conf) with no index at all.
# Needs root (namespaces) like the other skillctl run tests (else exit 77); prints TAP lines.
set -u

SKILLCTL=${SKILLCTL:?}
SRC=${SKILLD_SOURCE_ROOT:?}/tests/env
PYTHON=/usr/bin/python3

if [ "$(id -u)" != 0 ]; then
        echo "# SKIP skillctl run needs root here"
        exit 77
fi
if ! $PYTHON -c 'import setuptools, wheel, pip' 2>/dev/null; then
        echo "# SKIP building the fixture wheels needs python3-pip, python3-setuptools and python3-wheel"
        exit 77
fi

T=$(mktemp -d)
. "$SRC/lib.sh"
trap cleanup EXIT
cd "$T" || exit 1
export XDG_CACHE_HOME=$T/cache
# pip's own configuration reaches embedded builds (this machine sets PIP_FIND_LINKS): none here.
unset PIP_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX
export PIP_CONFIG_FILE=/dev/null

json() { $PYTHON -c "import json,sys; d=json.load(open('$T/out')); print($1)"; }

# ---- the index ---------------------------------------------------------------------------------
start_pip_index

cp -r "$SRC/fixtures/skills/pip-greet" "$T/pip-greet"
S=$T/pip-greet

# ---- before any build: the run does not start --------------------------------------------------
sk run --local -q "$S" -- you
check "without an environment the run fails with 122" rc_is 122
check "and names the package and the build command" \
        bash -c "grep -q 'skilld-shout' '$T/err' && grep -q 'skillctl env build --local' '$T/err' && ! grep -q Traceback '$T/err'"

# ---- the build ----------------------------------------------------------------------------------
sk env build --local --resolvers pip --index-url "$INDEX" --json "$S"
check "env build from the local index succeeds" rc_is 0
ID=$(json 'd["id"]')
check "the manifest lists skilld-shout 2.1 and the skilld-greet it pulled in" \
        bash -c "grep -q '\"skilld-shout\"' '$T/out' && grep -q '\"2.1\"' '$T/out' && grep -q '\"skilld-greet\"' '$T/out'"
DIGEST1=$(json 'd["manifest"]["digest"]')
check "the environment is read-only" bash -c "[ ! -w '$XDG_CACHE_HOME/skilld/envs/$ID/python' ] || [ \$(stat -c %a '$XDG_CACHE_HOME/skilld/envs/$ID/python') = 555 ]"
check "no build leftovers stay in the cache" bash -c "! ls -a '$XDG_CACHE_HOME/skilld/envs' | grep -q '^.build-'"

# ---- the run ------------------------------------------------------------------------------------
sk run --local -q --env INDEX_PORT="$PORT" "$S" -- you
check "the run imports from the environment" bash -c "rc_is() { [ \"\$(cat '$T/rc')\" = 0 ]; }; rc_is 0 && grep -q 'HELLO, YOU!' '$T/out' && grep -q 'module: /env/python/skilld_shout' '$T/out'"
check "the tree was byte-compiled with unchecked hashes at build time" out_has "pyc: \['__init__.cpython-"
check "the run has no network (the index is unreachable)" out_has "network: unreachable"
sk run --local -q --env PYTHONPATH=/tmp "$S"
check "callers still may not set PYTHONPATH" bash -c "[ \"\$(cat '$T/rc')\" != 0 ] && grep -q PYTHONPATH '$T/err'"

# ---- cache hit, reproducible digest ---------------------------------------------------------------
# (How fast a hit is belongs to bench/, not to a test: the machines are shared and noisy.)
sk env build --local --resolvers pip --index-url "$INDEX" "$S"
check "rebuilding is a cache hit" out_has "is built already"
sk env rm "${ID:0:12}"
check "env rm removes it" bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && [ ! -e '$XDG_CACHE_HOME/skilld/envs/$ID' ]"
sk env build --local --resolvers pip --index-url "$INDEX" --json "$S"
DIGEST2=$(json 'd["manifest"]["digest"]')
check "two clean builds give the same digest" test "$DIGEST1" = "$DIGEST2"

# ---- partial builds: what no source provides is named, the rest is kept ------------------------------
P=$T/partial
cp -r "$S" "$P"
sed -i 's/^name: pip-greet/name: partial/' "$P/SKILL.md"
printf 'skilld-shout==2.1\nskilld-nowhere>=1\n' >"$P/requirements.txt"
sk env build --local --resolvers pip --index-url "$INDEX" "$P"
check "a partial build exits 3" rc_is 3
check "and names the missing package" out_has "missing: python:skilld-nowhere"
sk run --local -q "$P" -- partial
check "the packages that resolved still run" bash -c "grep -q 'HELLO, PARTIAL!' '$T/out'"
printf 'import skilld_nowhere\n' >"$P/scripts/greet.py"
sk run --local -q "$P"
check "an import nothing provides fails with 122, named by skillctl" \
        bash -c "[ \"\$(cat '$T/rc')\" = 122 ] && grep -q \"Python module 'skilld_nowhere' is not in this skill's environment\" '$T/err'"

# ---- hashes are honoured ------------------------------------------------------------------------
H=$T/hashed
cp -r "$S" "$H"
sed -i 's/^name: pip-greet/name: hashed/' "$H/SKILL.md"
printf 'skilld-greet==1.0 --hash=sha256:%064d\n' 0 >"$H/requirements.txt"
sk env build --local --resolvers pip --index-url "$INDEX" "$H"
check "a wrong hash is refused: nothing resolves, the build fails" \
        bash -c "[ \"\$(cat '$T/rc')\" != 0 ] && grep -q 'skilld-greet' '$T/err' && grep -qi 'hash' '$T/err'"
GOOD=$(sha256sum "$T"/wheels/skilld_greet-*.whl | cut -d' ' -f1)
printf 'skilld-greet==1.0 --hash=sha256:%s\n' "$GOOD" >"$H/requirements.txt"
sk env build --local --resolvers pip --index-url "$INDEX" "$H"
check "the right hash is accepted" rc_is 0

check "a failed build leaves nothing behind" bash -c "! ls -a '$XDG_CACHE_HOME/skilld/envs' | grep -q '^.build-'"

# ---- concurrency: two builds of one id build once; a killed build is collected ---------------------
C=$T/concurrent
cp -r "$S" "$C"
sed -i 's/^name: pip-greet/name: concurrent/' "$C/SKILL.md"
printf 'skilld-greet==1.0\n' >"$C/requirements.txt"
"$SKILLCTL" env build --local --resolvers pip --index-url "$INDEX" "$C" >"$T/c1" 2>&1 &
p1=$!
"$SKILLCTL" env build --local --resolvers pip --index-url "$INDEX" "$C" >"$T/c2" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
check "two concurrent builds of one environment both succeed" test "$r1$r2" = 00
check "and only one of them built it" bash -c "[ \$(cat '$T/c1' '$T/c2' | grep -c ' built in ') = 1 ] && cat '$T/c1' '$T/c2' | grep -q 'is built already'"
K=$T/killed
cp -r "$S" "$K"
sed -i 's/^name: pip-greet/name: killed/' "$K/SKILL.md"
printf 'skilld-greet>=1.0\n' >"$K/requirements.txt"
setsid "$SKILLCTL" env build --local --resolvers pip --index-url "$INDEX" "$K" >"$T/k" 2>&1 &
pk=$!
for _ in $(seq 100); do ls -a "$XDG_CACHE_HOME/skilld/envs" | grep -q '^.build-' && break; sleep 0.05; done
kill -KILL -- -"$pk" 2>/dev/null
wait "$pk" 2>/dev/null
sk env gc --json
check "gc removes what a killed build left" bash -c "! ls -a '$XDG_CACHE_HOME/skilld/envs' | grep -q '^.build-'"

# ---- lifecycle ------------------------------------------------------------------------------------
sk env list --json
check "env list --json lists the environments" bash -c "[ \$($PYTHON -c 'import json; print(len(json.load(open(\"$T/out\"))))') -ge 3 ]"
sk env show "$S"
check "env show SKILL shows its environment" bash -c "grep -q 'skilld-shout pip' '$T/out' && grep -q Digest '$T/out'"
sk env gc --max-count 1 --json
check "env gc keeps the most recently used within the cap" \
        bash -c "[ \$($PYTHON -c 'import json; print(len(json.load(open(\"$T/out\"))))') -ge 2 ] && [ \$(ls '$XDG_CACHE_HOME/skilld/envs' | grep -c '^[0-9a-f]\{64\}$') = 1 ]"

# ---- wheelhouses: pip --no-index --find-links, a local folder bound read-only into the build ----
WH=$T/wheelhouse
mkdir -p "$WH"
cp "$T"/wheels/*.whl "$WH/"
# An sdist next to the wheels: --only-binary keeps pip from building it (its build code never runs).
mkdir -p "$T/sdonly/skilld-sdonly-1.0"
printf '[project]\nname = "skilld-sdonly"\nversion = "1.0"\n' >"$T/sdonly/skilld-sdonly-1.0/pyproject.toml"
tar -C "$T/sdonly" -czf "$WH/skilld-sdonly-1.0.tar.gz" skilld-sdonly-1.0
W=$T/wheel-greet
cp -r "$S" "$W"
sed -i 's/^name: pip-greet/name: wheel-greet/' "$W/SKILL.md"
sk env build --local --resolvers pip --find-links "$WH" --json "$W"
check "env build from a wheelhouse alone succeeds" rc_is 0
check "pip saw only the wheelhouse, bound at /mnt/0 (--no-index: no index at all)" \
        bash -c "grep -q 'pip install from --no-index --find-links /mnt/0' '$T/err' && grep -q 'skilld_shout-2.1-py3-none-any.whl' '$T/err'"
check "the wheelhouse is part of the environment's id" out_has "pip-find-links $WH"
WID=$(json 'd["id"]')
sk run --local -q "$W" -- wheel
check "the run imports from the environment" bash -c "grep -q 'HELLO, WHEEL!' '$T/out' && grep -q 'module: /env/python/skilld_shout' '$T/out'"
check "the wheelhouse is left as it was" bash -c "[ \$(ls '$WH' | wc -l) = 3 ]"
(cd "$T" && "$SKILLCTL" env build --local --resolvers pip --find-links ./wheelhouse --json "$W" >"$T/out" 2>"$T/err")
check "a relative --find-links names the same wheelhouse" test "$(json 'd["id"]')" = "$WID"
PIP_FIND_LINKS=$WH sk env build --local --resolvers pip --json "$W"
check "pip's own PIP_FIND_LINKS is honoured (the build's pip --isolated does not read it)" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && [ \"\$($PYTHON -c \"import json; print(json.load(open('$T/out'))['id'])\")\" = '$WID' ]"
printf '[global]\nfind-links =\n    %s\n[install]\nno-index = yes\n' "$WH" >"$T/pip.conf"
PIP_CONFIG_FILE=$T/pip.conf sk env build --local --resolvers pip --json "$W"
check "and so is a pip configuration file" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && [ \"\$($PYTHON -c \"import json; print(json.load(open('$T/out'))['id'])\")\" = '$WID' ]"
sk env build --local --resolvers pip --find-links "$WH" --index-url "$INDEX" --json "$W"
check "an index and a wheelhouse together are another environment" \
        bash -c "[ \"\$(cat '$T/rc')\" = 0 ] && [ \"\$($PYTHON -c \"import json; print(json.load(open('$T/out'))['id'])\")\" != '$WID' ]"

printf 'skilld-shout==2.1\nskilld-sdonly==1.0\n' >"$W/requirements.txt"
sk env build --local --resolvers pip --find-links "$WH" "$W"
check "an sdist in the wheelhouse is not built: a partial build naming it" \
        bash -c "[ \"\$(cat '$T/rc')\" = 3 ] && grep -q 'missing: python:skilld-sdonly' '$T/out'"
printf 'skilld-greet==1.0 --hash=sha256:%064d\n' 0 >"$W/requirements.txt"
sk env build --local --resolvers pip --find-links "$WH" "$W"
check "a wrong hash is refused from a wheelhouse too" bash -c "[ \"\$(cat '$T/rc')\" != 0 ] && grep -qi 'hash' '$T/err'"
printf 'skilld-greet==1.0 --hash=sha256:%s\n' "$GOOD" >"$W/requirements.txt"
sk env build --local --resolvers pip --find-links "$WH" "$W"
check "the right hash is accepted" rc_is 0

sk env build --local --resolvers pip --find-links "$T/nowhere" "$W"
check "a --find-links folder that does not exist is a usage error" \
        bash -c "[ \"\$(cat '$T/rc')\" = 2 ] && grep -q 'find-links .*nowhere: ' '$T/err'"
sk env build --system --find-links "$WH" "$W"
check "the service takes its wheelhouses from its policy, not from --find-links" \
        bash -c "[ \"\$(cat '$T/rc')\" = 2 ] && grep -q 'environments.pip-find-links' '$T/err'"

finish
