// net, http, dgram and dns on lo; os facts; a lookup that fails cleanly without network.
'use strict';
const http = require('http');
const dgram = require('dgram');
const dns = require('dns');
const os = require('os');
const assert = require('assert');

os.networkInterfaces();
os.cpus();
os.userInfo();
os.loadavg();
os.totalmem();
const server = http.createServer((req, res) => res.end('fine'));
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const body = await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      let b = '';
      res.on('data', (d) => { b += d; });
      res.on('end', () => resolve(b));
    }).on('error', reject);
  });
  assert.strictEqual(body, 'fine');
  const r = await fetch(`http://127.0.0.1:${port}/`);
  assert.strictEqual(await r.text(), 'fine');
  server.close();
  const u = dgram.createSocket('udp4');
  u.bind(0, '127.0.0.1', () => {
    u.on('message', (m) => { assert.strictEqual(m.toString(), 'd'); u.close(); });
    u.send('d', u.address().port, '127.0.0.1');
  });
  dns.lookup('localhost', (err) => assert.ifError(err));
  dns.lookup('skilld-compat.invalid', (err) => assert.ok(err));
});
