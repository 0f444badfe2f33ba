// worker_threads: workers with messages, SharedArrayBuffer and Atomics, a MessageChannel.
'use strict';
const { Worker, isMainThread, parentPort, workerData, MessageChannel } = require('worker_threads');
const assert = require('assert');

if (!isMainThread) {
  const view = new Int32Array(workerData.sab);
  Atomics.add(view, 0, workerData.n);
  Atomics.notify(view, 0);
  parentPort.postMessage(workerData.n * 2);
  return;
}
const sab = new SharedArrayBuffer(4);
const jobs = [1, 2, 3, 4].map((n) => new Promise((resolve, reject) => {
  const w = new Worker(__filename, { workerData: { sab, n } });
  w.on('message', resolve);
  w.on('error', reject);
}));
Promise.all(jobs).then((doubled) => {
  assert.deepStrictEqual(doubled, [2, 4, 6, 8]);
  assert.strictEqual(new Int32Array(sab)[0], 10);
  const { port1, port2 } = new MessageChannel();
  port2.on('message', (m) => { assert.strictEqual(m, 'over the channel'); port2.close(); });
  port1.postMessage('over the channel');
  port1.close();
}).catch((e) => { console.error(e); process.exit(1); });
