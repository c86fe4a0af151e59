// Sampling with the manual provider (the default), on the demo server's analyze_flights (the
// 2026-07-28 era: a sampling/createMessage entry of inputRequests): the request draft opens as
// an untitled Markdown document; maxTokens is changed from 400 to 64 by typing; Accept in the
// editor title sends it on; the empty answer draft opens with the cursor on the answer line; the
// typed answer is accepted with the command and is exactly the tool's result. The sidecar's audit
// log agrees: the request was edited (maxTokens 64 sent), the person decided, the answer is final.
import assert from 'node:assert/strict';
import { ANSWER_TAB, callAnalyzeFlights, lineStartingWith, resultText, retypeLineEnd } from '../lib/sampling.mjs';
import { activeTabTitle, clickEditorAction, editorLines, runCommand, statusBarTexts, waitActiveTab, waitFor } from '../lib/workbench.mjs';

export const name = 'Sampling drafts (manual): request edited and accepted, typed answer is the tool result';

const ANSWER = 'Flight 5 (EX517 to Boston): nonstop and the cheapest at €389.';

export async function run({ page, screenshot, samplingAudit }) {
  const audited = samplingAudit().length;
  const requestTab = await callAnalyzeFlights(page, 'demo');
  assert.match(await activeTabTitle(page), /^demo wants a model answer \[.+\]\.md/);
  const request = (await editorLines(page)).map((l) => l.text);
  assert.equal(request[0], '# Sampling request from `demo`');
  for (const line of ['model: ', 'remember: no', 'maxTokens: 400', 'includeContext: none', '### system', 'You are a concise travel assistant. Prices are per person.', '### user']) {
    assert.ok(request.includes(line), `the request draft shows "${line}"`);
  }
  assert.ok(request.some((l) => l.startsWith('Which of these flights is the best value?')));
  assert.ok((await statusBarTexts(page)).includes('Markdown'), 'the draft is a Markdown document');
  await screenshot('sampling-request-draft');

  await retypeLineEnd(page, 'maxTokens: 400', 3, '64');
  await waitFor('maxTokens: 64 in the draft', async () => (await lineStartingWith(page, 'maxTokens:')) === 'maxTokens: 64' || null);
  await screenshot('sampling-request-draft-edited');
  await clickEditorAction(page, 'Accept Draft');

  const answerTab = await waitActiveTab(page, ANSWER_TAB, { timeout: 15000 });
  assert.ok(!(await page.locator('.editor-group-container .tab', { hasText: requestTab }).count()), 'the request draft closed');
  const answerDraft = (await editorLines(page)).map((l) => l.text);
  assert.equal(answerDraft[0], '# Model answer for `demo`');
  assert.ok(answerDraft.includes('model: manual') && answerDraft.includes('stopReason: endTurn'), answerDraft.join('\n'));
  // The cursor waits on the (empty) answer's line: the answer is typed right away.
  await page.keyboard.type(ANSWER);
  await waitFor('the typed answer under ### assistant', async () => {
    const lines = (await editorLines(page)).map((l) => l.text);
    const h = lines.indexOf('### assistant');
    return h >= 0 && lines[h + 1] === ANSWER || null;
  });
  await screenshot('sampling-answer-draft-typed');
  await runCommand(page, 'MCP Sidecar: Accept Draft');

  const result = await resultText(page, 'demo', 'analyze_flights');
  assert.equal(result.text, ANSWER, 'the tool result is exactly the typed answer');
  assert.ok(result.lines.includes(`  "text": ${JSON.stringify(ANSWER)}`), `structured content text: ${result.lines.join('\n')}`);
  assert.ok(result.lines.includes('  "model": "manual",'));
  assert.ok(!(await page.locator('.editor-group-container .tab', { hasText: answerTab }).count()), 'the answer draft closed');

  const entries = samplingAudit().slice(audited);
  assert.equal(entries.length, 1, 'one audit entry');
  const [e] = entries;
  assert.equal(e.server, 'demo');
  assert.equal(e.provider, 'manual');
  assert.equal(e.outcome, 'accepted');
  assert.equal(e.decidedBy, 'person');
  assert.equal(e.requestReceived.maxTokens, 400);
  assert.equal(e.requestSent.maxTokens, 64);
  assert.equal(e.requestEdited, true);
  assert.deepEqual(e.requestSent.messages, e.requestReceived.messages, 'only maxTokens was edited');
  assert.equal(e.answerEdited, true);
  assert.deepEqual(e.final.content, { type: 'text', text: ANSWER });
}
