// Sampling with the editor's own model ("mcpSidecar.sampling.provider": "editor"; the test model
// test/lm-provider, echo-1, answers "echo: <last user message>" and records what it got): the
// request draft is edited (maxTokens 400 → 32, a line added to the user message) and accepted;
// the sidecar's mcp-sidecar/languageModel reaches the test model with exactly those messages and
// max_tokens; its answer fills the answer draft (model echo-1); accepted, it is the tool result.
import assert from 'node:assert/strict';
import { ANSWER_TAB, callAnalyzeFlights, lineStartingWith, resultText, retypeLineEnd } from '../lib/sampling.mjs';
import { clickEditorAction, editorLines, runCommand, waitActiveTab, waitFor } from '../lib/workbench.mjs';

export const name = 'Sampling with the editor\'s model: the approved request reaches vscode.lm, its answer is the result';

const ADDED = 'Answer in one sentence.';

// A User setting: the sampling provider is the person's own (a workspace's value is ignored).
async function useProvider(setUserSetting, outputLog, provider) {
  const before = outputLog().length;
  await setUserSetting('mcpSidecar.sampling.provider', provider);
  await waitFor(`the sidecar to get sampling provider ${provider ?? '(not set)'}`, async () =>
    outputLog().slice(before).includes(`sampling provider ${provider ?? '(not set)'}`) || null, { timeout: 15000, interval: 200 });
}

export async function run({ page, setUserSetting, outputLog, samplingAudit, testLmRequests, screenshot }) {
  await useProvider(setUserSetting, outputLog, 'editor');
  try {
    const audited = samplingAudit().length;
    const asked = testLmRequests().length;
    await callAnalyzeFlights(page, 'demo');
    await retypeLineEnd(page, 'maxTokens: 400', 3, '32');
    await page.keyboard.press('Control+End');
    await page.keyboard.type(ADDED);
    await waitFor('the edits in the draft', async () =>
      (await lineStartingWith(page, 'maxTokens:')) === 'maxTokens: 32' && (await editorLines(page)).some((l) => l.text === ADDED) || null);
    await runCommand(page, 'MCP Sidecar: Accept Draft');

    await waitActiveTab(page, ANSWER_TAB, { timeout: 15000 });
    // The tab is active before its editor shows the text: wait for the draft itself.
    let draft = [];
    await waitFor('the answer draft with the model\'s answer', async () => {
      draft = (await editorLines(page)).map((l) => l.text);
      return draft.includes('### assistant') || null;
    }, { timeout: 15000 });
    assert.ok(draft.includes('model: echo-1'), `the answer draft names the model: ${draft.join('\n')}`);
    assert.ok(draft.includes('stopReason: endTurn'));
    const h = draft.indexOf('### assistant');
    assert.ok(h > 0 && draft[h + 2].startsWith('echo: Which of these flights is the best value?'), 'the model\'s answer is in the draft');
    await screenshot('sampling-answer-draft-editor-model');

    const calls = testLmRequests().slice(asked);
    assert.equal(calls.length, 1, 'the test model was asked once');
    const [call] = calls;
    assert.equal(call.model, 'echo-1');
    assert.equal(call.modelOptions.max_tokens, 32, 'maxTokens as edited in the draft');
    assert.ok(Math.abs(call.modelOptions.temperature - 0.2) < 1e-6, `temperature ${call.modelOptions.temperature}`);
    assert.equal(call.messages.length, 2);
    assert.deepEqual(call.messages[0], { role: 'user', text: 'System instructions:\nYou are a concise travel assistant. Prices are per person.' });
    assert.equal(call.messages[1].role, 'user');
    assert.match(call.messages[1].text, /^Which of these flights is the best value\?[\s\S]*\n10\. EX999 Lisbon → New York JFK, 1 stop \(Ponta Delgada\), 9h50, €417\n\nAnswer in one sentence\.$/);

    await clickEditorAction(page, 'Accept Draft');
    const expected = `echo: ${call.messages[1].text}`;
    const result = await resultText(page, 'demo', 'analyze_flights');
    assert.equal(result.text, expected, 'the tool result is the model\'s answer');
    assert.ok(result.lines.includes('  "model": "echo-1",'), result.lines.join('\n'));
    const textLine = result.lines.find((l) => l.startsWith('  "text": '));
    assert.equal(textLine, `  "text": ${JSON.stringify(expected)}`, 'structured content carries the exact text');

    const entries = samplingAudit().slice(audited);
    assert.equal(entries.length, 1);
    const [e] = entries;
    assert.equal(e.provider, 'editor');
    assert.equal(e.outcome, 'accepted');
    assert.equal(e.requestSent.maxTokens, 32);
    assert.equal(e.requestSent.messages[0].content.text, call.messages[1].text, 'what the model got is what the person approved');
    assert.deepEqual(e.final.content, { type: 'text', text: expected });
    assert.equal(e.answerEdited, false);
  } finally {
    await useProvider(setUserSetting, outputLog, undefined).catch(() => {});
    await runCommand(page, 'View: Close All Editors').catch(() => {});
  }
}
