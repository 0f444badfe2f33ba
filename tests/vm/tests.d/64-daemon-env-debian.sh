#!/bin/bash
# BuildEnvironment through the real service with the debian resolver, under the unit's hardening
# (ProtectSystem=strict, ProtectHome=, PrivateTmp=, IPAddressDeny=, ...): apt-cache, apt-get -s and
# apt-get download run in the build process, which inherits them. The VM has no internet; the
# packages are real ones the host fetched, from a local apt repository on 127.0.0.1 listed in the
# guest's sources (env-sources.inc). carol (the admin group) builds with skillctl env build
# --system; bob's run then imports both packages, one pure-Python and one with a compiled
# extension, from /env, offline.
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
env_sources_serve apt

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
grep -q '^bob  *1$' "$work/out" || fail "bob's table: $out"
assert_contains "$out" "escaped: &lt;b&gt;" "markupsafe"
assert_contains "$out" "tabulate: /env/" "where tabulate came from"
assert_contains "$out" "speedups: /env/" "where markupsafe's extension came from"
assert_contains "$out" "network: unreachable" "the run's network"
echo "bob's run: $(tr '\n' ' ' <"$work/out")"

