#!/bin/bash
# BuildEnvironment through the real service with the npm resolver, under the unit's hardening:
# the registry comes from npm's own global configuration (npm config get registry, run by the
# build process), npm ci runs in the build's sandbox. The VM has no internet; the tarballs are
# real ones the host fetched (npm pack), served as a registry on 127.0.0.1 (env-sources.inc).
# carol (the admin group) builds a skill with package.json and its lockfile; bob's run then
# requires the package and its dependency from /env, offline.
# npm's installs take minutes under TCG (the build alone about 170 s):
# skilld-vm-timeout: 600
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"
# shellcheck source-path=SCRIPTDIR source=env-sources.inc
. "$(dirname "$0")/env-sources.inc"

daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s\nenvironments:\n  resolvers: [debian, npm]'
work=$PWD
chmod 0755 "$work"
trap env_sources_cleanup EXIT
env_sources_serve npm
echo "npm in $(command -v npm), registry $base/npm/ in $npmrc"

# as USER COMMAND...: stdout, stderr and status kept.
as() {
    local u=$1
    shift
    rc=0
    (cd "$work" && as_user "$u" "$@") >"$work/out" 2>"$work/err" || rc=$?
}
show() { echo "exit $rc; stdout: $(head -c 1500 "$work/out"); stderr: $(tail -c 3000 "$work/err")"; }

# ---- npm: a Node skill with package.json and its lockfile ----------------------------------------
mkdir -p nodeodd/scripts
printf -- '---\nname: nodeodd\ndescription: A test skill of the VM suite that needs npm packages.\n---\n\n# nodeodd\n' \
    >nodeodd/SKILL.md
python3 - "$work/srv/npm" nodeodd <<'PY'
import json, os, sys
reg, skill = sys.argv[1], sys.argv[2]
def dist(name, version):
    return json.load(open(os.path.join(reg, name)))["versions"][version]["dist"]
odd, num = dist("is-odd", "3.0.1"), dist("is-number", "6.0.0")
pkg = {"name": "nodeodd", "version": "1.0.0", "private": True, "dependencies": {"is-odd": "3.0.1"}}
lock = {
    "name": "nodeodd", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
    "packages": {
        "": {"name": "nodeodd", "version": "1.0.0", "dependencies": {"is-odd": "3.0.1"}},
        "node_modules/is-odd": {"version": "3.0.1", "resolved": odd["tarball"], "integrity": odd["integrity"],
                                "dependencies": {"is-number": "^6.0.0"}, "engines": {"node": ">=4"}},
        "node_modules/is-number": {"version": "6.0.0", "resolved": num["tarball"], "integrity": num["integrity"],
                                   "engines": {"node": ">=0.10.0"}},
    },
}
json.dump(pkg, open(os.path.join(skill, "package.json"), "w"), indent=2)
json.dump(lock, open(os.path.join(skill, "package-lock.json"), "w"), indent=2)
PY
cat >nodeodd/scripts/main.js <<'JS'
const isOdd = require('is-odd');
const net = require('net');
console.log(`odd(${process.argv[2]}): ${isOdd(process.argv[2])}`);
console.log(`is-odd: ${require.resolve('is-odd')}`);
const s = net.connect({ host: '127.0.0.1', port: Number(process.argv[3]) });
s.setTimeout(2000);
s.on('connect', () => { console.log('network: reachable'); s.destroy(); });
s.on('error', (e) => console.log(`network: unreachable (${e.code})`));
s.on('timeout', () => { console.log('network: unreachable (timeout)'); s.destroy(); });
JS
chmod -R a+rX nodeodd

as carol skillctl --no-ask-password env build --system nodeodd/
[[ $rc == 0 ]] || fail "carol's npm build: $(show)"
grep -q '^Environment [0-9a-f]\{64\} built' "$work/out" || fail "carol's npm build said: $(show)"
nid=$(sed -n 's/^Environment \([0-9a-f]\{64\}\).*/\1/p' "$work/out")
[[ -f /var/cache/skilld/envs/$nid/node/node_modules/is-number/package.json ]] ||
    fail "is-odd's dependency is not in $nid: $(find "/var/cache/skilld/envs/$nid" -maxdepth 4 | head -30)"
echo "carol built $nid with the npm resolver"

as bob skillctl --no-ask-password run --system -q --script scripts/main.js nodeodd/ -- 7 "$port"
[[ $rc == 0 ]] || fail "bob's run after the npm build: $(show)"
out=$(cat "$work/out")
assert_contains "$out" "odd(7): true" "bob's node run"
assert_contains "$out" "is-odd: /env/" "where is-odd came from"
assert_contains "$out" "network: unreachable" "the node run's network"
echo "bob's node run: $(tr '\n' ' ' <"$work/out")"
