// child_process: exec with a shell pipeline, spawn with pipes, execFile, fork with IPC.
'use strict';
const cp = require('child_process');
const assert = require('assert');

if (process.argv[2] === 'child') {
  process.on('message', (m) => { process.send({ echo: m }); process.disconnect(); });
  return;
}
assert.strictEqual(cp.execSync('printf "b\\na\\n" | sort | head -1').toString(), 'a\n');
assert.strictEqual(cp.execFileSync('echo', ['x']).toString(), 'x\n');
const r = cp.spawnSync('sh', ['-c', 'exit 4']);
assert.strictEqual(r.status, 4);
const child = cp.fork(__filename, ['child']);
child.on('message', (m) => {
  assert.deepStrictEqual(m, { echo: 'hi' });
});
child.on('exit', (code) => {
  assert.strictEqual(code, 0);
  const p = cp.spawn('cat');
  let out = '';
  p.stdout.on('data', (b) => { out += b; });
  p.on('close', () => assert.strictEqual(out, 'piped'));
  p.stdin.end('piped');
});
child.send('hi');
