// Tasks (the Tasks extension) on the demo's slow_task, which the demo runs as a task since the
// sidecar declares the extension: Call Tool keeps its cancellable progress notification while the
// task runs (the task's steps in it) and the status bar counts the task; the server's question
// halfway is an ordinary quick pick; the result opens. Cancel on the progress notification sends
// tasks/cancel (the server's own last status message says it ran it). "Show Tasks" lists both and
// shows the result of one that ended. A sidecar restarted mid-task: the task, which the new
// sidecar finds gone (lost), is announced with Show Result, as any task that ends while no call
// waits for it.
import assert from 'node:assert/strict';
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

export const name = 'Tasks: a task call with its progress and question, cancel, Show Tasks, announced after a restart';
export const timeoutMs = 150000;

const TOAST = '.notifications-toasts .notification-toast';

/** Calls slow_task through Call Tool, answering the sidecar's questions about its arguments. */
async function callSlowTask(page, { stepMs, forever }) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/2)');
  await pick(page, 'demo');
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (demo) (2/2)');
  await pick(page, 'slow_task');
  await waitQuickInput(page, 'demo: arguments for slow_task (1/3)');
  await answer(page, '4');
  await waitQuickInput(page, 'demo: arguments for slow_task (2/3)');
  await answer(page, String(stepMs));
  const third = await waitQuickInput(page, 'demo: arguments for slow_task (3/3)');
  if (third.rows.length > 0) await pick(page, forever ? 'Yes' : 'No');
  else await answer(page, String(forever));
  await waitQuickInput(page, /^demo: arguments for slow_task$/);
  await pick(page, 'Call slow_task');
}

/** The quick input of the server's question, after a "demo needs input" notification if one came first. */
async function waitQuestion(page, title) {
  const first = await waitFor(`the question ${title}`, async () => {
    const q = await quickInput(page);
    if (q?.title.includes(title)) return 'prompt';
    return (await notifications(page)).some((n) => /demo needs input/.test(n.message)) ? 'announced' : null;
  }, { timeout: 20000 });
  if (first === 'announced') {
    await page.locator(TOAST, { hasText: 'demo needs input' }).locator('.monaco-button', { hasText: 'Respond' }).first().click();
  }
  return waitQuickInput(page, title);
}

const taskLines = (log, status) => [...log.matchAll(new RegExp(`task demo slow_task (\\S+): ${status}(?: \\(([^)]*)\\))?`, 'g'))];

export async function run({ page, outputLog, screenshot }) {
  const before = outputLog().length;
  const logSince = () => outputLog().slice(before);
  await clearNotifications(page);

  // 1. A task call: progress (cancellable), the status bar, the question, the result.
  await callSlowTask(page, { stepMs: 700, forever: false });
  await waitStatusBar(page, /^1 MCP task$/);
  const progress = await waitFor('the call\'s progress notification with the task\'s step', async () =>
    (await notifications(page)).find((n) => /demo: slow_task/.test(n.message) && /step \d of 4/.test(n.message)),
  );
  assert.ok(progress.buttons.includes('Cancel'), `the progress can be cancelled: ${JSON.stringify(progress)}`);
  await screenshot('task-progress');
  // The question says which task asks.
  const question = await waitQuestion(page, 'asks: Keep the details?');
  assert.match(question.title, /^demo, for the task started \d\d:\d\d UTC, asks: Keep the details\?/);
  await pick(page, 'Yes');
  await waitQuickInput(page, 'asks: Keep the details?');
  await pick(page, 'Submit');
  await waitEditorText(page, /Done after 4 steps: you chose to keep the details\./, { timeout: 30000 });
  await waitFor('the task gone from the status bar', async () => !(await statusBarTexts(page)).some((t) => /MCP task/.test(t)));
  const completed = taskLines(logSince(), 'completed');
  assert.equal(completed.length, 1, 'the task was reported completed');
  // The call waited for it: no announcement.
  assert.ok(!(await notifications(page)).some((n) => /MCP task demo: slow_task/.test(n.message)));

  // 2. Cancel on the progress notification: $/cancelRequest, so tasks/cancel.
  await callSlowTask(page, { stepMs: 200, forever: true });
  await waitStatusBar(page, /^1 MCP task$/);
  await page.locator(TOAST, { hasText: 'demo: slow_task' }).locator('.monaco-button', { hasText: 'Cancel' }).first().click();
  const cancelled = await waitFor('the task to end cancelled by the server', async () => taskLines(logSince(), 'cancelled')[0], { timeout: 20000 });
  assert.equal(cancelled[2], 'cancelled', 'the server ran the cancel (its last status message)');
  await waitFor('the task gone from the status bar', async () => !(await statusBarTexts(page)).some((t) => /MCP task/.test(t)));
  assert.ok(!(await notifications(page)).some((n) => /failed|MCP task demo/.test(n.message)), 'a cancel is quiet');

  // 3. Show Tasks: both, the ended one's result.
  await closeAllEditors(page);
  await runCommand(page, 'MCP Sidecar: Show Tasks');
  const list = await waitQuickInput(page, 'MCP Tasks');
  const rows = list.rows.map((r) => r.aria).join('\n');
  assert.match(rows, /demo: slow_task.*completed · done/);
  assert.match(rows, /demo: slow_task.*cancelled · cancelled/);
  await screenshot('show-tasks');
  await page.keyboard.type('completed');
  await waitFor('the completed task first', async () => ((await quickInput(page))?.rows[0]?.aria.match(/completed · done/) ? true : null));
  await page.keyboard.press('Enter');
  const actions = await waitQuickInput(page, 'demo: slow_task (completed)');
  assert.deepEqual(actions.rows.map((r) => r.label), ['Show Result']);
  await page.keyboard.press('Enter');
  const doc = await waitEditorText(page, /Task `\S+`: \*\*completed\*\* \(done\)/);
  assert.match(doc, /Done after 4 steps: you chose to keep the details\./);
  assert.ok(doc.includes(completed[0][1]), 'the document names the task');

  // 4. The sidecar restarts mid-task: the new one finds the task gone and reports it lost; no call
  // waits for it any more, so it is announced.
  await closeAllEditors(page);
  await clearNotifications(page);
  await callSlowTask(page, { stepMs: 200, forever: true });
  await waitStatusBar(page, /^1 MCP task$/);
  await runCommand(page, 'MCP Sidecar: Restart Sidecar');
  const lost = await waitFor('the lost task announced', async () =>
    (await notifications(page)).find((n) => /MCP task demo: slow_task is lost/.test(n.message)),
  { timeout: 60000 });
  assert.equal(lost.severity, 'warning');
  assert.deepEqual(lost.buttons, ['Show Result', 'Show Tasks']);
  // The call itself says the sidecar went away, not a transport error.
  const gone = (await notifications(page)).find((n) => /demo: slow_task/.test(n.message) && !/MCP task/.test(n.message));
  assert.equal(gone?.message, 'demo: slow_task: the sidecar stopped before the call ended.');
  await screenshot('task-lost-announced');
  await page.locator(TOAST, { hasText: 'is lost' }).locator('.monaco-button', { hasText: 'Show Result' }).first().click();
  await waitEditorText(page, /Task `\S+`: \*\*lost\*\*/);
  await closeAllEditors(page);
}
