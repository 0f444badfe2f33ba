#!/bin/bash
# The Python client (skilld_client) as installed for Debian's python3, against the real skilld on
# the system bus, as alice with polkit asked: a skill folder zipped by the client into a memfd,
# an input file, output streamed live, the end heard through RunFinished, a skill's exact
# numbers, a failing run, an artifact read back, and the asyncio twin, all through the service.
# Then build_environment: alice (no io.skilld.build-environment) refused by name; carol (the admin
# group) builds a skill's environment from a PEP 503 index on 127.0.0.1, the log streamed to her,
# blocking and with asyncio (a cache hit), and alice's run then imports the package.
# Skips (77) only while the daemon is not installed yet.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../rootfs/usr/lib/skilld-vm/lib.sh
. "$SKILLD_VM_LIB"
# shellcheck source=daemon.inc
. "$(dirname "$0")/daemon.inc"

[[ -x $SKILLD_BIN ]] || skip "skilld is not installed at $SKILLD_BIN yet"
daemon_setup

work=$(mktemp -d /var/tmp/python-client.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
mkdir -p "$work/exact/scripts"
printf -- '---\nname: exact\ndescription: Prints numbers a double cannot hold.\n---\n' >"$work/exact/SKILL.md"
cat >"$work/exact/scripts/main.sh" <<'SH'
#!/bin/bash
echo "input file: $(cat /work/data.txt)" >&2
echo '{"big": 12345678901234567890, "id": 9007199254740993, "f": 1.0}'
SH
chmod 0755 "$work/exact/scripts/main.sh"

cat >"$work/client.py" <<'PY'
import asyncio, json, os, sys
import skilld_client
from skilld_client import AsyncClient, Client

examples, work = sys.argv[1], sys.argv[2]
report = {'module': skilld_client.__file__}
streamed = []
with Client(mode='service') as c:
    r = c.run(os.path.join(work, 'exact'), files={'data.txt': b'from python'}, timeout=30,
              stdout=streamed.append, stderr=streamed.append)
    report['exact'] = {'via': r.via, 'status': r.status, 'output': r.output,
                       'exact_text': '"big":12345678901234567890' in r.json and '"f":1.0' in r.json,
                       'streamed': b''.join(sorted(streamed)).decode()}
    r = c.run(os.path.join(examples, 'always-fails'))
    report['fails'] = [r.via, r.status, r.exit_code]
    r = c.run(os.path.join(examples, 'make-artifacts'), input={'rows': [{'item': 'plums', 'qty': 5}]})
    report['artifact'] = c.read_artifact(r, 'table.csv').decode()

async def twin():
    async with AsyncClient(mode='service') as a:
        rs = await asyncio.gather(*[a.run(os.path.join(examples, 'json-transform'),
                                          input={'numbers': [i, 1], 'text': 'a b'}) for i in range(3)])
        return [[x.via, x.output['sum']] for x in rs]
report['asyncio'] = asyncio.run(twin())
print(json.dumps(report))
PY

as_user alice /usr/bin/python3 "$work/client.py" "$SKILLD_SOURCE_ROOT/examples/skills" "$work" \
    >"$work/out" 2>"$work/err" || { cat "$work/err"; fail "the client failed as alice"; }
cat "$work/out"
get() { python3 -c 'import json,sys; print(json.dumps(eval("d"+sys.argv[2], {"d": json.load(open(sys.argv[1]))})))' "$work/out" "$1"; }

assert_contains "$(get '["module"]')" "/usr/lib/python3/dist-packages/skilld_client/" \
    "the client is the one installed for Debian's python3"
assert_eq '"service"' "$(get '["exact"]["via"]')" "a run through the service, not embedded"
assert_eq '"succeeded"' "$(get '["exact"]["status"]')" "the exact skill succeeded"
assert_eq '{"big": 12345678901234567890, "id": 9007199254740993, "f": 1.0}' "$(get '["exact"]["output"]')" \
    "output numbers as the skill wrote them"
assert_eq true "$(get '["exact"]["exact_text"]')" "the Result text holds the exact tokens"
assert_contains "$(get '["exact"]["streamed"]')" 'input file: from python' "stderr streamed, the input file read"
assert_contains "$(get '["exact"]["streamed"]')" '12345678901234567890' "stdout streamed"
assert_eq '["service", "failed", 3]' "$(get '["fails"]')" "a failing run is a result with its exit code"
assert_eq '"item,qty\r\nplums,5\r\n"' "$(get '["artifact"]')" "an artifact read through OpenArtifact"
assert_eq '[["service", 1.0], ["service", 2.0], ["service", 3.0]]' "$(get '["asyncio"]')" \
    "three concurrent runs through the asyncio client"
echo "ok: the Python client ran skills through the service as alice"

# ---- build_environment ----------------------------------------------------------------------------
python3 -c 'import pip' 2>/dev/null || skip "python3-pip is not in the VM image"
mkdir -p "$work/index/simple/skilld-pyclient" "$work/needs/scripts"
python3 - "$work/index/simple/skilld-pyclient/skilld_pyclient-1.0-py3-none-any.whl" <<'PY'
import base64, hashlib, sys, zipfile
files = {
    "skilld_pyclient/__init__.py": 'def hello(s):\n    return "hello " + s\n',
    "skilld_pyclient-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: skilld-pyclient\nVersion: 1.0\n",
    "skilld_pyclient-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
        d = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, d, len(text)))
    record.append("skilld_pyclient-1.0.dist-info/RECORD,,")
    z.writestr("skilld_pyclient-1.0.dist-info/RECORD", "\n".join(record) + "\n")
PY
python3 -u -m http.server --bind 127.0.0.1 --directory "$work/index" 0 >"$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q 'port [0-9]' "$work/server.log" && break; sleep 0.2; done
index=http://127.0.0.1:$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.log" | head -1)/simple/
printf -- '---\nname: needs\ndescription: Needs a package.\n---\n' >"$work/needs/SKILL.md"
echo 'skilld-pyclient==1.0' >"$work/needs/requirements.txt"
printf 'import skilld_pyclient\nprint(skilld_pyclient.hello("env"), skilld_pyclient.__file__)\n' >"$work/needs/scripts/main.py"
chmod -R a+rX "$work"

cat >"$work/build.py" <<'PY'
import asyncio, json, sys
from skilld_client import AsyncClient, Client, SkilldError
skill, index, who = sys.argv[1], sys.argv[2], sys.argv[3]
report = {}
log = []
with Client(mode='service') as c:
    try:
        b = c.build_environment(skill, index_url=index, resolvers=['pip'], log=log.append)
        report['build'] = [b.via, b.id, b.cached, b.missing]
    except SkilldError as e:
        report['error'] = e.name
report['log'] = b''.join(log).decode(errors='replace')
if who == 'carol':
    async def twin():
        async with AsyncClient(mode='service') as a:
            b = await a.build_environment(skill, index_url=index, resolvers=['pip'])
            return [b.via, b.id, b.cached, b.missing]
    report['asyncio'] = asyncio.run(twin())
    r = Client(mode='service').run(skill)
    report['run'] = [r.status, r.stdout]
print(json.dumps(report))
PY
as_user alice /usr/bin/python3 "$work/build.py" "$work/needs" "$index" alice >"$work/out" 2>"$work/err" ||
    { cat "$work/err"; fail "build.py failed as alice"; }
cat "$work/out"
assert_contains "$(get '["error"]')" "org.freedesktop.DBus.Error." "alice's build_environment is refused"
as_user carol /usr/bin/python3 "$work/build.py" "$work/needs" "$index" carol >"$work/out" 2>"$work/err" ||
    { cat "$work/err"; fail "build.py failed as carol"; }
cat "$work/out"
id=$(get '["build"][1]' | tr -d '"')
[[ $id =~ ^[0-9a-f]{64}$ ]] || fail "carol's build_environment gave no id: $(cat "$work/out")"
assert_eq "[\"service\", \"$id\", false, []]" "$(get '["build"]')" "carol's build"
assert_contains "$(get '["log"]')" "skilld-pyclient" "the build log streamed to carol"
assert_eq "[\"service\", \"$id\", true, []]" "$(get '["asyncio"]')" "the asyncio twin: a cache hit"
assert_contains "$(get '["run"]')" "hello env /env/python/skilld_pyclient" "the run imports the package from /env"
[[ -d /var/cache/skilld/envs/$id ]] || fail "no /var/cache/skilld/envs/$id"
skillctl env rm --system "$id" >/dev/null || fail "removing $id"
echo "ok: build_environment through the service: alice refused, carol built $id"
