#!/usr/bin/python3
# skillctl mcp through the skilld service: the real skilld on a private system-type bus (as
# tests/daemon does; as root, whom the service trusts without polkit), the real sandbox. The
# server lists the service's installed skills next to the folders', runs both kinds through
# the service, fetches artifacts from it, and a cancelled request cancels the service's run.
#
#   test-mcp-service.py SKILLCTL SKILLD SKILLS-DIR
#   test-mcp-service.py --system-bus SKILLCTL SKILLS-DIR
#
# With --system-bus (the VM suite, tests/vm/tests.d/78-skillctl-mcp.sh), the service is the
# installed one on the system bus, activated by D-Bus, asking polkit, running in systemd scopes,
# and the caller installed svc-only (a copy of exact-output) on it beforehand, and put
# vendor-echo (a copy of echo-input) in the packages' folder of installed skills, which anyone
# may read: its files are offered as a folder skill's are, and it still runs by name.
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import mcpstdio
from mcpstdio import initialize

SYSTEM_BUS = sys.argv[1] == '--system-bus'
if SYSTEM_BUS:
    SKILLCTL, SKILLD, SKILLS = sys.argv[2], None, sys.argv[3]
else:
    SKILLCTL, SKILLD, SKILLS = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        failures.append(what)


if not SYSTEM_BUS and (os.geteuid() != 0 or not shutil.which('dbus-daemon') or not shutil.which('busctl')):
    print('SKIP: needs root, dbus-daemon and busctl')
    sys.exit(77)

BUS_CONF = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=%s/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
'''
procs = []


def private_service(tmp):
    """A private system-type bus and skilld on it, svc-only installed; the clients' environment."""
    with open(os.path.join(tmp, 'bus.conf'), 'w') as f:
        f.write(BUS_CONF % tmp)
    procs.append(subprocess.Popen(['dbus-daemon', '--config-file=' + os.path.join(tmp, 'bus.conf'),
                                   '--nofork', '--nopidfile'], stderr=subprocess.DEVNULL))
    address = 'unix:path=%s/bus' % tmp
    for _ in range(200):
        if os.path.exists(os.path.join(tmp, 'bus')):
            break
        time.sleep(0.05)
    with open(os.path.join(tmp, 'policy.yaml'), 'w') as f:
        f.write('service:\n  idle-timeout: 600s\n')
    procs.append(subprocess.Popen([SKILLD, '--bus-address=' + address, '--state-dir=' + tmp + '/state',
                                   '--runtime-dir=' + tmp + '/run', '--policy=' + tmp + '/policy.yaml',
                                   '--no-idle-exit']))
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    # Until skilld owns its name: 'skill list' would answer without it (the folder skills).
    for _ in range(400):
        r = subprocess.run(['busctl', '--address=' + address, 'call', 'org.freedesktop.DBus',
                            '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'NameHasOwner', 's',
                            'io.skilld.Skilld1'], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() == 'b true':
            break
        time.sleep(0.05)

    # An installed skill that exists nowhere else: a copy of exact-output under a new name.
    src = os.path.join(tmp, 'svc-only')
    shutil.copytree(os.path.join(SKILLS, 'exact-output'), src)
    with open(os.path.join(src, 'SKILL.md')) as f:
        md = f.read().replace('name: exact-output', 'name: svc-only')
    with open(os.path.join(src, 'SKILL.md'), 'w') as f:
        f.write(md)
    r = subprocess.run([SKILLCTL, 'skill', 'install', src], env=env, capture_output=True, text=True)
    check(r.returncode == 0, 'installed svc-only on the service: ' + r.stderr.strip())
    return env


with tempfile.TemporaryDirectory() as tmp:
    try:
        env = dict(os.environ) if SYSTEM_BUS else private_service(tmp)
        home = os.path.join(tmp, 'home')
        os.mkdir(home)
        s = mcpstdio.Server([SKILLCTL, 'mcp', '--system', '--skills-dir', SKILLS], home, env)
        _, m = s.call(initialize())
        check(m and 'result' in m, 'initialize with --system')

        res = s.tool(2, 'list_skills', {})
        skills = {k['name']: k for k in res['structuredContent']['skills']} if res else {}
        check(skills.get('svc-only', {}).get('source') == 'service:installed' and
              skills['svc-only']['files_readable'] is False, 'the installed skill is listed, from the service')
        check(skills.get('sleeper', {}).get('files_readable') is True, 'the folder skills too')

        if SYSTEM_BUS:
            v = skills.get('vendor-echo', {})
            check(v.get('source') == 'service:vendor' and v.get('files_readable') is True,
                  'a vendor skill is listed with readable files: %s' % v)
            res = s.tool(20, 'read_skill', {'skill': 'vendor-echo'})
            check(res and 'Input: any JSON object' in (res['structuredContent']['body'] or ''),
                  'read_skill of a vendor skill gives its body')
            _, m = s.call(json.dumps({'jsonrpc': '2.0', 'id': 21, 'method': 'skills/get',
                                      'params': {'uri': 'skill://vendor-echo/SKILL.md'}}))
            check(m and m.get('result', {}).get('skill', {}).get('frontmatter', {}).get('name') == 'vendor-echo',
                  'skills/get of a vendor skill')
            res = s.tool(22, 'run_skill', {'skill': 'vendor-echo', 'input': {'n': 1}})
            sc = res and res.get('structuredContent')
            check(sc and sc['status'] == 'succeeded' and sc['output'] == {'input': {'n': 1}, 'file': ''},
                  'a vendor skill runs through the service, by name')

        res = s.tool(3, 'read_skill', {'skill': 'svc-only'})
        check(res and res['structuredContent']['body'] is None and not res['isError'],
              'read_skill of an installed skill: what the service says, no body')

        raw, m = s.call(json.dumps({'jsonrpc': '2.0', 'id': 4, 'method': 'tools/call',
                                    'params': {'name': 'run_skill', 'arguments': {'skill': 'svc-only'}}}), 60)
        res = m and m.get('result')
        sc = res and res.get('structuredContent')
        check(sc and sc['status'] == 'succeeded' and sc['skill'] == 'svc-only' and not res['isError'],
              'an installed skill runs through the service')
        check(raw and '"output":{"big":12345678901234567890,"id":9007199254740993,"f":1.0}' in raw,
              'its output exactly as the skill printed it, through the service')

        res = s.tool(5, 'run_skill', {'skill': 'exit-three'})
        sc = res and res.get('structuredContent')
        check(sc and sc['exit_code'] == 3 and res['isError'], 'a folder skill runs through the service: exit 3, isError')

        res = s.tool(6, 'run_skill', {'skill': 'artifact-maker'})
        links = [c for c in (res or {}).get('content', []) if c['type'] == 'resource_link']
        _, m = s.call(json.dumps({'jsonrpc': '2.0', 'id': 7, 'method': 'resources/read',
                                  'params': {'uri': links[0]['uri'] if links else 'x'}}))
        check(m and m.get('result', {}).get('contents', [{}])[0].get('text') == 'hello artifact\n',
              'an artifact of a service run reads back')

        # exec_skill and a session, through the service: the service's session, /work kept.
        res = s.tool(10, 'exec_skill', {'skill': 'py-module', 'command': ['python3', '-m', 'scripts.tool', 'svc'],
                                        'cwd': '/skill'})
        sc = res and res.get('structuredContent')
        check(sc and not res['isError'] and sc['output'] == {'greeting': 'hello svc', 'cwd': '/skill'},
              'exec_skill through the service: python3 -m from /skill')
        res = s.tool(11, 'create_session', {'skill': 'counter'})
        sid = res and not res['isError'] and res['structuredContent']['id']
        check(sid, 'create_session through the service: %s' % (res and res['content'][0]['text']))
        listed = subprocess.run([SKILLCTL, 'session', 'list', '--system', '--json'], env=env, capture_output=True,
                                text=True)
        check(sid in [x.get('id') for x in json.loads(listed.stdout or '[]')], 'it is the service\'s session')
        counts = [((s.tool(12 + i, 'run_skill', {'skill': 'counter', 'session': sid}) or {})
                   .get('structuredContent') or {}).get('output') for i in range(2)]
        check(counts == [{'count': 1}, {'count': 2}], 'the service\'s session keeps /work: %s' % counts)
        if not SYSTEM_BUS:
            # Another user (nobody, whom the service asks no polkit about here) cannot use or remove it.
            os.chmod(tmp, 0o755)
            other_home = os.path.join(tmp, 'other')
            os.mkdir(other_home)
            os.chown(other_home, 65534, 65534)
            s2 = mcpstdio.Server(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', SKILLCTL,
                                  '--no-ask-password', 'mcp', '--system', '--skills-dir', SKILLS], other_home, env)
            _, m = s2.call(initialize())
            res = s2.tool(16, 'remove_session', {'session': sid})
            check(res and res['isError'] and 'not yours' in res['content'][0]['text'],
                  'another user\'s session: remove_session is a tool error: %s' % (res and res['content'][0]['text']))
            res = s2.tool(17, 'run_skill', {'skill': 'counter', 'session': sid})
            check(res and res['isError'] and 'not yours' in res['content'][0]['text'],
                  'another user\'s session: run_skill in it is a tool error')
            res = s2.tool(18, 'list_sessions', {})
            check(res and res['structuredContent'] == {'sessions': []}, 'another user lists none of ours')
            check(s2.close() == 0, 'the other user\'s server exits 0')
        res = s.tool(14, 'remove_session', {'session': sid})
        check(res and res['structuredContent'] == {'removed': [sid]}, 'remove_session through the service')
        res = s.tool(15, 'run_skill', {'skill': 'counter', 'session': sid})
        check(res and res['isError'] and 'list_sessions' in res['content'][0]['text'],
              'the removed session is a tool error: %s' % (res and res['content'][0]['text']))

        # A cancelled request cancels the service's run, and the service says it ended so.
        s.send(json.dumps({'jsonrpc': '2.0', 'id': 8, 'method': 'tools/call',
                           'params': {'name': 'run_skill', 'arguments': {'skill': 'sleeper', 'args': ['120']}}}) + '\n')
        time.sleep(2)
        check(len(s.children()) == 1, 'the run goes')
        s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8,"reason":"test"}}\n')
        start = time.monotonic()
        while s.children() and time.monotonic() - start < 15:
            time.sleep(0.1)
        check(not s.children(), 'the run ended %.1f s after the cancellation' % (time.monotonic() - start))
        runs = subprocess.run([SKILLCTL, 'list', '--json'], env=env, capture_output=True, text=True)
        states = [(r.get('skill'), r.get('status') or r.get('state')) for r in json.loads(runs.stdout or '[]')]
        check(any(sk == 'sleeper' and st == 'canceled' for sk, st in states),
              'the service recorded the cancelled run: %s' % states)
        _, m = s.call('{"jsonrpc":"2.0","id":9,"method":"ping"}')
        check(m and m.get('id') == 9, 'the cancelled request got no answer; ping still does')
        check(s.close() == 0, 'exit 0 when stdin closes')
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

if failures:
    print('%d failed' % len(failures))
    sys.exit(1)
