// Timers, streams and pipeline, readline, process facts, signals to itself.
'use strict';
const { pipeline, Readable, Transform, Writable } = require('stream');
const readline = require('readline');
const assert = require('assert');

process.hrtime.bigint();
process.memoryUsage();
process.cpuUsage();
process.on('SIGUSR2', () => {});
process.kill(process.pid, 'SIGUSR2');
const out = [];
pipeline(
  Readable.from(['a\n', 'b\n', 'c\n']),
  new Transform({ transform(chunk, enc, cb) { cb(null, chunk.toString().toUpperCase()); } }),
  new Writable({ write(chunk, enc, cb) { out.push(chunk.toString()); cb(); } }),
  (err) => {
    assert.ifError(err);
    assert.strictEqual(out.join(''), 'A\nB\nC\n');
  },
);
const rl = readline.createInterface({ input: Readable.from(['x\ny\n']) });
const lines = [];
rl.on('line', (l) => lines.push(l));
rl.on('close', () => assert.deepStrictEqual(lines, ['x', 'y']));
setTimeout(() => {}, 20);
setImmediate(() => {});
const iv = setInterval(() => clearInterval(iv), 5);
