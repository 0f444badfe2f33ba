// crypto (hashes, random, key generation, ciphers) and zlib (gzip, deflate, brotli).
'use strict';
const crypto = require('crypto');
const zlib = require('zlib');
const assert = require('assert');

assert.strictEqual(crypto.createHash('sha256').update('x').digest('hex').slice(0, 8), '2d711642');
crypto.randomBytes(32);
crypto.randomUUID();
const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const sig = crypto.sign('sha256', Buffer.from('m'), privateKey);
assert.ok(crypto.verify('sha256', Buffer.from('m'), publicKey, sig));
const key = crypto.scryptSync('pw', 'salt', 32);
const iv = crypto.randomBytes(12);
const c = crypto.createCipheriv('aes-256-gcm', key, iv);
const enc = Buffer.concat([c.update('secret'), c.final()]);
const dc = crypto.createDecipheriv('aes-256-gcm', key, iv);
dc.setAuthTag(c.getAuthTag());
assert.strictEqual(Buffer.concat([dc.update(enc), dc.final()]).toString(), 'secret');
const data = Buffer.from('skilld '.repeat(10000));
assert.ok(zlib.gunzipSync(zlib.gzipSync(data)).equals(data));
assert.ok(zlib.brotliDecompressSync(zlib.brotliCompressSync(data)).equals(data));
zlib.deflate(data, (err, out) => {
  assert.ifError(err);
  assert.ok(zlib.inflateSync(out).equals(data));
});
crypto.pbkdf2('pw', 'salt', 1000, 32, 'sha256', (err) => assert.ifError(err));
