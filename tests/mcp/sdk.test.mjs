// skillctl mcp driven by the official MCP TypeScript SDK client over stdio: what issue 13's
// "Done when" asks of it, each assertion against the real server running real sandboxed skills.
//
// Environment (run-interop.sh sets it): SKILLCTL, MCP_TEST_SKILLS (the fixture skills).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';

const SKILLCTL = process.env.SKILLCTL;
const SKILLS = process.env.MCP_TEST_SKILLS;
const EXACT = '{"big":12345678901234567890,"id":9007199254740993,"f":1.0}';

let home, client, transport, tools;
const ajv = new Ajv({ strict: false });

// The result schema skilld publishes (schemas/result.schema.json, JSON Schema 2020-12): every
// run_skill result must be one, besides matching the tool's outputSchema.
const RESULT_SCHEMA = join(SKILLS, '../../../schemas/result.schema.json');
const ajv2020 = new Ajv2020({ strict: false });
function loadResultSchema() {
  if (!existsSync(RESULT_SCHEMA))
    return null;
  const schema = JSON.parse(readFileSync(RESULT_SCHEMA, 'utf8'));
  // Its $id "urn:io.skilld:..." is no URN ajv's URI library takes (a namespace id has no dots),
  // and nothing here refers to it.
  delete schema.$id;
  return ajv2020.compile(schema);
}
const validateResult = loadResultSchema();

function validate(tool, structured) {
  const schema = tools.find((t) => t.name === tool).outputSchema;
  const ok = ajv.validate(schema, structured);
  assert.ok(ok, `structuredContent does not match ${tool}'s outputSchema: ${ajv.errorsText()}`);
  if ((tool === 'run_skill' || tool === 'exec_skill') && validateResult)
    assert.ok(validateResult(structured), `not a result per ${RESULT_SCHEMA}: ${ajv2020.errorsText(validateResult.errors)}`);
}

function childrenOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

before(async () => {
  home = mkdtempSync(join(tmpdir(), 'skilld-mcp-sdk-'));
  transport = new StdioClientTransport({
    command: SKILLCTL,
    args: ['mcp', '--local', '--skills-dir', SKILLS],
    // A private home and folder: only the fixture skills are offered.
    env: { ...process.env, HOME: home, XDG_DATA_HOME: join(home, 'data') },
    cwd: home,
    stderr: 'inherit',
  });
  client = new Client({ name: 'skilld-interop', version: '1.0.0' });
  await client.connect(transport);
  tools = (await client.listTools()).tools;
});

after(async () => {
  await client?.close();
  rmSync(home, { recursive: true, force: true });
});

test('initialize negotiated 2025-11-25 and declared the skills extension', () => {
  assert.equal(client.getServerVersion().name, 'skillctl');
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools && caps.resources);
  assert.deepEqual(caps.extensions?.['io.modelcontextprotocol/skills'], {});
});

test('ping', async () => {
  assert.deepEqual(await client.ping(), {});
});

const TOOLS = ['list_skills', 'read_skill', 'run_skill', 'exec_skill', 'create_session', 'list_sessions',
  'remove_session'];

test('the seven tools, with object input and output schemas', () => {
  assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort());
  for (const name of TOOLS) {
    const t = tools.find((x) => x.name === name);
    assert.ok(t, `no tool ${name}`);
    assert.equal(t.inputSchema.type, 'object');
    assert.equal(t.outputSchema.type, 'object');
    assert.ok(ajv.compile(t.outputSchema));
  }
});

test('list_skills and read_skill', async () => {
  const list = await client.callTool({ name: 'list_skills', arguments: {} });
  validate('list_skills', list.structuredContent);
  const names = list.structuredContent.skills.map((s) => s.name).sort();
  assert.deepEqual(names, ['artifact-maker', 'counter', 'echo-input', 'exact-output', 'exit-three', 'py-module', 'sleeper']);

  const read = await client.callTool({ name: 'read_skill', arguments: { skill: 'sleeper' } });
  validate('read_skill', read.structuredContent);
  assert.equal(read.structuredContent.frontmatter.name, 'sleeper');
  assert.match(read.structuredContent.body, /Arguments: SECONDS/);
  assert.deepEqual(read.structuredContent.files.map((f) => f.path), ['SKILL.md', 'scripts/main.sh']);
});

test('run_skill returns the result as structuredContent matching outputSchema', async () => {
  const r = await client.callTool({ name: 'run_skill', arguments: { skill: 'exact-output' } });
  assert.equal(r.isError, false);
  validate('run_skill', r.structuredContent);
  assert.equal(r.structuredContent.status, 'succeeded');
  assert.equal(r.structuredContent.exit_code, 0);
  assert.equal(r.structuredContent.skill, 'exact-output');
});

// The exact output of issue 13, item 4: the skill's JSON as it printed it, not through doubles.
test('run_skill output exactly as the skill printed it (a 20-digit integer survives)', async () => {
    const r = await client.callTool({ name: 'run_skill', arguments: { skill: 'exact-output' } });
    // JSON.parse in the client turns the numbers into doubles; the text content quotes the
    // output as the server sent it, which is what a model reads.
    assert.ok(r.content[0].text.includes(`Output: ${EXACT}`), r.content[0].text);
  });

test('input and files reach the skill', async () => {
  const r = await client.callTool({
    name: 'run_skill',
    arguments: { skill: 'echo-input', input: { n: 7, s: 'x' }, files: { 'data.txt': Buffer.from('file body').toString('base64') } },
  });
  assert.equal(r.isError, false, r.content[0].text);
  validate('run_skill', r.structuredContent);
  assert.deepEqual(r.structuredContent.output, { input: { n: 7, s: 'x' }, file: 'file body' });
});

test('a script exiting 3 is isError with its result', async () => {
  const r = await client.callTool({ name: 'run_skill', arguments: { skill: 'exit-three' } });
  assert.equal(r.isError, true);
  validate('run_skill', r.structuredContent);
  assert.equal(r.structuredContent.status, 'failed');
  assert.equal(r.structuredContent.exit_code, 3);
  assert.deepEqual(r.structuredContent.output, { ok: false, reason: 'failing on purpose' });
  assert.match(r.content[0].text, /exit code 3/);
});

test('an unknown skill is a tool error; an unknown tool is -32602', async () => {
  const r = await client.callTool({ name: 'run_skill', arguments: { skill: 'no-such-skill' } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /Unknown skill "no-such-skill"/);
  const bad = await client.callTool({ name: 'run_skill', arguments: { skill: 'echo-input', files: { 'a/b': 'eA==' } } });
  assert.equal(bad.isError, true);
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }),
    (e) => e instanceof McpError && e.code === -32602);
});

// The command form: "python3 -m scripts.tool" from the skill's root, importing a package of it.
test('exec_skill runs a module of the skill from /skill', async () => {
  const r = await client.callTool({
    name: 'exec_skill',
    arguments: { skill: 'py-module', command: ['python3', '-m', 'scripts.tool', 'sdk'], cwd: '/skill' },
  });
  assert.equal(r.isError, false, r.content[0].text);
  validate('exec_skill', r.structuredContent);
  assert.deepEqual(r.structuredContent.output, { greeting: 'hello sdk', cwd: '/skill' });

  const failed = await client.callTool({ name: 'exec_skill', arguments: { skill: 'py-module', command: ['false'] } });
  assert.equal(failed.isError, true);
  validate('exec_skill', failed.structuredContent);
  assert.equal(failed.structuredContent.exit_code, 1);
  const bad = await client.callTool({ name: 'exec_skill', arguments: { skill: 'py-module', command: [] } });
  assert.equal(bad.isError, true);
  assert.match(bad.content[0].text, /"command" must be a non-empty array/);
});

test('a session keeps /work between runs; removed, it is a tool error', async () => {
  const created = await client.callTool({ name: 'create_session', arguments: { skill: 'counter', ttl: '1h' } });
  assert.equal(created.isError, false, created.content[0].text);
  validate('create_session', created.structuredContent);
  const { id } = created.structuredContent;
  assert.equal(created.structuredContent.skill, 'counter');
  assert.equal(created.structuredContent.ttl_usec, 3600e6);

  for (const count of [1, 2]) {
    const r = await client.callTool({ name: 'run_skill', arguments: { skill: 'counter', session: id } });
    assert.equal(r.isError, false, r.content[0].text);
    validate('run_skill', r.structuredContent);
    assert.deepEqual(r.structuredContent.output, { count });
  }
  const viaExec = await client.callTool({
    name: 'exec_skill', arguments: { skill: 'counter', session: id, command: ['cat', 'count'] },
  });
  assert.equal(viaExec.structuredContent.stdout.text, '2\n');

  const list = await client.callTool({ name: 'list_sessions', arguments: {} });
  validate('list_sessions', list.structuredContent);
  assert.ok(list.structuredContent.sessions.some((x) => x.id === id && x.skill === 'counter'));

  const removed = await client.callTool({ name: 'remove_session', arguments: { session: id } });
  assert.equal(removed.isError, false, removed.content[0].text);
  validate('remove_session', removed.structuredContent);
  assert.deepEqual(removed.structuredContent.removed, [id]);

  const after = await client.callTool({ name: 'run_skill', arguments: { skill: 'counter', session: id } });
  assert.equal(after.isError, true);
  assert.match(after.content[0].text, /no such session.*list_sessions/);
  const again = await client.callTool({ name: 'remove_session', arguments: { session: id } });
  assert.equal(again.isError, true);
  assert.match(again.content[0].text, /no such session/);
  const fresh = await client.callTool({ name: 'run_skill', arguments: { skill: 'counter' } });
  assert.deepEqual(fresh.structuredContent.output, { count: 1 });
});

test('progress arrives during a 3 s run', async () => {
  const progress = [];
  const started = Date.now();
  const r = await client.callTool({ name: 'run_skill', arguments: { skill: 'sleeper', args: ['3'] } },
    CallToolResultSchema, { onprogress: (p) => progress.push({ ...p, at: Date.now() - started }) });
  assert.equal(r.isError, false, r.content[0].text);
  assert.deepEqual(r.structuredContent.output, { slept: 3 });
  assert.ok(progress.length >= 2, `only ${progress.length} progress notifications`);
  for (let i = 1; i < progress.length; i++)
    assert.ok(progress[i].progress > progress[i - 1].progress, 'progress must increase');
  assert.match(progress[0].message, /sleeper is running/);
});

test('an artifact comes back as a readable resource', async () => {
  const r = await client.callTool({ name: 'run_skill', arguments: { skill: 'artifact-maker' } });
  assert.equal(r.isError, false, r.content[0].text);
  validate('run_skill', r.structuredContent);
  const link = r.content.find((c) => c.type === 'resource_link');
  assert.ok(link, 'no resource_link');
  assert.equal(link.name, 'report.txt');
  const res = await client.readResource({ uri: link.uri });
  assert.equal(res.contents[0].text, 'hello artifact\n');
  assert.equal(res.contents[0].mimeType, 'text/plain');
});

test('skill://NAME/SKILL.md is readable, and listed', async () => {
  const res = await client.readResource({ uri: 'skill://exact-output/SKILL.md' });
  assert.equal(res.contents[0].mimeType, 'text/markdown');
  assert.match(res.contents[0].text, /^---\nname: exact-output\n/);
  const list = await client.listResources();
  assert.ok(list.resources.some((x) => x.uri === 'skill://sleeper/scripts/main.sh'));
  await assert.rejects(client.readResource({ uri: 'skill://exact-output/../../etc/passwd' }));
  await assert.rejects(client.readResource({ uri: 'file:///etc/passwd' }));
});

test('aborting a request ends its run within seconds', async () => {
  const ac = new AbortController();
  const pending = client.callTool({ name: 'run_skill', arguments: { skill: 'sleeper', args: ['120'] } },
    CallToolResultSchema, { signal: ac.signal });
  pending.catch(() => {});
  await sleep(1500);
  const pid = transport.pid;
  assert.equal(childrenOf(pid).length, 1, 'the run is not going');
  ac.abort('test');
  await assert.rejects(pending);
  const t0 = Date.now();
  while (childrenOf(pid).length > 0 && Date.now() - t0 < 10000)
    await sleep(100);
  assert.deepEqual(childrenOf(pid), [], 'the run still goes 10 s after the abort');
  // The server goes on serving.
  assert.deepEqual(await client.ping(), {});
});
