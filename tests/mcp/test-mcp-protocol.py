#!/usr/bin/python3
# skillctl mcp on hostile and odd input, byte for byte on its stdio: every bad message gets the
# JSON-RPC error the spec names (never a crash, never silence where an answer is due), ids and
# values come back exactly, and the server exits 0 when stdin closes, ending a run still going.
#
#   test-mcp-protocol.py SKILLCTL SKILLS-DIR
import json
import os
import subprocess
import sys
import tempfile
import time

import mcpstdio
from mcpstdio import error_code, initialize

SKILLCTL, SKILLS = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        failures.append(what)


def Server(home):
    return mcpstdio.Server([SKILLCTL, 'mcp', '--local', '--skills-dir', SKILLS], home)


init = initialize


with tempfile.TemporaryDirectory() as home:
    # Runs need the sandbox: where this machine cannot have one, skip.
    probe = subprocess.run([SKILLCTL, 'run', '--local', '--json', '--output-dir', os.path.join(home, 'probe'),
                            os.path.join(SKILLS, 'exact-output')], cwd=home, capture_output=True)
    if probe.returncode != 0:
        print('SKIP: no sandbox here: ' + probe.stderr.decode(errors='replace').strip())
        sys.exit(77)
    s = Server(home)

    _, m = s.call('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_skills"}}')
    check(error_code(m) == -32600 and m['id'] == 5, 'tools/call before initialize: -32600 with its id')
    _, m = s.call('{"jsonrpc":"2.0","id":6,"method":"ping"}')
    check(m == {'jsonrpc': '2.0', 'id': 6, 'result': {}}, 'ping before initialize is answered')
    _, m = s.call('{"jsonrpc": "2.0", "id": 7, "method": "tools/list"')
    check(error_code(m) == -32700 and m['id'] is None, 'bad JSON: -32700, id null')
    _, m = s.call('[{"jsonrpc":"2.0","id":8,"method":"ping"}]')
    check(error_code(m) == -32600, 'a batch: -32600')
    _, m = s.call('[' * 200000)
    check(error_code(m) == -32600 and 'nests deeper' in m['error']['message'], 'deep nesting: -32600')
    _, m = s.call(b'{"jsonrpc":"2.0","id":9,"method":"p\xffng"}')
    check(error_code(m) == -32700, 'invalid UTF-8: -32700')
    _, m = s.call(b'{"jsonrpc":"2.0","id":10,"method":"ping"}\x00')
    check(error_code(m) == -32700, 'a NUL byte: -32700')
    _, m = s.call('{"jsonrpc":"2.0","id":null,"method":"ping"}')
    check(error_code(m) == -32600, 'id null: -32600')
    _, m = s.call('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}')
    check(error_code(m) == -32600, 'id an object: -32600')
    _, m = s.call('{"jsonrpc":"1.0","id":11,"method":"ping"}')
    check(error_code(m) == -32600 and m['id'] == 11, 'jsonrpc 1.0: -32600')
    _, m = s.call('"just a string"')
    check(error_code(m) == -32600, 'not an object: -32600')

    start = time.monotonic()
    s.send(b'{"x":"' + b'x' * (49 << 20) + b'"}\n')
    raw = s.line(60)
    m = json.loads(raw) if raw else None
    check(error_code(m) == -32600 and 'longer' in m['error']['message'], 'a 49 MiB line: -32600, dropped')
    _, m = s.call('{"jsonrpc":"2.0","id":12,"method":"ping"}')
    check(m and m.get('result') == {}, 'still serving after the huge line (%.1f s)' % (time.monotonic() - start))

    # Notifications and responses are never answered: the next answer is the ping's.
    s.send('{"jsonrpc":"2.0","method":"notifications/whatever"}\n')
    s.send('{"jsonrpc":"2.0","id":99,"result":{}}\n')
    _, m = s.call('{"jsonrpc":"2.0","id":13,"method":"ping"}')
    check(m and m['id'] == 13, 'notifications and responses get no answer')

    _, m = s.call(init('2024-11-05'))
    check(m and m['result']['protocolVersion'] == '2024-11-05', 'an older supported version is echoed')
    _, m = s.call(init('2025-11-25', 2))
    check(error_code(m) == -32600, 'a second initialize: -32600')
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    raw, m = s.call('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}')
    check(raw and raw.startswith('{"jsonrpc":"2.0","id":9007199254740993,'), 'a big integer id comes back exactly')
    _, m = s.call('{"jsonrpc":"2.0","id":"s-1","method":"ping"}')
    check(m and m['id'] == 's-1', 'a string id comes back')
    _, m = s.call('{"jsonrpc":"2.0","id":14,"method":"no/such"}')
    check(error_code(m) == -32601, 'an unknown method: -32601')
    _, m = s.call('{"jsonrpc":"2.0","id":15,"method":"server/discover","params":{}}')
    check(error_code(m) == -32601, 'server/discover: -32601 (clients fall back to initialize)')
    _, m = s.call('{"jsonrpc":"2.0","id":16,"method":"tools/call","params":[1]}')
    check(error_code(m) == -32602, 'params an array: -32602')
    _, m = s.call('{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"nope"}}')
    check(error_code(m) == -32602, 'an unknown tool: -32602')
    _, m = s.call('{"jsonrpc":"2.0","id":18,"method":"resources/read","params":{"uri":"skill://sleeper/%2e%2e/x"}}')
    check(error_code(m) == -32002, 'a path out of the skill: -32002')
    _, m = s.call('{"jsonrpc":"2.0","id":19,"method":"skills/get","params":{"uri":"skill://nope/SKILL.md"}}')
    check(error_code(m) == -32602, 'skills/get of an unknown skill: -32602')

    # The input reaches the skill as the client wrote it: the skill prints it back on stdout.
    raw, m = s.call('{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"run_skill",'
                    '"arguments":{"skill":"echo-input","input":{"n": 12345678901234567890}}}}', 60)
    text = m and m['result']['structuredContent']['stdout']['text']
    check(text and text.startswith('{"input": {"n": 12345678901234567890}'), 'input JSON passed exactly')

    # The output as the skill printed it, in the raw answer (compacted, never through a double).
    raw, m = s.call('{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"run_skill",'
                    '"arguments":{"skill":"exact-output"}}}', 60)
    check(raw and '"output":{"big":12345678901234567890,"id":9007199254740993,"f":1.0}' in raw,
          'output exactly as the skill printed it')

    _, m = s.call(init('1999-01-01', 3))
    check(error_code(m) == -32600, 'initialize again, unknown version: still -32600')

    # A run still going when stdin closes is canceled, and the server exits 0.
    s.send('{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"run_skill",'
           '"arguments":{"skill":"sleeper","args":["120"]}}}\n')
    time.sleep(1.5)
    start = time.monotonic()
    s.p.stdin.close()
    try:
        rc = s.p.wait(20)
    except subprocess.TimeoutExpired:
        s.p.kill()
        rc = None
    check(rc == 0, 'exit 0 after stdin closed, a run going (%.1f s)' % (time.monotonic() - start))

    s2 = Server(home)
    _, m = s2.call(init('1999-01-01'))
    check(m and m['result']['protocolVersion'] == '2025-11-25', 'an unknown version gets ours')
    s2.p.stdin.close()
    check(s2.p.wait(10) == 0, 'exit 0 when stdin closes')

if failures:
    print('%d failed' % len(failures))
    sys.exit(1)
