# A byte-level MCP stdio peer for the tests here: sends lines, reads answer lines with a
# timeout, nothing more (the interop tests use real clients; these look at the bytes).
import json
import os
import select
import subprocess
import time


class Server:
    def __init__(self, argv, home, env=None):
        env = dict(os.environ if env is None else env, HOME=home, XDG_DATA_HOME=os.path.join(home, 'data'))
        self.p = subprocess.Popen(argv, cwd=home, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.buf = b''

    def send(self, data):
        self.p.stdin.write(data if isinstance(data, bytes) else data.encode())
        self.p.stdin.flush()

    def line(self, timeout=30):
        end = time.monotonic() + timeout
        while b'\n' not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        raw, self.buf = self.buf.split(b'\n', 1)
        return raw.decode()

    def call(self, data, timeout=30):
        """Sends one line; returns the next answer line, raw and parsed."""
        self.send(data + (b'\n' if isinstance(data, bytes) else '\n'))
        raw = self.line(timeout)
        return raw, (json.loads(raw) if raw else None)

    def tool(self, id, name, arguments, timeout=60):
        _, m = self.call(json.dumps({'jsonrpc': '2.0', 'id': id, 'method': 'tools/call',
                                     'params': {'name': name, 'arguments': arguments}}), timeout)
        return m and m.get('result')

    def children(self):
        try:
            with open('/proc/%d/task/%d/children' % (self.p.pid, self.p.pid)) as f:
                return f.read().split()
        except OSError:
            return []

    def close(self, timeout=20):
        self.p.stdin.close()
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None


def initialize(version='2025-11-25', id=1):
    return json.dumps({'jsonrpc': '2.0', 'id': id, 'method': 'initialize',
                       'params': {'protocolVersion': version, 'capabilities': {},
                                  'clientInfo': {'name': 'skilld-test', 'version': '1'}}})


def error_code(msg):
    return msg and msg.get('error', {}).get('code')
