#!/bin/bash
# BuildEnvironment through the real service, polkit and systemd: a skill needing a Python package
# the VM lacks. The VM has no internet, so the package is a pure-Python wheel written here with
# zipfile and served as a PEP 503 index on 127.0.0.1. alice, whom a rule denies
# io.skilld.build-environment, is refused and nothing is built; carol (the admin group) builds it
# with skillctl env build --system, the log streaming to her; the build is journaled; bob's run of
# the skill through the service then imports the package from /env, offline. Last, the policy's
# cap on builds going at once: while a build of carol's waits on a slow index, her second call is
# refused with QuotaExceeded naming environments.builds.per-user, and the next after it succeeds.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source-path=SCRIPTDIR source=daemon.inc
. "$(dirname "$0")/daemon.inc"

python3 -c 'import pip' 2>/dev/null || skip "python3-pip is not in the VM image"
daemon_setup
daemon_policy $'service:\n  idle-timeout: 120s\nenvironments:\n  builds:\n    per-user: 1'
work=$PWD
chmod 0755 "$work"

# A rule that denies alice the action outright (without it she would only lack an agent).
rule=/etc/polkit-1/rules.d/61-skilld-env-build-test.rules
cat >"$rule" <<'EOF'
polkit.addRule(function(action, subject) {
    if (action.id == "io.skilld.build-environment" && subject.user == "alice")
        return polkit.Result.NO;
    return polkit.Result.NOT_HANDLED;
});
EOF
trap 'rm -f "$rule"; [[ -n ${server:-} ]] && kill "$server" 2>/dev/null; true' EXIT
systemctl restart polkit.service

# ---- the index: one pure-Python wheel, made by hand ----------------------------------------------
mkdir -p index/simple/skilld-vmshout
python3 - index/simple/skilld-vmshout/skilld_vmshout-1.0-py3-none-any.whl <<'PY'
import base64, hashlib, sys, zipfile
files = {
    "skilld_vmshout/__init__.py": 'def shout(s):\n    return s.upper() + "!"\n',
    "skilld_vmshout-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: skilld-vmshout\nVersion: 1.0\n",
    "skilld_vmshout-1.0.dist-info/WHEEL":
        "Wheel-Version: 1.0\nGenerator: skilld-vm-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    record.append("skilld_vmshout-1.0.dist-info/RECORD,,")
    z.writestr("skilld_vmshout-1.0.dist-info/RECORD", "\n".join(record) + "\n")
PY
# The index; under /slow/ the same, each answer 10 s late (for the cap on builds below; pip
# gives up on a server silent for 15 s).
python3 -u - "$work/index" >"$work/server.log" 2>&1 <<'PY' &
import functools, http.server, sys, time
class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/slow/"):
            print("slow request for", self.path, flush=True)
            time.sleep(10)
            self.path = self.path[len("/slow"):]
        return super().do_GET()
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=sys.argv[1]))
print("serving on port %d" % s.server_address[1], flush=True)
s.serve_forever()
PY
server=$!
port=
wait_until 20 grep -q 'port [0-9]' "$work/server.log" || fail "the index did not start: $(cat "$work/server.log")"
port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.log" | head -1)
index=http://127.0.0.1:$port/simple/

# ---- the skill -----------------------------------------------------------------------------------
mkdir -p vmshout/scripts
printf -- '---\nname: vmshout\ndescription: A test skill of the VM suite that needs a package.\n---\n\n# vmshout\n' \
    >vmshout/SKILL.md
echo 'skilld-vmshout==1.0' >vmshout/requirements.txt
cat >vmshout/scripts/main.py <<'PY'
import socket, sys
import skilld_vmshout
print(skilld_vmshout.shout(sys.argv[1]))
print("module:", skilld_vmshout.__file__)
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2).close()
    print("network: reachable")
except OSError as e:
    print("network: unreachable (%s)" % e.__class__.__name__)
PY
chmod -R a+rX vmshout

# as USER COMMAND...: stdout, stderr and status kept.
as() {
    local u=$1
    shift
    rc=0
    (cd "$work" && as_user "$u" "$@") >"$work/out" 2>"$work/err" || rc=$?
}
show() { echo "exit $rc; stdout: $(head -c 1500 "$work/out"); stderr: $(tail -c 1500 "$work/err")"; }

# Before any build: the run is refused, naming the package.
as bob skillctl --no-ask-password run --system vmshout/ -- bob "$port"
[[ $rc == 122 ]] || fail "bob's run before the build: $(show)"
assert_contains "$(cat "$work/err")" "skilld-vmshout" "the refusal of an unbuilt environment"
echo "before the build: bob's run is refused (exit 122), naming skilld-vmshout"

# alice may not build.
envs_before=$(ls /var/cache/skilld/envs 2>/dev/null || true)
as alice skillctl --no-ask-password env build --system --resolvers pip --index-url "$index" vmshout/
[[ $rc != 0 ]] || fail "alice built an environment: $(show)"
assert_contains "$(cat "$work/err")" "not authorized" "alice's BuildEnvironment"
if [[ "$(ls /var/cache/skilld/envs 2>/dev/null)" != "$envs_before" ]]; then
    fail "something was built for alice: $(ls /var/cache/skilld/envs)"
fi
echo "alice is refused: $(head -c 300 "$work/err")"

# carol (the admin group) builds it; the log streams to her stderr.
since=$(date '+%Y-%m-%d %H:%M:%S')
as carol skillctl --no-ask-password env build --system --resolvers pip --index-url "$index" vmshout/
[[ $rc == 0 ]] || fail "carol's build: $(show)"
grep -q '^Environment [0-9a-f]\{64\} built' "$work/out" || fail "carol's build said: $(show)"
id=$(sed -n 's/^Environment \([0-9a-f]\{64\}\).*/\1/p' "$work/out")
grep -qi 'skilld.vmshout' "$work/err" || fail "the build log did not stream to carol: $(show)"
[[ -d /var/cache/skilld/envs/$id ]] || fail "no /var/cache/skilld/envs/$id"
[[ $(stat -c %U "/var/cache/skilld/envs/$id/manifest.json") == root ]] || fail "the environment is not root's"
echo "carol built $id"
entry=$(journalctl --since "$since" MESSAGE_ID=4d0f6c2a9b8e4f71a3c5d2e8b6f19a07 -o cat)
assert_contains "$entry" "Environment $id built for skill vmshout" "the journal entry of the build"
echo "journal: $entry"

# Again: a cache hit.
as carol skillctl --no-ask-password env build --system --resolvers pip --index-url "$index" vmshout/
if [[ $rc != 0 ]] || ! grep -q "^Environment $id is built already" "$work/out"; then
    fail "carol's second build: $(show)"
fi

# bob's run through the service uses it, and has no network.
as bob skillctl --no-ask-password run --system -q vmshout/ -- bob "$port"
[[ $rc == 0 ]] || fail "bob's run after the build: $(show)"
assert_contains "$(cat "$work/out")" "BOB!" "bob's run"
assert_contains "$(cat "$work/out")" "module: /env/python/skilld_vmshout" "where the package came from"
assert_contains "$(cat "$work/out")" "network: unreachable" "the run's network"
echo "bob's run: $(tr '\n' ' ' <"$work/out")"

# ---- the cap on builds going at once (environments.builds.per-user: 1) ------------------------------
# A rebuild from the slow index keeps carol's first build going for 20 s and more (two requests).
(cd "$work" && as_user carol skillctl --no-ask-password env build --system --rebuild --resolvers pip \
    --index-url "http://127.0.0.1:$port/slow/simple/" vmshout/) >"$work/slow.out" 2>"$work/slow.err" &
slow=$!
wait_until 60 grep -q 'slow request for' "$work/server.log" || fail "the slow build did not reach the index: $(cat "$work/slow.err")"
as carol skillctl --no-ask-password env build --system --resolvers pip --index-url "$index" vmshout/
[[ $rc != 0 ]] || fail "carol's second build at once was not refused: $(show)"
assert_contains "$(cat "$work/err")" "environments.builds.per-user" "the refusal of a second build"
echo "a second build at once is refused: $(head -c 400 "$work/err")"
# The D-Bus error by name, through the Python client.
as carol python3 -c 'import sys
from skilld_client import Client, SkilldError
try:
    Client(mode="service").build_environment(sys.argv[1], resolvers=["pip"], index_url=sys.argv[2])
except SkilldError as e:
    print(e.name)' "$work/vmshout" "$index"
assert_eq "io.skilld.Skilld1.Error.QuotaExceeded" "$(cat "$work/out")" "the D-Bus error of a second build at once"
wait "$slow" || fail "carol's slow build: $(cat "$work/slow.out" "$work/slow.err")"
grep -q '^Environment [0-9a-f]\{64\} built' "$work/slow.out" || fail "the slow rebuild said: $(cat "$work/slow.out")"
as carol skillctl --no-ask-password env build --system --resolvers pip --index-url "$index" vmshout/
[[ $rc == 0 ]] || fail "carol's build after the slow one: $(show)"
echo "after it finished, carol builds again: $(head -c 200 "$work/out")"
