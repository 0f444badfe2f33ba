#!/bin/bash
# The Python client (skilld_client) as installed for Debian's python3, against the real skilld on
# the system bus, as alice with polkit asked: a skill folder zipped by the client into a memfd,
# an input file, output streamed live, the end heard through RunFinished, a skill's exact
# numbers, a failing run, an artifact read back, and the asyncio twin, all through the service.
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
