// Reject on a sampling request draft ends the call at once, in both eras, and says so:
// - demo (2026-07-28): the refusal ends the call without a retry; callTool fails with
//   data.kind "refused" and the status bar shows the sidecar's reason (Reject from the editor
//   title);
// - legacy (2025-11-25): the server gets JSON-RPC error -1 "User rejected sampling request" and
//   its tool reports the refusal as an error result (Reject with the command).
// No answer draft opens, the progress notification ends, and the audit log records the refusal.
import assert from 'node:assert/strict';
import { ANSWER_TAB, callAnalyzeFlights } from '../lib/sampling.mjs';
import { activeTabTitle, clickEditorAction, notifications, runCommand, statusBarTexts, waitEditorText, waitFor } from '../lib/workbench.mjs';

export const name = 'Sampling drafts: Reject ends the call promptly with a visible refusal (both eras)';

const PROMPT_MS = 3000;

const progressShown = async (page, server) =>
  (await notifications(page)).some((n) => n.message.startsWith(`${server}: analyze_flights`)) ||
  (await statusBarTexts(page)).some((t) => t.startsWith(`${server}: analyze_flights`) && !/refused/.test(t));

export async function run({ page, samplingAudit, screenshot, log }) {
  let audited = samplingAudit().length;
  const demoTab = await callAnalyzeFlights(page, 'demo');
  let t0 = Date.now();
  await clickEditorAction(page, 'Reject Draft');
  const shown = await waitFor('the refusal in the status bar', async () =>
    (await statusBarTexts(page)).find((t) => t.startsWith('demo: analyze_flights: ')) ?? null, { timeout: PROMPT_MS + 2000 });
  const demoMs = Date.now() - t0;
  log(`  demo: Reject → refusal shown in ${demoMs} ms`);
  await screenshot('sampling-rejected-status-bar');
  assert.ok(demoMs < PROMPT_MS, `the refusal showed within ${PROMPT_MS} ms (took ${demoMs} ms)`);
  assert.match(shown, /demo asked for a model answer and it was refused: the person rejected the request/);
  assert.ok(!(await activeTabTitle(page)).includes(demoTab), 'the request draft closed');
  assert.ok(!ANSWER_TAB.test(await activeTabTitle(page)), 'no answer draft');
  await waitFor('the call\'s progress to end', async () => !(await progressShown(page, 'demo')) || null, { timeout: 5000 });
  let entries = samplingAudit().slice(audited);
  assert.equal(entries.length, 1);
  assert.equal(entries[0].outcome, 'refused');
  assert.equal(entries[0].reason, 'the person rejected the request');
  assert.equal(entries[0].requestSent, undefined, 'nothing went to a model');

  audited = samplingAudit().length;
  await callAnalyzeFlights(page, 'legacy');
  // Timed from the command's run (Enter in the palette), as the demo's is from the click: how
  // long typing into the palette takes is the browser's and the machine's load, not the refusal.
  await runCommand(page, 'MCP Sidecar: Reject Draft');
  t0 = Date.now();
  const text = await waitEditorText(page, /# legacy: analyze_flights[\s\S]*User rejected sampling request/, { timeout: PROMPT_MS + 2000 });
  const legacyMs = Date.now() - t0;
  log(`  legacy: Reject Draft (Command Palette) → error result shown in ${legacyMs} ms`);
  // A second more than the demo's: the refusal goes through the server, whose error result opens
  // as a document (about 1.1 s on a quiet machine; a call left waiting would take the server's
  // sampling timeout).
  assert.ok(legacyMs < PROMPT_MS + 1000, `the refusal showed within ${PROMPT_MS + 1000} ms of the command (took ${legacyMs} ms)`);
  assert.match(text, /\*\*The tool reported an error\.\*\*/);
  assert.match(text, /The client refused sampling \(sampling\/createMessage\): User rejected sampling request \(code -1\)/);
  await waitFor('the call\'s progress to end', async () => !(await progressShown(page, 'legacy')) || null, { timeout: 5000 });
  entries = samplingAudit().slice(audited);
  assert.equal(entries.length, 1);
  assert.equal(entries[0].server, 'legacy');
  assert.equal(entries[0].outcome, 'refused');
}
