// fs: sync, callback and promise APIs, streams, directories, temp dirs, stat, rename, symlinks.
'use strict';
const fs = require('fs');
const fsp = require('fs/promises');
const os = require('os');
const path = require('path');
const assert = require('assert');

(async () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'fs-'));
  fs.mkdirSync(path.join(d, 'a/b'), { recursive: true });
  fs.writeFileSync(path.join(d, 'a/b/f.txt'), 'hello\n'.repeat(1000));
  assert.strictEqual((await fsp.readFile(path.join(d, 'a/b/f.txt'), 'utf8')).length, 6000);
  await fsp.copyFile(path.join(d, 'a/b/f.txt'), path.join(d, 'g.txt'));
  await fsp.cp(path.join(d, 'a'), path.join(d, 'copy'), { recursive: true });
  fs.symlinkSync('g.txt', path.join(d, 'link'));
  assert.ok(fs.lstatSync(path.join(d, 'link')).isSymbolicLink());
  await new Promise((resolve, reject) => {
    fs.createReadStream(path.join(d, 'g.txt'))
      .pipe(fs.createWriteStream(path.join(d, 'h.txt')))
      .on('finish', resolve).on('error', reject);
  });
  fs.renameSync(path.join(d, 'h.txt'), path.join(d, 'i.txt'));
  const fh = await fsp.open(path.join(d, 'i.txt'), 'r+');
  await fh.write('X', 0);
  await fh.sync();
  await fh.close();
  assert.deepStrictEqual((await fsp.readdir(d)).sort(), ['a', 'copy', 'g.txt', 'i.txt', 'link']);
  fs.accessSync(d, fs.constants.W_OK);
  fs.utimesSync(path.join(d, 'i.txt'), new Date(), new Date());
  fs.chmodSync(path.join(d, 'i.txt'), 0o600);
  await fsp.rm(d, { recursive: true });
})().catch((e) => { console.error(e); process.exit(1); });
