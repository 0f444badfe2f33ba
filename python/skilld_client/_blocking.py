"""The blocking client: jeepney's blocking connection to the system bus, with fd passing; the
skill's output copied from pipes by two threads while the main thread waits for RunFinished."""
import os
import select
import subprocess
import tempfile
import threading
from collections import deque
from typing import Any, Dict, List, Optional

from jeepney import HeaderFields, MessageType
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

from . import _common as c

UNKNOWN_METHOD = 'org.freedesktop.DBus.Error.UnknownMethod'
# After RunFinished, how long the service gets to close our output pipes.
OUTPUT_GRACE = 3.0
# A safety net, not polling: RunFinished wakes us; were it lost (the service restarted), the
# run's State is read again this often.
STATE_RECHECK = 30.0


def check_reply(reply):
    """The body of a method reply; SkilldError (or ServiceUnavailable) for an error reply."""
    if reply.header.message_type == MessageType.error:
        name = reply.header.fields.get(HeaderFields.error_name)
        text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else name
        cls = c.ServiceUnavailable if name in c.NO_SERVICE_ERRORS else c.SkilldError
        raise cls(text, name)
    return reply.body


class _Pump(threading.Thread):
    """Copies a pipe to a sink until end of file, or until stopped; closes the pipe."""

    def __init__(self, fd: int, sink):
        super().__init__(daemon=True)
        self.fd, self.sink = fd, sink
        self.stop = threading.Event()

    def run(self):
        try:
            while True:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if not ready:
                    if self.stop.is_set():
                        return
                    continue
                b = os.read(self.fd, 65536)
                if not b:
                    return
                try:
                    self.sink(b)
                except Exception:       # a broken sink stops the copy, not the run
                    self.sink = lambda _b: None
        except OSError:
            return
        finally:
            os.close(self.fd)

    def finish(self, grace: float):
        self.join(grace)
        self.stop.set()
        self.join()


class Client:
    """Runs skills in skilld's sandbox.

    mode: "auto" (the service where one answers on the system bus, else embedded through
    skillctl), "service" (never embedded) or "local" (always embedded). bus: "SYSTEM", or a D-Bus
    address. skillctl: the program for embedded runs (default: skillctl on PATH).
    parse_float: how result numbers with a fraction or exponent are read (e.g.
    decimal.Decimal to keep them exact; integers are exact anyway)."""

    def __init__(self, mode: str = 'auto', *, bus: str = 'SYSTEM', skillctl: Optional[str] = None,
                 parse_float=None):
        if mode not in ('auto', 'service', 'local'):
            raise ValueError('mode is "auto", "service" or "local"')
        self.mode, self.bus, self.skillctl, self.parse_float = mode, bus, skillctl, parse_float
        self._conn = None

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _connection(self):
        if self._conn is None:
            try:
                self._conn = open_dbus_connection(bus=self.bus, enable_fds=True)
            except (OSError, TimeoutError, KeyError, RuntimeError) as e:
                raise c.ServiceUnavailable('Cannot connect to the system bus: %s' % e) from None
        return self._conn

    def run(self, skill: str, input: Any = None, files: Optional[Dict[str, Any]] = None,
            timeout: Optional[float] = None, *, script: str = '', args: List[str] = (),
            limits: Optional[Dict[str, int]] = None, env: Optional[Dict[str, str]] = None,
            network: bool = False, stdout=None, stderr=None, output_dir: Optional[str] = None) -> c.Result:
        """Runs skill (a folder, a .skill file or an installed skill's name) and returns how it
        ended. A run that fails is a Result too (status, exit_code); SkilldError when the run
        could not be made."""
        input_json = c.input_text(input)
        if self.mode != 'local':
            try:
                return self._run_service(skill, input_json, files, timeout, script, args, limits, env, network,
                                         stdout, stderr)
            except c.ServiceUnavailable:
                if self.mode == 'service':
                    raise
                self.close()
        return self._run_embedded(skill, input_json, files, timeout, script, args, limits, env, network,
                                  stdout, stderr, output_dir)

    # ---- through the service ----

    def _call(self, msg):
        return check_reply(self._connection().send_and_get_reply(msg))

    def _state(self, path: str) -> str:
        return self._call(c.get_property(path, 'State'))[0][1]

    def _run_service(self, skill, input_json, files, timeout, script, args, limits, env, network, stdout, stderr):
        conn = self._connection()
        sinks = [c.output_sink(stdout), c.output_sink(stderr)]
        to_close, pumps = [], []
        try:
            skill_fd, name = c.open_skill(skill)
            if skill_fd is not None:
                to_close.append(skill_fd)
            file_fds, writers, readers = c.run_fds(files, sinks, to_close)
            pumps = [_Pump(fd, sink) for fd, sink in readers]
            options = c.run_options(limits, timeout, env, file_fds, network, writers[0], writers[1])

            queue = deque()
            with conn.filter(c.finished_rule(), queue=queue):
                # Matched before Run: the end of a quick run cannot be missed.
                self._call(message_bus.AddMatch(c.finished_rule(True)))
                try:
                    run_id, path = self._call(c.run_message(skill_fd, name, script, list(args), input_json,
                                                            options))
                    # The service has its copies: ours would keep the pipes open past the run.
                    for fd in to_close:
                        os.close(fd)
                    to_close = []
                    for p in pumps:
                        p.start()
                    self._wait(conn, queue, run_id, path)
                except KeyboardInterrupt:
                    if 'path' in locals():
                        try:
                            self._call(c.run_method(path, 'Cancel'))
                        except c.SkilldError:
                            pass
                    raise
                finally:
                    try:
                        self._call(message_bus.RemoveMatch(c.finished_rule(True)))
                    except (c.SkilldError, OSError):
                        pass
            text = self._call(c.get_property(path, 'Result'))[0][1]
            for p in pumps:
                p.finish(OUTPUT_GRACE)
            if not text:
                raise c.SkilldError('Run %s ended without a result (%s)' % (run_id, self._state(path)))
            return c.parse_result(text, 'service', self.parse_float, run_path=path)
        except (ConnectionError, BrokenPipeError) as e:
            self.close()
            raise c.ServiceUnavailable('The connection to the bus broke: %s' % e) from None
        finally:
            for fd in to_close:
                os.close(fd)
            for p in pumps:
                if p.is_alive():
                    p.finish(0)
                elif p.ident is None:
                    os.close(p.fd)

    def _wait(self, conn, queue, run_id, path):
        """Until the run is final: woken by RunFinished, which anyone may send, hence checked
        against the run's State."""
        while True:
            try:
                msg = conn.recv_until_filtered(queue, timeout=STATE_RECHECK)
                if msg.body[0] != run_id:
                    continue
            except TimeoutError:
                pass
            if self._state(path) in c.FINAL_STATES:
                return

    def build_environment(self, skill: str, *, resolvers: Optional[List[str]] = None,
                          index_url: Optional[str] = None, rebuild: bool = False,
                          log=None) -> c.EnvironmentBuild:
        """Builds the environment of third-party packages skill (a folder or a .skill file) needs:
        through the service (BuildEnvironment, polkit's io.skilld.build-environment) into the cache
        every run through the service uses, else embedded (skillctl env build --local) into the
        caller's own. Returns when the build is done, which may take minutes; log (a callable or
        binary file) gets the build's log as it comes. A build that lacks some packages keeps the
        rest (EnvironmentBuild.missing names them); SkilldError when nothing could be built, its
        name the D-Bus error (e.g. io.skilld.Skilld1.Error.QuotaExceeded while the policy's cap on
        builds going at once is reached)."""
        resolvers = c.check_resolvers(resolvers)
        if self.mode != 'local':
            try:
                return self._build_service(skill, resolvers, index_url, rebuild, log)
            except c.ServiceUnavailable:
                if self.mode == 'service':
                    raise
                self.close()
        return self._build_embedded(skill, resolvers, index_url, rebuild, log)

    def _build_service(self, skill, resolvers, index_url, rebuild, log):
        conn = self._connection()
        sink = c.output_sink(log)
        to_close, pump = [], None
        try:
            skill_fd = c.open_skill_archive(skill)
            to_close.append(skill_fd)
            log_fd = None
            if sink:
                r, log_fd = os.pipe2(os.O_CLOEXEC)
                to_close.append(log_fd)
                pump = _Pump(r, sink)
            msg = c.build_message(skill_fd, c.build_options(resolvers, index_url, rebuild, log_fd))
            serial = next(conn.outgoing_serial)
            conn.send(msg, serial=serial)
            # The service has its copies: ours would keep the log pipe open past the build.
            for fd in to_close:
                os.close(fd)
            to_close = []
            if pump:
                pump.start()
            reply = _recv_reply(conn, serial)
            if pump:
                pump.finish(OUTPUT_GRACE)
                pump = None
            return c.build_from_reply(check_reply(reply))
        except (ConnectionError, BrokenPipeError) as e:
            self.close()
            raise c.ServiceUnavailable('The connection to the bus broke: %s' % e) from None
        finally:
            for fd in to_close:
                os.close(fd)
            if pump is not None:
                if pump.is_alive():
                    pump.finish(0)
                elif pump.ident is None:
                    os.close(pump.fd)

    def _build_embedded(self, skill, resolvers, index_url, rebuild, log):
        prog = c.find_skillctl(self.skillctl)
        sink = c.output_sink(log)
        cmd = c.embedded_build_command(prog, skill, resolvers, index_url, rebuild)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = []

        def keep(b):
            err.append(b)
            if sink:
                sink(b)
        pump = _Pump(os.dup(p.stderr.fileno()), keep)
        p.stderr.close()
        pump.start()
        out = p.stdout.read()
        p.wait()
        pump.finish(OUTPUT_GRACE)
        return c.embedded_build_result(out, b''.join(err))

    def list_runs(self, limit: Optional[int] = None, *, all: bool = False, skill: Optional[str] = None,
                  state: Optional[str] = None) -> c.RunList:
        """The newest limit runs of the service's store (None: every one), oldest first, as
        RunEntry; the list's older says how many more matched. Yours (root: everyone's), or with
        all everyone's (polkit's io.skilld.manage-runs); of one skill, in one state. Through the
        service only: embedded runs are not stored."""
        pager = c.ListPager(limit, all, skill, state)
        while not pager.done:
            try:
                pager.add(self._call(pager.call()))
            except c.SkilldError as e:
                if e.name != UNKNOWN_METHOD or pager.pages:
                    raise
                return c.list_compat(self._call(c.list_message_compat(all)), limit, skill, state)
        return pager.result()

    def read_artifact(self, result: c.Result, path: str) -> bytes:
        """The content of an artifact (a path of result.artifacts)."""
        if result.via == 'embedded':
            with open(os.path.join(result.output_dir, 'files', path), 'rb') as f:
                return f.read()
        (fd,) = self._call(c.run_method(result.run_path, 'OpenArtifact', 's', (path,)))
        with fd.to_file('rb') as f:
            return f.read()

    # ---- embedded ----

    def _run_embedded(self, skill, input_json, files, timeout, script, args, limits, env, network, stdout, stderr,
                      output_dir):
        prog = c.find_skillctl(self.skillctl)
        with tempfile.TemporaryDirectory(prefix='skilld-client-') as tmp:
            paths = c.stage_files(files, tmp)
            out = output_dir or os.path.join(tempfile.mkdtemp(prefix='skilld-run-'), 'run')
            cmd = c.embedded_command(prog, skill, script, list(args), input_json, paths, limits,
                                     timeout, env, network, out)
            p = subprocess.run(cmd, input=input_json.encode(), capture_output=True)
        return embedded_result(p.stdout, p.stderr, out, self.parse_float, stdout, stderr)


def _recv_reply(conn, serial):
    """The reply to our call of that serial, with no timeout (a build takes minutes; the bus
    gives up on its own if the service goes away), whatever else arrives meanwhile."""
    while True:
        msg = conn.receive()
        if msg.header.fields.get(HeaderFields.reply_serial) == serial:
            return msg


def embedded_result(out: bytes, err: bytes, output_dir: str, parse_float, stdout, stderr) -> c.Result:
    """The Result of skillctl run --json; the output goes to the sinks from the logs (an embedded
    run with --json does not stream)."""
    text = out.decode('utf-8', 'replace').strip()
    if not text.startswith('{'):
        raise c.SkilldError(err.decode('utf-8', 'replace').strip() or 'skillctl run failed')
    result = c.parse_result(text, 'embedded', parse_float, output_dir=output_dir)
    for name, dest in (('stdout.log', stdout), ('stderr.log', stderr)):
        sink = c.output_sink(dest)
        if sink:
            try:
                with open(os.path.join(output_dir, name), 'rb') as f:
                    data = f.read()
            except OSError:
                continue
            if data:
                sink(data)
    return result
