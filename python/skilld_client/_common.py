"""What the blocking and the asyncio clients share: the service's names, the result, the errors,
packing a skill folder the way skillctl does, and the messages of a run."""
import fcntl
import json
import os
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from jeepney import DBusAddress, MatchRule, new_method_call

BUS_NAME = 'io.skilld.Skilld1'
MANAGER_PATH = '/io/skilld/Skilld1'
MANAGER = DBusAddress(MANAGER_PATH, bus_name=BUS_NAME, interface='io.skilld.Skilld1.Manager')
RUN_INTERFACE = 'io.skilld.Skilld1.Run'

# The service is not there (not installed, not activatable): the embedded engine stands in.
NO_SERVICE_ERRORS = (
    'org.freedesktop.DBus.Error.ServiceUnknown',
    'org.freedesktop.DBus.Error.NameHasNoOwner',
    'org.freedesktop.DBus.Error.Spawn.ServiceNotFound',
    'org.freedesktop.DBus.Error.Spawn.ExecFailed',
)

# What the loader leaves out of a package (skilld/loader/path.c).
EXCLUDED_NAMES = ('__pycache__', 'node_modules', '.DS_Store')
# 1980-01-02 00:00: what skillctl stamps on every entry, so that packages are reproducible.
PACKAGE_DATE = (1980, 1, 2, 0, 0, 0)

FINAL_STATES = ('finished', 'interrupted')


class SkilldError(Exception):
    """A run could not be made: the service refused it (name is the D-Bus error, such as
    io.skilld.Skilld1.Error.InvalidSkill or org.freedesktop.DBus.Error.AccessDenied), or skillctl
    failed before the skill ran."""

    def __init__(self, message: str, name: Optional[str] = None):
        super().__init__(message)
        self.name = name


class ServiceUnavailable(SkilldError):
    """No skilld service answers on the system bus (mode="service" only: "auto" runs embedded)."""


@dataclass
class Result:
    """How a run ended, from its result document (schemas/result.schema.json)."""
    document: Dict[str, Any]
    json: str
    via: str                            # "service" or "embedded"
    output_dir: Optional[str] = None    # embedded: where result.json and the artifacts are
    run_path: Optional[str] = None      # service: the run's object path
    run_id: str = field(init=False)
    status: str = field(init=False)
    exit_code: Optional[int] = field(init=False)
    output: Any = field(init=False)

    def __post_init__(self):
        d = self.document
        self.run_id = d.get('run_id')
        self.status = d.get('status')
        self.exit_code = d.get('exit_code')
        self.output = d.get('output')

    @property
    def ok(self) -> bool:
        return self.status == 'succeeded'

    @property
    def signal(self) -> Optional[int]:
        return self.document.get('signal')

    @property
    def error(self) -> Optional[str]:
        return self.document.get('error')

    @property
    def stdout(self) -> Optional[str]:
        """The standard output when small and text (the whole is in stdout.log)."""
        return (self.document.get('stdout') or {}).get('text')

    @property
    def stderr(self) -> Optional[str]:
        return (self.document.get('stderr') or {}).get('text')

    @property
    def artifacts(self) -> List[Dict[str, Any]]:
        return self.document.get('artifacts') or []


def parse_result(text: str, via: str, parse_float=None, **kw) -> Result:
    try:
        doc = json.loads(text, parse_float=parse_float)
    except ValueError as e:
        raise SkilldError('The result of the run is not JSON: %s' % e) from None
    if not isinstance(doc, dict) or 'status' not in doc:
        raise SkilldError('The result of the run is not a result document')
    return Result(document=doc, json=text, via=via, **kw)


def input_text(input: Any) -> str:
    """The input JSON as text: a str is taken as JSON text already, anything else is dumped."""
    if input is None:
        return ''
    if isinstance(input, (bytes, bytearray)):
        input = bytes(input).decode('utf-8')
    if isinstance(input, str):
        try:
            json.loads(input)
        except ValueError as e:
            raise SkilldError('The input is not valid JSON: %s' % e) from None
        return input
    return json.dumps(input)


def skill_name_of(folder: str) -> str:
    """The name in SKILL.md's frontmatter, else the folder's name: the top folder of the package.
    The service checks the skill; this only picks the folder name as skillctl does."""
    try:
        with open(os.path.join(folder, 'SKILL.md'), encoding='utf-8') as f:
            lines = f.read(65536).splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    if lines and lines[0].strip() == '---':
        for line in lines[1:]:
            if line.strip() == '---':
                break
            if line.startswith('name:'):
                name = line[5:].strip().strip('"\'')
                if name:
                    return name
    return os.path.basename(os.path.normpath(os.path.abspath(folder)))


def _walk(folder: str):
    """(relative path, lstat) of the tree, sorted bytewise by path as the loader sorts; symlinks
    and special files are refused here with the loader's reasons rather than by the service."""
    out = []

    def visit(rel):
        full = os.path.join(folder, rel) if rel else folder
        with os.scandir(full) as it:
            entries = sorted(it, key=lambda e: os.fsencode(e.name))
        for e in entries:
            if e.name in EXCLUDED_NAMES:
                continue
            path = rel + '/' + e.name if rel else e.name
            st = os.lstat(e.path)
            if stat.S_ISLNK(st.st_mode):
                raise SkilldError('%s: symlinks are not allowed in a skill' % path)
            if stat.S_ISDIR(st.st_mode):
                out.append((path, st))
                visit(path)
            elif stat.S_ISREG(st.st_mode):
                out.append((path, st))
            else:
                raise SkilldError('%s: only regular files and folders are allowed in a skill' % path)
    visit('')
    out.sort(key=lambda p: os.fsencode(p[0]))
    return out


def package_folder(folder: str) -> int:
    """Zips a skill folder into a sealed memfd, every entry under "<name>/" as skillctl packs it
    (skillctl/skill-fd.c); returns the fd, at offset 0."""
    name = skill_name_of(folder)
    fd = os.memfd_create('skill', os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        with os.fdopen(os.dup(fd), 'wb') as raw, \
                zipfile.ZipFile(raw, 'w', compression=zipfile.ZIP_DEFLATED) as z:
            def header(path, mode, is_dir):
                zi = zipfile.ZipInfo(path, date_time=PACKAGE_DATE)
                zi.create_system = 3    # Unix: the mode bits below count
                zi.external_attr = ((stat.S_IFDIR if is_dir else stat.S_IFREG) | (mode & 0o777)) << 16
                if is_dir:
                    zi.external_attr |= 0x10
                zi.compress_type = zipfile.ZIP_STORED if is_dir else zipfile.ZIP_DEFLATED
                return zi
            z.writestr(header(name + '/', 0o755, True), b'')
            for path, st in _walk(folder):
                if stat.S_ISDIR(st.st_mode):
                    z.writestr(header('%s/%s/' % (name, path), st.st_mode, True), b'')
                else:
                    with open(os.path.join(folder, path), 'rb') as f:
                        z.writestr(header('%s/%s' % (name, path), st.st_mode, False), f.read())
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
        os.lseek(fd, 0, os.SEEK_SET)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_skill(skill: str):
    """(fd, None) for a folder or a .skill file, (None, name) for an installed skill's name."""
    if os.path.isdir(skill):
        return package_folder(skill), None
    if os.path.exists(skill):
        return os.open(skill, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY), None
    if '/' not in skill:
        return None, skill
    raise SkilldError('%s: no such skill folder or file' % skill)


def open_files(files: Optional[Dict[str, Any]]) -> Dict[str, int]:
    """Input files as fds open for reading: a path, bytes (into a memfd) or a binary file."""
    fds = {}
    try:
        for name, what in (files or {}).items():
            if isinstance(what, (bytes, bytearray, memoryview)):
                fd = os.memfd_create('input', os.MFD_CLOEXEC)
                os.write(fd, bytes(what))
                os.lseek(fd, 0, os.SEEK_SET)
            elif hasattr(what, 'fileno'):
                fd = os.dup(what.fileno())
            else:
                try:
                    fd = os.open(os.fspath(what), os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
                except OSError as e:
                    raise SkilldError('Input file %s: %s: %s' % (name, what, e.strerror)) from None
            fds[name] = fd
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def run_fds(files: Optional[Dict[str, Any]], sinks, to_close: List[int], nonblocking: bool = False):
    """The input files' fds and a pipe per output sink. What the service gets a copy of goes to
    to_close (to close once Run() returned); returns the files' fds, the pipes' write ends
    (stdout, stderr; None without a sink) and [(read end, sink)], which the caller owns."""
    file_fds = open_files(files)
    to_close += list(file_fds.values())
    writers, readers = [None, None], []
    for i, sink in enumerate(sinks):
        if sink:
            r, writers[i] = os.pipe2(os.O_CLOEXEC | (os.O_NONBLOCK if nonblocking else 0))
            to_close.append(writers[i])
            readers.append((r, sink))
    return file_fds, writers, readers


def run_options(limits: Optional[Dict[str, int]], timeout: Optional[float], env: Optional[Dict[str, str]],
                files: Dict[str, int], network: bool, stdout_fd: Optional[int],
                stderr_fd: Optional[int]) -> Dict[str, tuple]:
    """Run()'s a{sv} options, as jeepney takes variants: {key: (signature, value)}
    (schemas/run-options.schema.json)."""
    lim = dict(limits or {})
    if timeout is not None:
        if timeout <= 0:
            raise SkilldError('The timeout must be positive, in seconds')
        lim['timeout'] = int(timeout * 1000000)
    opts = {}
    if lim:
        opts['limits'] = ('a{st}', {k: int(v) for k, v in lim.items()})
    if env:
        opts['env'] = ('a{ss}', dict(env))
    if files:
        opts['files'] = ('a{sh}', dict(files))
    if network:
        opts['network'] = ('b', True)
    if stdout_fd is not None:
        opts['stdout'] = ('h', stdout_fd)
    if stderr_fd is not None:
        opts['stderr'] = ('h', stderr_fd)
    return opts


def options_as_json(options: Dict[str, tuple]) -> Dict[str, Any]:
    """The options as the JSON of schemas/run-options.schema.json (fds as their numbers)."""
    return {k: v for k, (_sig, v) in options.items()}


def run_message(skill_fd: Optional[int], name: Optional[str], script: str, args: List[str], input_json: str,
                options: Dict[str, tuple]):
    if skill_fd is not None:
        return new_method_call(MANAGER, 'Run', 'hsassa{sv}',
                               (skill_fd, script, list(args), input_json, options))
    return new_method_call(MANAGER, 'RunInstalled', 'ssassa{sv}', (name, script, list(args), input_json, options))


def finished_rule(for_bus: bool = False) -> MatchRule:
    """RunFinished. The bus daemon resolves the sender's well-known name; a message carries the
    unique name, so the rule matched locally names no sender (the run's State is checked anyway:
    anyone may send a signal)."""
    return MatchRule(type='signal', sender=BUS_NAME if for_bus else None, interface='io.skilld.Skilld1.Manager',
                     member='RunFinished', path=MANAGER_PATH)


# ---- listing runs ----

# Runs a ListRunsFiltered() reply carries at most: a long listing comes in pages (as skillctl's).
LIST_PAGE_MAX = 10000
RUN_STATES = ('queued', 'running', 'finished', 'interrupted')


@dataclass
class RunEntry:
    """One run of a listing, as ListRuns() describes it (man io.skilld.Skilld1(5))."""
    id: str
    path: str                           # the run's object
    skill: str
    script: str
    owner: int                          # uid
    state: str                          # queued, running, finished, interrupted
    status: Optional[str]               # when finished: succeeded, failed, timeout, ...
    exit_code: Optional[int]
    created_usec: int                   # CLOCK_REALTIME microseconds
    ended_usec: Optional[int]


class RunList(list):
    """The runs a list_runs() call returned, oldest first; older: how many more runs matched but
    were left out (older than these), 0 when the list is complete."""

    def __init__(self, runs=(), older: int = 0):
        super().__init__(runs)
        self.older = older


def run_entry(t) -> RunEntry:
    return RunEntry(id=t[0], path=t[1], skill=t[2], script=t[3], owner=t[4], state=t[5], status=t[6] or None,
                    exit_code=t[7] if t[7] >= 0 else None, created_usec=t[8], ended_usec=t[9] or None)


def check_list_args(limit: Optional[int], skill: Optional[str], state: Optional[str]):
    """Refuses what the service would, before any call."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError('limit is a number of runs, 1 or more (None: every run)')
    if state is not None and state not in RUN_STATES:
        raise ValueError('state is one of %s' % ', '.join(RUN_STATES))
    if skill is not None and not isinstance(skill, str):
        raise ValueError('skill is a skill name')


def list_message(limit: int, all: bool, skill: Optional[str], state: Optional[str], before: Optional[str]):
    """A ListRunsFiltered() call for one page of at most limit runs."""
    options = {'limit': ('u', limit)}
    if all:
        options['all'] = ('b', True)
    if skill is not None:
        options['skill'] = ('s', skill)
    if state is not None:
        options['state'] = ('s', state)
    if before:
        options['before'] = ('s', before)
    return new_method_call(MANAGER, 'ListRunsFiltered', 'a{sv}', (options,))


def list_message_compat(all: bool):
    """The call for a service older than ListRunsFiltered()."""
    return new_method_call(MANAGER, 'ListAllRuns' if all else 'ListRuns')


def list_compat(body, limit: Optional[int], skill: Optional[str], state: Optional[str]) -> RunList:
    """What ListRunsFiltered() would have answered, from ListRuns()'s reply body."""
    runs = [run_entry(t) for t in body[0]
            if (skill is None or t[2] == skill) and (state is None or t[5] == state)]
    cut = max(0, len(runs) - limit) if limit is not None else 0
    return RunList(runs[cut:], cut)


class ListPager:
    """The calls of one list_runs(), newest page first, and the list they add up to: the blocking
    and the asyncio client send each call() and give back its reply's body to add()."""

    def __init__(self, limit: Optional[int], all: bool, skill: Optional[str], state: Optional[str]):
        check_list_args(limit, skill, state)
        self.limit, self.all, self.skill, self.state = limit, all, skill, state
        self.pages, self.got, self.older, self.before, self.done = [], 0, 0, None, False

    def call(self):
        want = LIST_PAGE_MAX if self.limit is None else min(self.limit - self.got, LIST_PAGE_MAX)
        self._want = want
        return list_message(want, self.all, self.skill, self.state, self.before)

    def add(self, body):
        self.older, self.before, runs = body
        self.pages.append(runs)
        self.got += self._want      # a page with older runs left out is full
        self.done = self.older == 0 or (self.limit is not None and self.got >= self.limit)

    def result(self) -> RunList:
        return RunList([run_entry(t) for page in reversed(self.pages) for t in page], self.older)


def get_property(path: str, name: str):
    return new_method_call(DBusAddress(path, bus_name=BUS_NAME, interface='org.freedesktop.DBus.Properties'),
                           'Get', 'ss', (RUN_INTERFACE, name))


def run_method(path: str, method: str, signature: Optional[str] = None, body=()):
    return new_method_call(DBusAddress(path, bus_name=BUS_NAME, interface=RUN_INTERFACE), method, signature, body)


def output_sink(dest) -> Optional[Callable[[bytes], None]]:
    """A callable taking bytes, from a callable or a binary file."""
    if dest is None:
        return None
    if callable(dest):
        return dest
    if hasattr(dest, 'write'):
        def write(b, f=dest):
            f.write(b)
            if hasattr(f, 'flush'):
                f.flush()
        return write
    raise TypeError('stdout and stderr take a callable or a binary file')


def embedded_command(skillctl: str, skill: str, script: str, args: List[str], input_json: str,
                     files: Dict[str, str], limits: Optional[Dict[str, int]], timeout: Optional[float],
                     env: Optional[Dict[str, str]], network: bool, output_dir: str) -> List[str]:
    """skillctl run --local --json: the embedded engine, for where no service answers."""
    cmd = [skillctl, 'run', '--local', skill, '--json', '--output-dir', output_dir]
    if script:
        cmd += ['--script', script]
    if input_json:
        cmd += ['--input-file', '-']    # on stdin: no limit on a command line's length
    for name, path in files.items():
        cmd += ['--file', '%s=%s' % (name, path)]
    lim = dict(limits or {})
    if timeout is not None:
        cmd += ['--timeout', '%g' % timeout]
    flags = {'memory': '--memory', 'tasks': '--tasks', 'cpu': '--cpu'}
    for k, v in lim.items():
        if k not in flags:
            raise SkilldError('The limit %s can only be asked of the service' % k)
        cmd += [flags[k], str(int(v))]
    for k, v in (env or {}).items():
        cmd += ['--env', '%s=%s' % (k, v)]
    if network:
        cmd += ['--network']
    return cmd + ['--'] + list(args)


def find_skillctl(prog: Optional[str]) -> str:
    prog = prog or os.environ.get('SKILLCTL') or shutil.which('skillctl')
    if not prog:
        raise SkilldError('No skilld service answers and skillctl is not installed')
    return prog


def stage_files(files: Optional[Dict[str, Any]], tmp: str) -> Dict[str, str]:
    """Input files as paths for skillctl --file: bytes and binary files are written to tmp."""
    paths = {}
    for name, what in (files or {}).items():
        if isinstance(what, (bytes, bytearray, memoryview)) or hasattr(what, 'read'):
            data = what.read() if hasattr(what, 'read') else bytes(what)
            paths[name] = os.path.join(tmp, 'in-%d' % len(paths))
            with open(paths[name], 'wb') as f:
                f.write(data)
        else:
            paths[name] = os.fspath(what)
    return paths


# ---- environments (BuildEnvironment) ----

RESOLVERS = ('debian', 'pip', 'npm')


@dataclass
class EnvironmentBuild:
    """What a build of a skill's environment gave: its id (64 hexadecimal digits; '' when the skill
    needs no environment), whether it existed already (nothing was built), and what no source
    provided ("python:NAME", "system:NAME", "npm:NAME"; the rest of the environment is built)."""
    id: str
    cached: bool
    missing: List[str]
    via: str                            # "service" or "embedded"

    @property
    def complete(self) -> bool:
        return not self.missing


def check_resolvers(resolvers) -> Optional[List[str]]:
    if resolvers is None:
        return None
    if isinstance(resolvers, str):
        raise TypeError('resolvers is a list of names, such as ["debian", "pip"]')
    out = [str(r) for r in resolvers]
    for r in out:
        if r not in RESOLVERS:
            raise SkilldError('Unknown resolver %r; known are %s' % (r, ', '.join(RESOLVERS)))
    return out


def build_options(resolvers: Optional[List[str]], index_url: Optional[str], rebuild: bool,
                  log_fd: Optional[int]) -> Dict[str, tuple]:
    """BuildEnvironment()'s a{sv} options (io.skilld.Skilld1(5))."""
    opts = {}
    if resolvers is not None:
        opts['resolvers'] = ('as', list(resolvers))
    if index_url:
        opts['index-url'] = ('s', index_url)
    if rebuild:
        opts['rebuild'] = ('b', True)
    if log_fd is not None:
        opts['log'] = ('h', log_fd)
    return opts


def open_skill_archive(skill: str) -> int:
    """The fd BuildEnvironment() takes: a folder packed as for Run(), or a .skill file. It takes
    no installed skill's name (an installed skill's environment is built when it is installed)."""
    fd, name = open_skill(skill)
    if fd is None:
        raise SkilldError('%s: no such skill folder or file (an environment is built from a skill folder or a '
                          '.skill file)' % name)
    return fd


def build_message(skill_fd: int, options: Dict[str, tuple]):
    return new_method_call(MANAGER, 'BuildEnvironment', 'ha{sv}', (skill_fd, options))


def build_from_reply(body) -> EnvironmentBuild:
    env_id, cached, missing = body
    return EnvironmentBuild(id=env_id, cached=bool(cached), missing=list(missing), via='service')


def embedded_build_command(skillctl: str, skill: str, resolvers: Optional[List[str]], index_url: Optional[str],
                           rebuild: bool) -> List[str]:
    """skillctl env build --local --json: the embedded build, into the caller's own cache."""
    cmd = [skillctl, 'env', 'build', '--local', '--json']
    if resolvers is not None:
        cmd += ['--resolvers', ','.join(resolvers)]
    if index_url:
        cmd += ['--index-url', index_url]
    if rebuild:
        cmd += ['--rebuild']
    return cmd + ['--', skill]


def embedded_build_result(out: bytes, err: bytes) -> EnvironmentBuild:
    """skillctl env build --json prints its document on success (exit 0) and on a partial build
    (exit 3); anything else failed, and its stderr says why."""
    text = out.decode('utf-8', 'replace').strip()
    try:
        doc = json.loads(text) if text.startswith('{') else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or 'id' not in doc:
        raise SkilldError(err.decode('utf-8', 'replace').strip() or 'skillctl env build failed')
    return EnvironmentBuild(id=doc.get('id') or '', cached=bool(doc.get('cached')),
                            missing=list(doc.get('missing') or []), via='embedded')
