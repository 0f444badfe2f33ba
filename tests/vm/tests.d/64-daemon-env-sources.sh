#!/bin/bash
# BuildEnvironment through the real service with the debian and npm resolvers, under the unit's
# hardening (ProtectSystem=strict, ProtectHome=, PrivateTmp=, IPAddressDeny=, ...). The VM has no
# internet; the rig stages real packages fetched on the host (lib/env-sources.sh), which this test
# serves on 127.0.0.1 the way a local mirror would: a flat apt repository listed in the guest's
# apt sources ([trusted=yes]), and an npm registry (packuments and tarballs) that npm's global
# configuration names, with npm itself installed from its release tarball into /usr/local, as an
# admin would. carol (the admin group) builds with skillctl env build --system; bob's runs then
# import the Debian packages (one pure-Python, one with a compiled extension) and require the npm
# packages from /env, offline.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

sources=/usr/lib/skilld-vm/env-sources
[[ -d $sources/apt && -d $sources/npm ]] ||
    skip "the rig staged no package sources (the host could not fetch them: see run-vm.sh's log)"
daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s\nenvironments:\n  resolvers: [debian, npm]'
work=$PWD
chmod 0755 "$work"
aptlist=/etc/apt/sources.list.d/skilld-vm-local.list
npmrc=
trap 'rm -f "$aptlist" ${npmrc:+"$npmrc"}; [[ -n ${server:-} ]] && kill "$server" 2>/dev/null; true' EXIT

# ---- npm, as an admin installs it from its release tarball ----------------------------------------
if ! command -v npm >/dev/null; then
    mkdir -p /usr/local/lib/node_modules/npm /usr/local/bin
    tar -xzf "$sources"/npm/npm-[0-9]*.tgz -C /usr/local/lib/node_modules/npm --strip-components=1
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm
fi
echo "npm $(npm --version) in $(command -v npm)"

# ---- the mirror: /apt/ a flat repository, /npm/ a registry ----------------------------------------
mkdir -p srv/npm/-
cp -a "$sources/apt" srv/apt
python3 -u -m http.server --bind 127.0.0.1 --directory "$work/srv" 0 >"$work/server.log" 2>&1 &
server=$!
wait_until 20 grep -q 'port [0-9]' "$work/server.log" || fail "the mirror did not start: $(cat "$work/server.log")"
port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.log" | head -1)
base=http://127.0.0.1:$port

# The registry's protocol: GET /NAME is the packument (every version's package.json with its
# dist: tarball URL, sha1 shasum and sha512 integrity); the tarballs are where dist says.
python3 - "$work/srv/npm" "$base/npm" "$sources"/npm/*.tgz <<'PY'
import base64, hashlib, json, os, shutil, sys, tarfile
root, url, tarballs = sys.argv[1], sys.argv[2], sys.argv[3:]
packuments = {}
for path in tarballs:
    data = open(path, "rb").read()
    with tarfile.open(path) as t:
        meta = json.load(t.extractfile("package/package.json"))
    name, version = meta["name"], meta["version"]
    if name == "npm":
        continue
    file = "%s-%s.tgz" % (name, version)
    shutil.copy(path, os.path.join(root, "-", file))
    meta["dist"] = {
        "tarball": "%s/-/%s" % (url, file),
        "shasum": hashlib.sha1(data).hexdigest(),
        "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
    }
    p = packuments.setdefault(name, {"name": name, "dist-tags": {}, "versions": {}})
    p["versions"][version] = meta
    p["dist-tags"]["latest"] = version
for name, p in packuments.items():
    with open(os.path.join(root, name), "w") as f:
        json.dump(p, f)
PY

# apt: the local repository only (the base's own sources reach nothing), its lists kept next to
# whatever else apt has.
echo "deb [trusted=yes] $base/apt/ ./" >"$aptlist"
apt-get -q update -o Dir::Etc::sourcelist="$aptlist" -o Dir::Etc::sourceparts=- \
    -o APT::Get::List-Cleanup=0 >"$work/apt-update.log" 2>&1 || fail "apt-get update: $(cat "$work/apt-update.log")"
apt-cache policy python3-tabulate python3-markupsafe | grep -q "Candidate: [0-9]" ||
    fail "apt does not see the local repository: $(apt-cache policy python3-tabulate python3-markupsafe)"
# npm: the registry in npm's global configuration (where this npm reads it: /etc/npmrc for one
# whose node is /usr/bin/node), which the service reads (npm config get registry).
npmrc=$(npm config get globalconfig)
mkdir -p "$(dirname "$npmrc")"
echo "registry=$base/npm/" >"$npmrc"
assert_eq "$base/npm/" "$(npm config get registry)" "npm's registry"

# as USER COMMAND...: stdout, stderr and status kept.
as() {
    local u=$1
    shift
    rc=0
    (cd "$work" && as_user "$u" "$@") >"$work/out" 2>"$work/err" || rc=$?
}
show() { echo "exit $rc; stdout: $(head -c 1500 "$work/out"); stderr: $(tail -c 3000 "$work/err")"; }

# ---- debian: a Python skill needing two packages the VM lacks ------------------------------------
mkdir -p debtab/scripts
printf -- '---\nname: debtab\ndescription: A test skill of the VM suite that needs Debian packages.\n---\n\n# debtab\n' \
    >debtab/SKILL.md
printf 'tabulate\nMarkupSafe\n' >debtab/requirements.txt
cat >debtab/scripts/main.py <<'PY'
import socket, sys
import markupsafe, markupsafe._speedups, tabulate
print(tabulate.tabulate([[sys.argv[1], 1]], headers=["who", "n"], tablefmt="plain"))
print("escaped:", markupsafe.escape("<b>"))
print("tabulate:", tabulate.__file__)
print("speedups:", markupsafe._speedups.__file__)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2).close()
    print("network: reachable")
except OSError as e:
    print("network: unreachable (%s)" % e.__class__.__name__)
PY
chmod -R a+rX debtab

as bob skillctl --no-ask-password run --system debtab/ -- bob "$port"
[[ $rc == 122 ]] || fail "bob's run before the build: $(show)"
echo "before the build: bob's run is refused (exit 122)"

as carol skillctl --no-ask-password env build --system debtab/
[[ $rc == 0 ]] || fail "carol's debian build: $(show)"
grep -q '^Environment [0-9a-f]\{64\} built' "$work/out" || fail "carol's debian build said: $(show)"
id=$(sed -n 's/^Environment \([0-9a-f]\{64\}\).*/\1/p' "$work/out")
manifest=/var/cache/skilld/envs/$id/manifest.json
python3 - "$manifest" <<'PY' || fail "the manifest of $id: $(cat "$manifest")"
import json, sys
m = json.load(open(sys.argv[1]))
got = {(r.get("name") or "").lower(): r for r in m["resolved"]}
for name in ("tabulate", "markupsafe"):
    r = got.get(name)
    assert r and r.get("source") == "debian", "%s: %r" % (name, r)
assert not m.get("missing"), m.get("missing")
PY
echo "carol built $id with the debian resolver"

as bob skillctl --no-ask-password run --system -q debtab/ -- bob "$port"
[[ $rc == 0 ]] || fail "bob's run after the debian build: $(show)"
out=$(cat "$work/out")
assert_contains "$out" "bob  1" "bob's table"
assert_contains "$out" "escaped: &lt;b&gt;" "markupsafe"
assert_contains "$out" "tabulate: /env/" "where tabulate came from"
assert_contains "$out" "speedups: /env/" "where markupsafe's extension came from"
assert_contains "$out" "network: unreachable" "the run's network"
echo "bob's run: $(tr '\n' ' ' <"$work/out")"

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
