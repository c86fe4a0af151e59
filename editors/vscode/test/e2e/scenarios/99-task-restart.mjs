// Tasks across a sidecar killed mid-task: FastMCP's tasks server (fixtures/python/
// fastmcp_tasks_server.py) over HTTP, so it outlives the sidecar. Call Tool of its slow_report
// starts a task; the sidecar is killed (SIGKILL) while the task runs; the extension starts a new
// one, which follows the task from its task book: the server's question is asked in VS Code, and
// the task's end is announced with Show Result, the report in it. Needs the peers
// (scripts/install-peers.sh): without them the scenario fails and says so.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { peer } from '../lib/peers.mjs';
import {
  answer,
  clearNotifications,
  closeAllEditors,
  notifications,
  pick,
  quickInput,
  runCommand,
  statusBarTexts,
  waitEditorText,
  waitFor,
  waitQuickInput,
  waitStatusBar,
} from '../lib/workbench.mjs';

export const name = 'Tasks: the sidecar killed mid-task, the new one asks the task\'s question and announces its result';
export const timeoutMs = 150000;

const SERVER = 'tasks';
const TOAST = '.notifications-toasts .notification-toast';
const QUESTION = 'asks: How deep should the report on restart go?';

/** Starts the FastMCP tasks server on a free port; resolves with its URL and a stop function. */
async function startTasksServer(ctx) {
  const python = peer(ctx.repo, 'MCP_PYTHON');
  if (!python || !existsSync(python)) {
    throw new Error(`no MCP_PYTHON (${python ?? 'unset'}): this scenario needs the peers; run scripts/install-peers.sh`);
  }
  const script = join(ctx.repo, 'fixtures', 'python', 'fastmcp_tasks_server.py');
  const errFile = join(ctx.artifacts, 'fastmcp-tasks-server.log');
  const err = openSync(errFile, 'w');
  const child = spawn(python, [script, '--http', '0'], {
    env: { ...process.env, TASKS_POLL_MS: '200', TASKS_WORK_MS: '1500' },
    stdio: ['ignore', 'pipe', err],
  });
  closeSync(err);
  let out = '';
  let exited = null;
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve((exited = { code, signal }))));
  child.stdout.on('data', (d) => (out += d));
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exit;
    clearTimeout(t);
  };
  try {
    const url = await waitFor('the tasks server\'s "ready http://…" line', () => {
      if (exited) throw new Error(`the tasks server exited (${JSON.stringify(exited)}); see ${errFile}`);
      return /^ready (http:\/\/127\.0\.0\.1:\d+\/mcp)$/m.exec(out)?.[1];
    }, { timeout: 30000 });
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The pids of this run's sidecars: the binary the installed VSIX carries, run as `lsp`. */
function sidecarPids(extensionsDir) {
  const pids = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let argv;
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone
    }
    if (argv[0].startsWith(extensionsDir) && argv[1] === 'lsp') pids.push(Number(pid));
  }
  return pids;
}

const taskLines = (log, status) => [...log.matchAll(new RegExp(`task ${SERVER} slow_report (\\S+): ${status}\\b`, 'g'))];

export async function run(ctx) {
  const { page, screenshot } = ctx;
  const before = ctx.outputLog().length;
  const logSince = () => ctx.outputLog().slice(before);
  const servers = ctx.workspace.userSettings['mcpSidecar.servers'];
  const tasksServer = await startTasksServer(ctx);
  try {
    await ctx.setUserSetting('mcpSidecar.servers', { ...servers, [SERVER]: { url: tasksServer.url } });
    await waitStatusBar(page, /MCP 3\/3/, { timeout: 30000 });
    await closeAllEditors(page);
    await clearNotifications(page);

    // 1. Call Tool of slow_report: a task, its progress notification and the status bar.
    await runCommand(page, 'MCP Sidecar: Call Tool');
    await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/2)');
    await pick(page, SERVER);
    await waitQuickInput(page, `MCP Sidecar: Call Tool (${SERVER}) (2/2)`);
    await pick(page, 'slow_report');
    await waitQuickInput(page, /^tasks: arguments for slow_report \(1\/1\)/);
    await answer(page, 'restart');
    await waitQuickInput(page, /^tasks: arguments for slow_report$/);
    await pick(page, 'Call slow_report');
    await waitStatusBar(page, /^1 MCP task$/);
    await waitFor('the call\'s progress notification', async () =>
      (await notifications(page)).find((n) => /^tasks: slow_report/.test(n.message) && n.buttons.includes('Cancel')),
    );
    const started = await waitFor('the task in the log', async () => taskLines(logSince(), '\\w+')[0]);
    const taskId = started[1];
    await screenshot('task-restart-running');

    // 2. The sidecar is killed while the task runs; the extension starts another.
    const [old, ...more] = sidecarPids(ctx.profile.extensions);
    assert.ok(old && more.length === 0, `one sidecar runs: ${JSON.stringify([old, ...more])}`);
    assert.ok(!taskLines(logSince(), 'completed').length, 'the task had not ended before the kill');
    process.kill(old, 'SIGKILL');
    await waitFor('the extension to restart the sidecar', async () => /the sidecar exited; restarting/.test(logSince()), { timeout: 20000 });
    const fresh = await waitFor('a new sidecar process', async () => sidecarPids(ctx.profile.extensions).find((p) => p !== old), { timeout: 30000 });
    assert.notEqual(fresh, old);
    const gone = await waitFor('the call\'s end', async () =>
      (await notifications(page)).find((n) => /^tasks: slow_report: /.test(n.message)),
    );
    assert.equal(gone.message, 'tasks: slow_report: the sidecar stopped before the call ended.');
    await waitStatusBar(page, /MCP 3\/3/, { timeout: 30000 });

    // 3. The new sidecar follows the task: its question ("tasks needs input" first, when the
    // window holds it back; a stale one from the killed sidecar's ask leads nowhere).
    const question = await waitFor(`the question ${QUESTION}`, async () => {
      const q = await quickInput(page);
      if (q?.title.includes(QUESTION)) return q;
      const ask = page.locator(TOAST, { hasText: 'tasks needs input' }).locator('.monaco-button', { hasText: 'Respond' });
      if ((await ask.count()) > 0) await ask.first().click();
      return null;
    }, { timeout: 30000 });
    assert.match(question.title, /^tasks, for the task started \d\d:\d\d UTC, asks: /);
    assert.deepEqual(question.rows.map((r) => r.label).sort(), ['long', 'short']);
    await screenshot('task-restart-question');
    await pick(page, 'long');
    await waitFor('the review with Submit', async () => {
      const q = await quickInput(page);
      return q?.title.includes(QUESTION) && q.rows.some((r) => r.label === 'Submit') ? q : null;
    });
    await pick(page, 'Submit');

    // 4. The task's end, announced (no call waits for it) with its result.
    const done = await waitFor('the task\'s end announced', async () =>
      (await notifications(page)).find((n) => /^MCP task tasks: slow_report/.test(n.message)),
    { timeout: 30000 });
    assert.equal(done.message, 'MCP task tasks: slow_report completed.');
    assert.equal(done.severity, 'info');
    assert.deepEqual(done.buttons, ['Show Result', 'Show Tasks']);
    const completed = taskLines(logSince(), 'completed');
    assert.deepEqual(completed.map((m) => m[1]), [taskId], 'the task that ended is the one started before the kill');
    await screenshot('task-restart-announced');
    await page.locator(TOAST, { hasText: 'MCP task tasks: slow_report' }).locator('.monaco-button', { hasText: 'Show Result' }).first().click();
    const doc = await waitEditorText(page, /Task `\S+`: \*\*completed\*\*/);
    assert.ok(doc.includes(taskId), 'the document names the task');
    assert.match(doc, /report on restart: depth long/);
    await waitFor('the task gone from the status bar', async () => !(await statusBarTexts(page)).some((t) => /MCP task/.test(t)));
    await closeAllEditors(page);
  } finally {
    await ctx.setUserSetting('mcpSidecar.servers', servers).catch(() => {});
    await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 }).catch(() => {});
    await tasksServer.stop();
  }
}
