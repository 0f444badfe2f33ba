"""The Python client against the real thing: packages checked by the real skillctl, runs made
embedded through the real skillctl (the fallback where no service answers), and runs made
through the real skilld on a private bus, blocking and with asyncio.

Environment: SKILLCTL (the built skillctl), SKILLD_BUILD_ROOT (for skilld), SKILLD_SOURCE_ROOT.
Runs need root here (namespaces, and skilld); the VM runs the client against the system service
(tests/vm/tests.d/62-python-client.sh)."""
import asyncio
import json
import os
import shutil
import subprocess
import time

import pytest
from jeepney import HeaderFields

from skilld_client import AsyncClient, Client, ServiceUnavailable, SkilldError
from skilld_client import _common

ROOT = os.environ.get('SKILLD_SOURCE_ROOT',
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = os.environ.get('SKILLD_BUILD_ROOT', '')
SKILLCTL = os.environ.get('SKILLCTL') or shutil.which('skillctl')
EXAMPLES = os.path.join(ROOT, 'examples', 'skills')
NO_BUS = 'unix:path=/nonexistent/skilld-test-bus'
EXACT = '{"big": 12345678901234567890, "id": 9007199254740993, "f": 1.0}'

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason='runs need root here (namespaces)')


def example(name):
    return os.path.join(EXAMPLES, name)


def show(path):
    out = subprocess.run([SKILLCTL, 'skill', 'show', path, '--json'], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def validate_result(result):
    jsonschema = pytest.importorskip('jsonschema')
    with open(os.path.join(ROOT, 'schemas', 'result.schema.json'), encoding='utf-8') as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(result.document)


@pytest.fixture
def exact_skill(tmp_path):
    """A skill printing integers past 2^53 and 1.0, and echoing an input file."""
    d = tmp_path / 'exact'
    (d / 'scripts').mkdir(parents=True)
    (d / 'SKILL.md').write_text('---\nname: exact\ndescription: Prints big numbers as written.\n---\n')
    (d / 'scripts' / 'main.sh').write_text(
        "#!/bin/bash\necho \"got: $(cat /work/in.txt 2>/dev/null) $*\" >&2\necho '%s'\n" % EXACT)
    (d / 'scripts' / 'sleep.sh').write_text('#!/bin/bash\necho started\nsleep 60\n')
    for s in ('main.sh', 'sleep.sh'):
        (d / 'scripts' / s).chmod(0o755)
    return str(d)


# ---- without running anything ----

@pytest.mark.parametrize('name', sorted(os.listdir(EXAMPLES)))
def test_package_is_what_skillctl_loads(name, tmp_path):
    """The memfd the client sends is a .skill that loads to the folder's own content hash."""
    fd = _common.package_folder(example(name))
    archive = tmp_path / (name + '.skill')
    with os.fdopen(fd, 'rb') as f:
        archive.write_bytes(f.read())
    packed, folder = show(str(archive)), show(example(name))
    assert packed['source'] == 'archive'
    assert packed['content_hash'] == folder['content_hash']
    assert packed['name'] == folder['name']


def test_package_is_sealed():
    import fcntl
    fd = _common.package_folder(example('shell-report'))
    try:
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        assert seals & fcntl.F_SEAL_WRITE and seals & fcntl.F_SEAL_SEAL
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0
    finally:
        os.close(fd)


def test_package_refuses_symlinks(tmp_path):
    d = tmp_path / 's'
    d.mkdir()
    (d / 'SKILL.md').write_text('---\nname: s\ndescription: x.\n---\n')
    (d / 'link').symlink_to('/etc/passwd')
    with pytest.raises(SkilldError, match='link: symlinks are not allowed'):
        _common.package_folder(str(d))


def test_options_follow_the_schema(tmp_path):
    jsonschema = pytest.importorskip('jsonschema')
    with open(os.path.join(ROOT, 'schemas', 'run-options.schema.json'), encoding='utf-8') as f:
        schema = json.load(f)
    (tmp_path / 'a').write_text('x')
    fds = _common.open_files({'a.txt': str(tmp_path / 'a'), 'b.bin': b'\0\1'})
    try:
        opts = _common.run_options({'memory': 256 << 20, 'tasks': 10}, 2.5, {'LANG': 'C'}, fds, True, 7, 8)
        assert opts['limits'] == ('a{st}', {'memory': 256 << 20, 'tasks': 10, 'timeout': 2500000})
        jsonschema.Draft202012Validator(schema).validate(_common.options_as_json(opts))
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft202012Validator(schema).validate({'limits': {'colour': 1}})
    finally:
        for fd in fds.values():
            os.close(fd)


def test_bad_input_is_refused_before_anything():
    with pytest.raises(SkilldError, match='not valid JSON'):
        Client(mode='local').run(example('shell-report'), input='{nope')


def test_build_options():
    """BuildEnvironment's a{sv}, as io.skilld.Skilld1(5) has it; bad arguments refused here."""
    assert _common.build_options(None, None, False, None) == {}
    assert _common.build_options(['debian', 'npm'], 'http://127.0.0.1:1/simple/', True, 9) == {
        'resolvers': ('as', ['debian', 'npm']), 'index-url': ('s', 'http://127.0.0.1:1/simple/'),
        'rebuild': ('b', True), 'log': ('h', 9)}
    assert _common.check_resolvers(('pip',)) == ['pip']
    with pytest.raises(SkilldError, match="Unknown resolver 'conda'"):
        Client(mode='service', bus=NO_BUS).build_environment(example('shell-report'), resolvers=['conda'])
    with pytest.raises(TypeError):
        _common.check_resolvers('pip')
    with pytest.raises(SkilldError, match='no-such-skill: no such skill folder or file'):
        _common.open_skill_archive('no-such-skill')
    msg = _common.build_message(0, {})
    assert msg.header.fields[HeaderFields.member] == 'BuildEnvironment'
    assert msg.header.fields[HeaderFields.signature] == 'ha{sv}'


def test_build_service_mode_without_a_bus():
    with pytest.raises(ServiceUnavailable):
        Client(mode='service', bus=NO_BUS).build_environment(example('shell-report'))


def test_service_mode_without_a_bus():
    with pytest.raises(ServiceUnavailable):
        Client(mode='service', bus=NO_BUS).run(example('shell-report'))


# ---- embedded: the fallback where no service answers ----

@needs_root
def test_embedded_fallback(exact_skill, tmp_path):
    (tmp_path / 'in.txt').write_text('from a path')
    streamed = []
    r = Client(bus=NO_BUS, skillctl=SKILLCTL).run(exact_skill, files={'in.txt': str(tmp_path / 'in.txt')},
                                                  args=['a1'], timeout=30, stderr=streamed.append)
    assert r.via == 'embedded' and r.ok and r.exit_code == 0
    assert r.output == {'big': 12345678901234567890, 'id': 9007199254740993, 'f': 1.0}
    assert '12345678901234567890' in r.json and '1.0' in r.json
    assert b''.join(streamed) == b'got: from a path a1\n'
    with open(os.path.join(r.output_dir, 'result.json'), encoding='utf-8') as f:
        assert json.load(f)['run_id'] == r.run_id
    validate_result(r)


@needs_root
def test_embedded_failure_and_artifacts():
    c = Client(mode='local', skillctl=SKILLCTL)
    r = c.run(example('always-fails'))
    assert r.status == 'failed' and r.exit_code == 3 and not r.ok
    r = c.run(example('make-artifacts'), input={'rows': [{'item': 'figs', 'qty': 4}]})
    assert r.ok
    assert c.read_artifact(r, 'table.csv') == b'item,qty\r\nfigs,4\r\n'


@needs_root
def test_embedded_asyncio(exact_skill):
    async def main():
        async with AsyncClient(bus=NO_BUS, skillctl=SKILLCTL) as a:
            return await asyncio.gather(a.run(exact_skill, files={'in.txt': b'bytes'}),
                                        a.run(example('json-transform'), input={'numbers': [2, 3], 'text': 'x'}))
    exact, jt = asyncio.run(main())
    assert exact.via == 'embedded' and exact.output['big'] == 12345678901234567890
    assert 'got: bytes' in exact.stderr
    assert jt.output['sum'] == 5


# ---- through the real skilld, on a private bus ----

@pytest.fixture(scope='module')
def service(tmp_path_factory):
    """skilld on a dbus-daemon of its own; root skips polkit, as on the system bus."""
    if os.geteuid() != 0 or not shutil.which('dbus-daemon') or not BUILD:
        pytest.skip('needs root, dbus-daemon and the build tree')
    tmp = tmp_path_factory.mktemp('service')
    r, w = os.pipe()
    bus = subprocess.Popen(['dbus-daemon', '--session', '--nofork', '--nopidfile', '--print-address=%d' % w],
                           pass_fds=(w,), stdout=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        address = f.readline().strip()
    (tmp / 'policy.yaml').write_text('service:\n  idle-timeout: 60s\n')
    daemon = subprocess.Popen([os.path.join(BUILD, 'skilld', 'skilld'), '--bus-address=' + address,
                               '--state-dir=%s/state' % tmp, '--runtime-dir=%s/run' % tmp,
                               '--policy=%s/policy.yaml' % tmp, '--no-idle-exit'],
                              env=dict(os.environ, SKILLD_ENV_CACHE_DIR='%s/envs' % tmp))
    deadline = time.monotonic() + 20
    while subprocess.run(['busctl', '--address=' + address, 'status', _common.BUS_NAME],
                         capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, 'skilld never took its name'
        time.sleep(0.1)
    yield address
    daemon.terminate()
    daemon.wait(30)
    bus.terminate()
    bus.wait(10)


def test_service_run(service, exact_skill):
    out, err = [], []
    with Client(mode='service', bus=service) as c:
        r = c.run(exact_skill, files={'in.txt': b'sent as a memfd'}, args=['x'], timeout=30,
                  stdout=out.append, stderr=err.append)
        assert r.via == 'service' and r.ok
        assert r.output == {'big': 12345678901234567890, 'id': 9007199254740993, 'f': 1.0}
        assert '"big":12345678901234567890' in r.json and '"f":1.0' in r.json
        assert b''.join(out) == EXACT.encode() + b'\n'
        assert b''.join(err) == b'got: sent as a memfd x\n'
        validate_result(r)

        r = c.run(example('always-fails'))
        assert r.status == 'failed' and r.exit_code == 3
        r = c.run(example('make-artifacts'), input={'rows': [{'item': 'kiwi', 'qty': 1}]})
        assert c.read_artifact(r, 'table.csv') == b'item,qty\r\nkiwi,1\r\n'
        r = c.run(exact_skill, script='scripts/sleep.sh', timeout=1)
        assert r.status == 'timeout'
        with pytest.raises(SkilldError) as e:
            c.run('no-such-installed-skill')
        assert e.value.name.startswith('io.skilld.Skilld1.Error.')



def test_list_runs_arguments():
    """Refused before any call, as the service would."""
    for bad in (0, -1, True, 1.5, '3'):
        with pytest.raises(ValueError):
            Client(mode='service', bus=NO_BUS).list_runs(bad)
    with pytest.raises(ValueError):
        Client(mode='service', bus=NO_BUS).list_runs(state='done')
    with pytest.raises(ServiceUnavailable):
        Client(mode='service', bus=NO_BUS).list_runs(5)


def test_service_list_runs(service, exact_skill, monkeypatch):
    """Pages of the real service: the newest N, everything a page at a time, filters."""
    with Client(mode='service', bus=service) as c:
        ids = [c.run(exact_skill).run_id for _ in range(3)]
        every = c.list_runs()
        assert every.older == 0 and len(every) >= 3
        assert [r.id for r in every[-3:]] == ids
        assert all(a.created_usec <= b.created_usec for a, b in zip(every, every[1:]))
        last = every[-1]
        assert last.skill == 'exact' and last.state == 'finished' and last.status == 'succeeded'
        assert last.exit_code == 0 and last.ended_usec >= last.created_usec and last.owner == 0
        assert last.path.endswith('/' + last.id)

        newest = c.list_runs(2)
        assert [r.id for r in newest] == ids[1:] and newest.older == len(every) - 2
        assert [r.id for r in c.list_runs(2, all=True)] == ids[1:]
        assert [r.id for r in c.list_runs(skill='exact')] == [r.id for r in every if r.skill == 'exact']
        assert c.list_runs(state='queued') == []

        # Everything in pages of two: the same list, each page paging back from the one before.
        monkeypatch.setattr(_common, 'LIST_PAGE_MAX', 2)
        paged = c.list_runs()
        assert [r.id for r in paged] == [r.id for r in every] and paged.older == 0
        assert [r.id for r in c.list_runs(3)] == [r.id for r in every[-3:]]

        with pytest.raises(SkilldError) as e:
            c._call(_common.new_method_call(_common.MANAGER, 'ListRunsFiltered', 'a{sv}',
                                            ({'colour': ('b', True)},)))
        assert e.value.name == 'org.freedesktop.DBus.Error.InvalidArgs' and 'colour' in str(e.value)

    async def main():
        async with AsyncClient(mode='service', bus=service) as a:
            return await a.list_runs(2), await a.list_runs()
    newest, paged = asyncio.run(main())
    assert [r.id for r in newest] == ids[1:]
    assert [r.id for r in paged] == [r.id for r in every]


def test_list_runs_compat():
    """A service older than ListRunsFiltered: ListRuns' whole reply, cut here."""
    body = ([('%032x' % i, '/io/skilld/Skilld1/run/%032x' % i, 'a' if i % 2 else 'b', '', 1000,
              'finished', 'succeeded', 0, i, i + 1) for i in range(1, 6)],)
    got = _common.list_compat(body, 2, None, None)
    assert [r.created_usec for r in got] == [4, 5] and got.older == 3
    got = _common.list_compat(body, None, 'a', 'finished')
    assert [r.created_usec for r in got] == [1, 3, 5] and got.older == 0

def test_service_asyncio(service, exact_skill):
    async def main():
        async with AsyncClient(mode='service', bus=service) as a:
            out = []
            rs = await asyncio.gather(*[a.run(example('json-transform'), input={'numbers': [i], 'text': 'y'},
                                              stdout=out.append) for i in range(4)])
            assert sorted(r.output['sum'] for r in rs) == [0, 1, 2, 3]
            assert len(b''.join(out).splitlines()) == 4

            # Cancelling the task cancels the run.
            started = asyncio.Event()
            task = asyncio.ensure_future(a.run(exact_skill, script='scripts/sleep.sh',
                                               stdout=lambda b: started.set()))
            await asyncio.wait_for(started.wait(), 30)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return await a.run(exact_skill)
    last = asyncio.run(main())
    assert last.ok

    # The run left behind by the cancelled task ended as canceled.
    # The cancellation is asked for as the task ends; the run itself ends a moment later.
    from jeepney import new_method_call
    from jeepney.io.blocking import open_dbus_connection
    deadline = time.monotonic() + 30
    with open_dbus_connection(bus=service) as conn:
        while True:
            runs = conn.send_and_get_reply(new_method_call(_common.MANAGER, 'ListRuns')).body[0]
            statuses = [run[6] for run in runs if run[2] == 'exact']
            if '' not in statuses or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert 'canceled' in statuses, statuses


@pytest.fixture(scope='module')
def pip_index(tmp_path_factory):
    """A PEP 503 index on 127.0.0.1 with one pure-Python wheel, written here with zipfile (there
    is no Python package index to fetch one from)."""
    import base64
    import functools
    import hashlib
    import http.server
    import threading
    import zipfile
    if subprocess.run(['/usr/bin/python3', '-m', 'pip', '--version'], capture_output=True).returncode != 0:
        pytest.skip('no pip for /usr/bin/python3 (python3-pip)')
    root = tmp_path_factory.mktemp('index')
    (root / 'simple' / 'skilld-pyshout').mkdir(parents=True)
    files = {
        'skilld_pyshout/__init__.py': 'def shout(s):\n    return s.upper()\n',
        'skilld_pyshout-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: skilld-pyshout\nVersion: 1.0\n',
        'skilld_pyshout-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n'
                                              'Tag: py3-none-any\n',
    }
    record = []
    with zipfile.ZipFile(root / 'simple' / 'skilld-pyshout' / 'skilld_pyshout-1.0-py3-none-any.whl', 'w') as z:
        for name, text in files.items():
            z.writestr(name, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()
            record.append('%s,sha256=%s,%d' % (name, digest, len(text)))
        record.append('skilld_pyshout-1.0.dist-info/RECORD,,')
        z.writestr('skilld_pyshout-1.0.dist-info/RECORD', '\n'.join(record) + '\n')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield 'http://127.0.0.1:%d/simple/' % server.server_address[1]
    server.shutdown()


@pytest.fixture
def needy_skill(tmp_path):
    """A skill needing a Python distribution the index has and one no source provides."""
    d = tmp_path / 'needy'
    (d / 'scripts').mkdir(parents=True)
    (d / 'SKILL.md').write_text('---\nname: needy\ndescription: Needs a package nobody has.\n---\n')
    (d / 'requirements.txt').write_text('skilld-pyshout==1.0\nskilld-test-no-such-dist==1.0\n')
    (d / 'scripts' / 'main.py').write_text('import skilld_pyshout, skilld_test_no_such_dist\n')
    return str(d)


def test_service_build_environment(service, pip_index, exact_skill, needy_skill):
    """BuildEnvironment through the real skilld: a skill needing nothing, one needing what no
    source has (a partial build, named, the log streamed), and the service's own refusals."""
    with Client(mode='service', bus=service) as c:
        b = c.build_environment(exact_skill)
        assert (b.via, b.id, b.cached, b.missing) == ('service', '', False, [])

        log = []
        b = c.build_environment(needy_skill, resolvers=['pip'], index_url=pip_index, log=log.append)
        assert b.via == 'service' and len(b.id) == 64 and not b.complete
        assert b.missing == ['python:skilld-test-no-such-dist']
        assert b'skilld-test-no-such-dist' in b''.join(log)
        again = c.build_environment(needy_skill, resolvers=['pip'], index_url=pip_index)
        assert again.id == b.id and again.cached

        nothing = os.path.join(os.path.dirname(needy_skill), 'nothing')
        shutil.copytree(needy_skill, nothing)
        with open(os.path.join(nothing, 'requirements.txt'), 'w') as f:
            f.write('skilld-test-no-such-dist==1.0\n')
        with open(os.path.join(nothing, 'scripts', 'main.py'), 'w') as f:
            f.write('import skilld_test_no_such_dist\n')
        with pytest.raises(SkilldError) as e:
            c.build_environment(nothing, resolvers=['pip'], index_url=pip_index)
        assert e.value.name == 'io.skilld.Skilld1.Error.EnvironmentBuildFailed'
        assert 'No source provided' in str(e.value)
        with pytest.raises(SkilldError) as e:
            c.build_environment(needy_skill, index_url='ftp://127.0.0.1/simple/')
        assert e.value.name == 'org.freedesktop.DBus.Error.InvalidArgs'
        assert 'index-url' in str(e.value)
        bad = os.path.join(os.path.dirname(needy_skill), 'bad.skill')
        with open(bad, 'wb') as f:
            f.write(b'not a zip')
        with pytest.raises(SkilldError) as e:
            c.build_environment(bad)
        assert e.value.name == 'io.skilld.Skilld1.Error.InvalidSkill'


def test_service_build_environment_asyncio(service, pip_index, needy_skill):
    async def main():
        async with AsyncClient(mode='service', bus=service) as a:
            log = []
            b = await a.build_environment(needy_skill, resolvers=['pip'], index_url=pip_index, rebuild=True,
                                          log=log.append)
            return b, b''.join(log)
    b, log = asyncio.run(main())
    assert b.via == 'service' and len(b.id) == 64 and not b.cached
    assert b.missing == ['python:skilld-test-no-such-dist']
    assert b'skilld-test-no-such-dist' in log


@needs_root
def test_embedded_build_environment(pip_index, needy_skill, tmp_path, monkeypatch):
    """The fallback where no service answers: skillctl env build --local, into the caller's cache."""
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))
    log = []
    b = Client(bus=NO_BUS, skillctl=SKILLCTL).build_environment(needy_skill, resolvers=['pip'], index_url=pip_index,
                                                              log=log.append)
    assert b.via == 'embedded' and len(b.id) == 64
    assert b.missing == ['python:skilld-test-no-such-dist']
    assert os.path.isdir(tmp_path / 'cache' / 'skilld' / 'envs' / b.id)
    assert b'skilld-test-no-such-dist' in b''.join(log)

    async def twin():
        return await AsyncClient(mode='local', skillctl=SKILLCTL).build_environment(needy_skill, resolvers=['pip'],
                                                                                   index_url=pip_index)
    again = asyncio.run(twin())
    assert (again.via, again.id, again.cached) == ('embedded', b.id, True)
    with pytest.raises(SkilldError, match='no-such'):
        Client(mode='local', skillctl=SKILLCTL).build_environment(str(tmp_path / 'no-such'))


def test_pip_installs_offline(tmp_path):
    """pip installs the package from the tree with Debian's setuptools and no package index."""
    pip = subprocess.run(['/usr/bin/python3', '-m', 'pip', '--version'], capture_output=True)
    if pip.returncode != 0:
        pytest.skip('no pip for /usr/bin/python3 (python3-pip)')
    src = tmp_path / 'src'
    shutil.copytree(os.path.join(ROOT, 'python'), src, ignore=shutil.ignore_patterns('build', '*.egg-info',
                                                                                    '__pycache__'))
    subprocess.run(['/usr/bin/python3', '-m', 'pip', '--isolated', 'install', '--no-index', '--no-build-isolation',
                    '--no-deps', '--target', str(tmp_path / 'site'), str(src)], check=True, capture_output=True)
    out = subprocess.run(['/usr/bin/python3', '-c', 'import skilld_client; print(skilld_client.__file__)'],
                         env=dict(os.environ, PYTHONPATH=str(tmp_path / 'site')), check=True, capture_output=True,
                         text=True).stdout
    assert out.startswith(str(tmp_path / 'site'))
