"""The asyncio twin of Client. jeepney's asyncio connection passes no file descriptors, so this
one authenticates with jeepney's blocking connection (fds enabled) and then reads it from the
event loop: the socket is watched with add_reader, each readable event is one recvmsg() whose
fds go to jeepney's parser, replies are matched to their calls by serial and signals to their
match rules. Sends are short writes to a local socket and stay synchronous."""
import asyncio
import os
import socket
import tempfile
from typing import Any, Dict, List, Optional

from jeepney import HeaderFields, MessageType
from jeepney.bus_messages import message_bus
from jeepney.fds import FileDescriptor, fds_buf_size
from jeepney.io.blocking import open_dbus_connection

from . import _common as c
from ._blocking import OUTPUT_GRACE, STATE_RECHECK, UNKNOWN_METHOD, check_reply, embedded_result


class _Bus:
    """A connection read from the event loop."""

    def __init__(self, conn):
        self.conn = conn
        self.loop = asyncio.get_running_loop()
        self.replies = {}               # serial -> future
        self.watches = []               # (rule, asyncio.Queue)
        self.broken = None
        # The socket stays blocking: recvmsg() after the loop saw it readable returns at once,
        # and a send finishes whole.
        self.loop.add_reader(conn.sock, self._readable)

    @classmethod
    async def open(cls, bus):
        loop = asyncio.get_running_loop()
        conn = await loop.run_in_executor(None, lambda: open_dbus_connection(bus=bus, enable_fds=True))
        return cls(conn)

    def close(self):
        self.loop.remove_reader(self.conn.sock)
        self.conn.close()
        self._fail(ConnectionResetError('connection closed'))

    def _fail(self, e):
        self.broken = e
        for f in self.replies.values():
            if not f.done():
                f.set_exception(e)
        self.replies.clear()

    def _readable(self):
        parser = self.conn.parser
        try:
            data, anc, flags, _ = self.conn.sock.recvmsg(parser.bytes_desired(), fds_buf_size())
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:
            self.loop.remove_reader(self.conn.sock)
            return self._fail(e)
        if not data or flags & getattr(socket, 'MSG_CTRUNC', 0):
            self.loop.remove_reader(self.conn.sock)
            return self._fail(ConnectionResetError('the bus closed the connection'))
        parser.add_data(data, fds=FileDescriptor.from_ancdata(anc))
        while True:
            msg = parser.get_next_message()
            if msg is None:
                return
            serial = msg.header.fields.get(HeaderFields.reply_serial)
            if serial is not None and serial in self.replies:
                f = self.replies.pop(serial)
                if not f.done():
                    f.set_result(msg)
            elif msg.header.message_type == MessageType.signal:
                for rule, q in self.watches:
                    if rule.matches(msg):
                        q.put_nowait(msg)

    async def call(self, msg):
        if self.broken:
            raise self.broken
        serial = next(self.conn.outgoing_serial)
        f = self.loop.create_future()
        self.replies[serial] = f
        try:
            self.conn.send(msg, serial=serial)
        except BaseException:
            self.replies.pop(serial, None)
            raise
        return check_reply(await f)


class AsyncClient:
    """Client for asyncio: the same arguments, results and errors, with await."""

    def __init__(self, mode: str = 'auto', *, bus: str = 'SYSTEM', skillctl: Optional[str] = None,
                 parse_float=None):
        if mode not in ('auto', 'service', 'local'):
            raise ValueError('mode is "auto", "service" or "local"')
        self.mode, self.bus, self.skillctl, self.parse_float = mode, bus, skillctl, parse_float
        self._bus = None

    async def close(self):
        if self._bus is not None:
            self._bus.close()
            self._bus = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()
        return False

    async def _connection(self) -> _Bus:
        if self._bus is not None and self._bus.broken:
            await self.close()
        if self._bus is None:
            try:
                self._bus = await _Bus.open(self.bus)
            except (OSError, TimeoutError, KeyError, RuntimeError) as e:
                raise c.ServiceUnavailable('Cannot connect to the system bus: %s' % e) from None
        return self._bus

    async def run(self, skill: str, input: Any = None, files: Optional[Dict[str, Any]] = None,
                  timeout: Optional[float] = None, *, script: str = '', args: List[str] = (),
                  limits: Optional[Dict[str, int]] = None, env: Optional[Dict[str, str]] = None,
                  network: bool = False, stdout=None, stderr=None, output_dir: Optional[str] = None) -> c.Result:
        """See Client.run(). Cancelling the task cancels the run."""
        input_json = c.input_text(input)
        if self.mode != 'local':
            try:
                return await self._run_service(skill, input_json, files, timeout, script, args, limits, env,
                                               network, stdout, stderr)
            except c.ServiceUnavailable:
                if self.mode == 'service':
                    raise
                await self.close()
        return await self._run_embedded(skill, input_json, files, timeout, script, args, limits, env, network,
                                        stdout, stderr, output_dir)

    async def _state(self, bus, path):
        return (await bus.call(c.get_property(path, 'State')))[0][1]

    async def _run_service(self, skill, input_json, files, timeout, script, args, limits, env, network, stdout,
                           stderr):
        bus = await self._connection()
        loop = asyncio.get_running_loop()
        sinks = [c.output_sink(stdout), c.output_sink(stderr)]
        to_close, readers, pumps = [], [], []
        rule = c.finished_rule()
        queue = asyncio.Queue()
        watch = (rule, queue)
        try:
            skill_fd, name = await loop.run_in_executor(None, c.open_skill, skill)
            if skill_fd is not None:
                to_close.append(skill_fd)
            file_fds, writers, readers = c.run_fds(files, sinks, to_close, nonblocking=True)
            options = c.run_options(limits, timeout, env, file_fds, network, writers[0], writers[1])

            bus.watches.append(watch)
            await bus.call(message_bus.AddMatch(c.finished_rule(True)))
            path = None
            try:
                run_id, path = await bus.call(c.run_message(skill_fd, name, script, list(args), input_json,
                                                            options))
                for fd in to_close:
                    os.close(fd)
                to_close = []
                for r, sink in readers:
                    pumps.append(asyncio.ensure_future(_pump(loop, r, sink)))
                readers = []
                await self._wait(bus, queue, run_id, path)
            except asyncio.CancelledError:
                if path:
                    try:
                        await asyncio.shield(bus.call(c.run_method(path, 'Cancel')))
                    except c.SkilldError:
                        pass
                raise
            finally:
                bus.watches.remove(watch)
                try:
                    await bus.call(message_bus.RemoveMatch(c.finished_rule(True)))
                except (c.SkilldError, OSError):
                    pass
            text = (await bus.call(c.get_property(path, 'Result')))[0][1]
            if pumps:
                await asyncio.wait(pumps, timeout=OUTPUT_GRACE)
            if not text:
                raise c.SkilldError('Run %s ended without a result (%s)' % (run_id, await self._state(bus, path)))
            return c.parse_result(text, 'service', self.parse_float, run_path=path)
        except (ConnectionError, BrokenPipeError) as e:
            await self.close()
            raise c.ServiceUnavailable('The connection to the bus broke: %s' % e) from None
        finally:
            for fd in to_close:
                os.close(fd)
            for r, _sink in readers:
                os.close(r)
            for p in pumps:
                p.cancel()

    async def _wait(self, bus, queue, run_id, path):
        while True:
            try:
                msg = await asyncio.wait_for(queue.get(), STATE_RECHECK)
                if msg.body[0] != run_id:
                    continue
            except asyncio.TimeoutError:
                pass
            if await self._state(bus, path) in c.FINAL_STATES:
                return

    async def build_environment(self, skill: str, *, resolvers: Optional[List[str]] = None,
                                index_url: Optional[str] = None, rebuild: bool = False,
                                log=None) -> c.EnvironmentBuild:
        """See Client.build_environment(). Cancelling the task stops waiting; a build the service
        has started goes on (its result lands in the shared cache)."""
        resolvers = c.check_resolvers(resolvers)
        if self.mode != 'local':
            try:
                return await self._build_service(skill, resolvers, index_url, rebuild, log)
            except c.ServiceUnavailable:
                if self.mode == 'service':
                    raise
                await self.close()
        return await self._build_embedded(skill, resolvers, index_url, rebuild, log)

    async def _build_service(self, skill, resolvers, index_url, rebuild, log):
        bus = await self._connection()
        loop = asyncio.get_running_loop()
        sink = c.output_sink(log)
        to_close, reader, pump = [], None, None
        try:
            skill_fd = await loop.run_in_executor(None, c.open_skill_archive, skill)
            to_close.append(skill_fd)
            log_fd = None
            if sink:
                reader, log_fd = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
                to_close.append(log_fd)
            call = asyncio.ensure_future(bus.call(c.build_message(
                skill_fd, c.build_options(resolvers, index_url, rebuild, log_fd))))
            # Sent: the service has its copies, ours would keep the log pipe open past the build.
            await asyncio.sleep(0)
            for fd in to_close:
                os.close(fd)
            to_close = []
            if reader is not None:
                pump = asyncio.ensure_future(_pump(loop, reader, sink))
                reader = None
            body = await call
            if pump:
                await asyncio.wait([pump], timeout=OUTPUT_GRACE)
            return c.build_from_reply(body)
        except (ConnectionError, BrokenPipeError) as e:
            await self.close()
            raise c.ServiceUnavailable('The connection to the bus broke: %s' % e) from None
        finally:
            for fd in to_close:
                os.close(fd)
            if reader is not None:
                os.close(reader)
            if pump:
                pump.cancel()

    async def _build_embedded(self, skill, resolvers, index_url, rebuild, log):
        prog = c.find_skillctl(self.skillctl)
        sink = c.output_sink(log)
        cmd = c.embedded_build_command(prog, skill, resolvers, index_url, rebuild)
        p = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.DEVNULL,
                                                 stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        err = []

        async def copy():
            while True:
                b = await p.stderr.read(65536)
                if not b:
                    return
                err.append(b)
                if sink:
                    try:
                        sink(b)
                    except Exception:
                        pass
        try:
            out, _ = await asyncio.gather(p.stdout.read(), copy())
            await p.wait()
        except asyncio.CancelledError:
            p.terminate()
            await p.wait()
            raise
        return c.embedded_build_result(out, b''.join(err))

    async def list_runs(self, limit: Optional[int] = None, *, all: bool = False, skill: Optional[str] = None,
                        state: Optional[str] = None) -> c.RunList:
        """See Client.list_runs()."""
        pager = c.ListPager(limit, all, skill, state)
        bus = await self._connection()
        while not pager.done:
            try:
                pager.add(await bus.call(pager.call()))
            except c.SkilldError as e:
                if e.name != UNKNOWN_METHOD or pager.pages:
                    raise
                return c.list_compat(await bus.call(c.list_message_compat(all)), limit, skill, state)
        return pager.result()

    async def read_artifact(self, result: c.Result, path: str) -> bytes:
        if result.via == 'embedded':
            with open(os.path.join(result.output_dir, 'files', path), 'rb') as f:
                return f.read()
        bus = await self._connection()
        (fd,) = await bus.call(c.run_method(result.run_path, 'OpenArtifact', 's', (path,)))
        with fd.to_file('rb') as f:
            return await asyncio.get_running_loop().run_in_executor(None, f.read)

    async def _run_embedded(self, skill, input_json, files, timeout, script, args, limits, env, network, stdout,
                            stderr, output_dir):
        prog = c.find_skillctl(self.skillctl)
        with tempfile.TemporaryDirectory(prefix='skilld-client-') as tmp:
            paths = c.stage_files(files, tmp)
            out = output_dir or os.path.join(tempfile.mkdtemp(prefix='skilld-run-'), 'run')
            cmd = c.embedded_command(prog, skill, script, list(args), input_json, paths, limits, timeout, env,
                                     network, out)
            p = await asyncio.create_subprocess_exec(*cmd, stdin=asyncio.subprocess.PIPE,
                                                     stdout=asyncio.subprocess.PIPE,
                                                     stderr=asyncio.subprocess.PIPE)
            try:
                o, e = await p.communicate(input_json.encode())
            except asyncio.CancelledError:
                p.terminate()       # skillctl cancels its run on SIGTERM
                await p.wait()
                raise
        return embedded_result(o, e, out, self.parse_float, stdout, stderr)


async def _pump(loop, fd, sink):
    """Copies a non-blocking pipe to a sink until end of file; closes it."""
    ready = asyncio.Event()
    loop.add_reader(fd, ready.set)
    try:
        while True:
            await ready.wait()
            ready.clear()
            try:
                b = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not b:
                return
            try:
                sink(b)
            except Exception:
                sink = lambda _b: None  # noqa: E731 (a broken sink stops the copy, not the run)
    finally:
        loop.remove_reader(fd)
        os.close(fd)
