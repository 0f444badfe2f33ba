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
    _, m = s.call(b'{"jsonrpc":"2.0","id":\x1a"x","method":"ping"}')
    check(error_code(m) == -32700, 'a control character as white space: -32700')
    _, m = s.call(b'{"jsonrpc":"2.0","id":"a\tb","method":"ping"}')
    check(error_code(m) == -32700, 'a control character in a string: -32700')
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

    # exec_skill: the command form, "python3 -m" from the skill's root importing a package of it.
    r = s.tool(23, 'exec_skill', {'skill': 'py-module', 'command': ['python3', '-m', 'scripts.tool', 'x'],
                                  'cwd': '/skill'})
    check(r and not r['isError'] and r['structuredContent']['output'] == {'greeting': 'hello x', 'cwd': '/skill'}
          and r['structuredContent']['cwd'] == '/skill', 'exec_skill: python3 -m from /skill')
    r = s.tool(24, 'exec_skill', {'skill': 'py-module', 'command': ['sh', '-c', 'exit 3']})
    check(r and r['isError'] and r['structuredContent']['exit_code'] == 3, 'exec_skill: exit 3 is isError')
    for args, what in (({'command': []}, 'an empty command'), ({'command': 'ls'}, 'a command not an array'),
                       ({'command': ['ls', 1]}, 'a number in the command'),
                       ({'command': ['ls'], 'cwd': '/etc'}, 'cwd not /work or /skill'),
                       ({'command': ['ls'], 'script': 'x'}, 'a script'), ({}, 'no command')):
        r = s.tool(25, 'exec_skill', dict(args, skill='py-module'))
        check(r and r['isError'] and 'structuredContent' not in r, 'exec_skill with %s: a tool error' % what)
    r = s.tool(26, 'run_skill', {'skill': 'counter', 'command': ['ls']})
    check(r and r['isError'] and 'exec_skill' in r['content'][0]['text'], 'run_skill with a command points to exec_skill')

    # Progress and cancellation as for run_skill.
    s.send(json.dumps({'jsonrpc': '2.0', 'id': 27, 'method': 'tools/call',
                       'params': {'name': 'exec_skill', '_meta': {'progressToken': 'p27'},
                                  'arguments': {'skill': 'py-module', 'command': ['sleep', '60']}}}) + '\n')
    m = json.loads(s.line(10) or 'null')
    check(m and m.get('method') == 'notifications/progress' and m['params']['progressToken'] == 'p27',
          'exec_skill: progress while it runs')
    s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":27}}\n')
    start = time.monotonic()
    while s.children() and time.monotonic() - start < 15:
        time.sleep(0.1)
    check(not s.children(), 'exec_skill: cancelled, its run ends (%.1f s)' % (time.monotonic() - start))
    while True:
        raw, m = s.call('{"jsonrpc":"2.0","id":28,"method":"ping"}')
        if not m or m.get('method') != 'notifications/progress':
            break
    check(m and m.get('id') == 28, 'a cancelled exec_skill is not answered')

    # Sessions: /work kept between two runs, then removed.
    r = s.tool(30, 'create_session', {'skill': 'counter', 'ttl': 600})
    sid = r and not r['isError'] and r['structuredContent']['id']
    check(sid and r['structuredContent']['skill'] == 'counter' and r['structuredContent']['ttl_usec'] == 600 * 10**6,
          'create_session: id, skill, ttl')
    counts = [(s.tool(31 + i, 'run_skill', {'skill': 'counter', 'session': sid}) or {}).get('structuredContent', {})
              .get('output') for i in range(2)]
    check(counts == [{'count': 1}, {'count': 2}], 'a session keeps /work between two runs: %s' % counts)
    r = s.tool(33, 'list_sessions', {})
    check(r and [x['id'] for x in r['structuredContent']['sessions']] == [sid], 'list_sessions lists it')
    r = s.tool(34, 'remove_session', {'session': sid})
    check(r and not r['isError'] and r['structuredContent'] == {'removed': [sid]}, 'remove_session')
    r = s.tool(35, 'run_skill', {'skill': 'counter', 'session': sid})
    check(r and r['isError'] and 'no such session' in r['content'][0]['text']
          and 'list_sessions' in r['content'][0]['text'], 'a removed session is a tool error naming list_sessions')
    r = s.tool(36, 'exec_skill', {'skill': 'counter', 'session': sid, 'command': ['true']})
    check(r and r['isError'] and 'no such session' in r['content'][0]['text'], 'exec_skill in it too')
    r = s.tool(37, 'remove_session', {'session': sid})
    check(r and r['isError'] and 'no such session' in r['content'][0]['text'], 'removing it again is a tool error')
    r = s.tool(38, 'list_sessions', {})
    check(r and r['structuredContent'] == {'sessions': []}, 'list_sessions: none left')
    for tool, args, what in (('create_session', {'skill': 'counter', 'ttl': 'soon'}, 'a bad ttl'),
                             ('create_session', {'skill': 'nope'}, 'an unknown skill'),
                             ('create_session', {'skill': 'counter', 'quota': 5}, 'a bad quota'),
                             ('remove_session', {}, 'no session'),
                             ('run_skill', {'skill': 'counter', 'session': 7}, 'a session not a string')):
        r = s.tool(39, tool, args)
        check(r and r['isError'], '%s with %s: a tool error' % (tool, what))

    # At most 16 runs at once: the 17th is a tool error, the others run.
    for i in range(17):
        s.send(json.dumps({'jsonrpc': '2.0', 'id': 100 + i, 'method': 'tools/call',
                           'params': {'name': 'run_skill', 'arguments': {'skill': 'sleeper', 'args': ['2']}}}) + '\n')
    answers = [json.loads(s.line(120) or 'null') for _ in range(17)]
    refused = [a for a in answers if a and a['result'].get('isError')]
    check(len(refused) == 1 and refused[0]['id'] == 116 and 'runs are going' in refused[0]['result']['content'][0]['text'],
          'a 17th run at once is refused')
    check(sum(1 for a in answers if a and a['result'].get('structuredContent', {}).get('status') == 'succeeded') == 16,
          'the 16 others ran')

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
