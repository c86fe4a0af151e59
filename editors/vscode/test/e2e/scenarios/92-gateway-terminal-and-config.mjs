// The gateway in VS Code (issue 14): a new integrated terminal has MCP_SIDECAR_GATEWAY (the
// gateway's URL) and MCP_SIDECAR_GATEWAY_TOKEN, the token never in the output channel; Copy
// Gateway Configuration puts a Claude Code .mcp.json snippet on the clipboard whose command is
// the sidecar this editor runs, and that command, launched as an agent would with the
// terminal's environment (outside the workspace, so only the environment can find the gateway),
// lists the editor's servers' tools; after Restart Sidecar, new terminals get the new address;
// with mcpSidecar.gateway.enabled false they get none, and without the setting it is back.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pick, quickInput, runCommand, waitFor, waitQuickInput, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'Gateway: terminal environment, Copy Gateway Configuration, a real agent through the snippet, restart';
export const timeoutMs = 150000;

const NOTE = /gateway: new terminals get MCP_SIDECAR_GATEWAY, MCP_SIDECAR_GATEWAY_TOKEN \((http:\/\/127\.0\.0\.1:\d+\/mcp)\)/g;

export async function run(ctx) {
  const { page, outputLog, runDir, screenshot, setUserSetting } = ctx;
  const lastUrl = () => [...outputLog().matchAll(NOTE)].pop()?.[1];
  await waitFor('the gateway in the terminal environment', async () => lastUrl());

  const env1 = await terminalEnv(page, join(runDir, 'terminal-env-1.txt'));
  // The terminal has the address the extension announced last. The output channel may show that
  // line a moment after the terminal got it (a sidecar restart by the scenario before this one
  // can still be settling), so wait for the channel rather than compare with an earlier read.
  const url = await waitFor('the output channel to name the terminal\'s gateway URL', async () =>
    lastUrl() === env1.url ? env1.url : null,
  ).catch(() => assert.fail(`the terminal has ${env1.url}, the extension announced ${lastUrl()}`));
  assert.equal(env1.url, url, 'the terminal has the gateway URL');
  assert.match(env1.token, /^[0-9a-f]{64}$/, 'and its token');
  assert.ok(!outputLog().includes(env1.token), 'the token is not in the output channel');
  await screenshot('gateway-terminal');
  // Only the next terminal can have the focus when it opens.
  await runCommand(page, 'Terminal: Kill All Terminals');

  // Copy Gateway Configuration → Claude Code's .mcp.json.
  await runCommand(page, 'MCP Sidecar: Copy Gateway Configuration');
  const q = await waitQuickInput(page, 'MCP Sidecar: Copy Gateway Configuration');
  assert.deepEqual(q.rows.map((r) => r.label), [
    'Claude Code: .mcp.json',
    'Claude Code: claude mcp add',
    'Codex CLI: ~/.codex/config.toml',
    'gemini-cli: .gemini/settings.json',
    'goose: ~/.config/goose/config.yaml',
    'Streamable HTTP: URL and headers',
  ]);
  assert.ok(!q.rows.some((r) => r.aria.includes(env1.token)), 'the quick pick shows no secret');
  await screenshot('gateway-copy-configuration');
  await pick(page, 'Claude Code: .mcp.json');
  const snippet = await waitFor('the snippet on the clipboard', async () => {
    const text = await page.evaluate(() => navigator.clipboard.readText()).catch(() => '');
    return text.includes('"mcpServers"') ? JSON.parse(text) : null;
  });
  const server = snippet.mcpServers.workspace;
  assert.deepEqual(server.args, ['gateway']);
  assert.match(server.command, /\/server\/mcp-sidecar$/, `the bundled sidecar: ${server.command}`);

  // The snippet as an agent runs it, with the terminal's environment, outside the workspace.
  const tools = await listToolsThrough(server.command, server.args, { MCP_SIDECAR_GATEWAY: env1.url, MCP_SIDECAR_GATEWAY_TOKEN: env1.token });
  assert.ok(tools.includes('demo__add'), `the agent sees the editor's servers: ${tools.join(', ')}`);
  assert.ok(tools.includes('legacy__add'), 'both of them');

  // A new sidecar, a new gateway: new terminals get the new address.
  const notes = [...outputLog().matchAll(NOTE)].length;
  await runCommand(page, 'MCP Sidecar: Restart Sidecar');
  await waitFor('the new gateway in the terminal environment', async () => ([...outputLog().matchAll(NOTE)].length > notes ? true : null), { timeout: 60000 });
  await waitStatusBar(page, /MCP 2\/2/, { timeout: 60000 });
  const env2 = await terminalEnv(page, join(runDir, 'terminal-env-2.txt'));
  assert.equal(env2.url, lastUrl());
  assert.notEqual(env2.token, env1.token, 'a new secret');
  await runCommand(page, 'Terminal: Kill All Terminals');

  // mcpSidecar.gateway.enabled: false turns the gateway off, and new terminals get no address;
  // removing the setting brings it back.
  const before = outputLog().length;
  await setUserSetting('mcpSidecar.gateway.enabled', false);
  await waitFor('the variables removed', async () => (outputLog().slice(before).includes('gateway: no gateway; its variables are removed from new terminals') ? true : null));
  assert.match(outputLog().slice(before), /gateway: off \(gateway\.enabled is false\)/);
  const off = await terminalLines(page, join(runDir, 'terminal-env-3.txt'));
  assert.deepEqual(off, [], 'no gateway variables while it is off');
  await runCommand(page, 'Terminal: Kill All Terminals');
  const notesOff = [...outputLog().matchAll(NOTE)].length;
  await setUserSetting('mcpSidecar.gateway.enabled', undefined);
  await waitFor('the gateway back in the terminal environment', async () => ([...outputLog().matchAll(NOTE)].length > notesOff ? true : null), { timeout: 30000 });
}

/** Opens a new terminal and has its shell write the two variables into `file`. */
async function terminalEnv(page, file) {
  const lines = await terminalLines(page, file);
  assert.equal(lines.length, 2, `both variables are set: ${lines.length} lines`);
  return { url: lines[0], token: lines[1] };
}

/** The lines the shell of a new terminal prints for the two variables. */
async function terminalLines(page, file) {
  rmSync(file, { force: true });
  await runCommand(page, 'Terminal: Create New Terminal');
  // A multi-root workspace asks for the folder first.
  await waitFor('the new terminal focused (after its folder question)', async () => {
    if ((await quickInput(page))?.placeholder.includes('working directory')) {
      await page.keyboard.press('Enter');
      return null;
    }
    return (await page.evaluate(() => !!document.activeElement?.closest('.terminal-wrapper'))) || null;
  });
  // The pty keeps what is typed until the shell reads it.
  await page.keyboard.type(`printenv MCP_SIDECAR_GATEWAY MCP_SIDECAR_GATEWAY_TOKEN > ${file}.tmp; mv ${file}.tmp ${file}`);
  await page.keyboard.press('Enter');
  return waitFor(`the terminal's environment in ${file}`, async () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : null), {
    timeout: 20000,
  });
}

/** initialize + tools/list over stdio through `command args`, run in a folder outside the workspace. */
async function listToolsThrough(command, args, env) {
  const child = spawn(command, args, { cwd: tmpdir(), env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr = [];
  child.stderr.on('data', (d) => stderr.push(d));
  const waiting = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      const m = JSON.parse(line);
      waiting.get(m.id)?.(m);
    } catch {
      // not JSON
    }
  });
  const send = (m) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  const request = (id, method, params) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method} through ${command}: no answer (${Buffer.concat(stderr)})`)), 15000);
      waiting.set(id, (m) => {
        clearTimeout(timer);
        if (m.error) reject(new Error(`${method}: ${JSON.stringify(m.error)}`));
        else resolve(m.result);
      });
      send({ id, method, params });
    });
  try {
    await request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e-agent', version: '1.0.0' } });
    send({ method: 'notifications/initialized' });
    const listed = await request(2, 'tools/list', {});
    return listed.tools.map((t) => t.name);
  } finally {
    child.stdin.end();
    child.kill();
  }
}
