// mcp-sidecar/editDraft: an untitled Markdown draft with its problem as a diagnostic and Accept /
// Reject in the editor title; Accept returns the edited text, Reject returns reject, closing it
// (Don't Save) returns null, cancelPrompt closes it (null). Fed through ctx.request.
import assert from 'node:assert/strict';
import { activeTabTitle, closeQuickInput, runCommand, waitEditorText, waitFor } from '../lib/workbench.mjs';

export const name = 'Drafts: problems shown, Accept returns the edited text, Reject, close and cancel = null';

async function openDraft(page, request, id, extra = {}) {
  await closeQuickInput(page);
  const answer = await request({
    method: 'editDraft',
    params: {
      id,
      server: 'demo',
      kind: 'samplingRequest',
      title: 'demo wants a model answer',
      language: 'markdown',
      text: '# Request\n\nmaxTokens: 400\nbogus: 1\n\n## user\n\nWhich flight?\n',
      problems: [{ line: 3, message: 'unknown header key "bogus"' }],
    },
    ...extra,
  });
  await waitFor('the draft tab', async () => (await activeTabTitle(page)).includes(`[${id}].md`) || null);
  await waitEditorText(page, /# Request/);
  return answer;
}

const tabGone = (page, id) => waitFor(`the draft ${id} to close`, async () => !(await activeTabTitle(page)).includes(`[${id}]`));

export async function run({ page, request, screenshot }) {
  let answer = await openDraft(page, request, 'e2e-draft-1');
  await waitFor('the problem squiggle', () => page.locator('.editor-group-container.active .squiggly-error').count());
  const accept = page.locator('.editor-group-container.active .editor-actions .action-label[aria-label^="Accept Draft"]');
  await accept.waitFor();
  assert.equal(await page.locator('.editor-group-container.active .editor-actions .action-label[aria-label^="Reject Draft"]').count(), 1);
  await screenshot('draft-with-problem-and-accept-reject');
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('Take the 9:40 flight.');
  await accept.click();
  const accepted = await answer();
  assert.equal(accepted.action, 'accept');
  assert.match(accepted.text, /^# Request\n[\s\S]*Which flight\?\nTake the 9:40 flight\.$/);
  await tabGone(page, 'e2e-draft-1');

  answer = await openDraft(page, request, 'e2e-draft-2');
  await runCommand(page, 'MCP Sidecar: Reject Draft');
  assert.deepEqual(await answer(), { action: 'reject' });
  await tabGone(page, 'e2e-draft-2');

  answer = await openDraft(page, request, 'e2e-draft-3');
  await runCommand(page, 'View: Close Editor');
  const dontSave = page.locator('.monaco-dialog-box .monaco-button', { hasText: "Don't Save" });
  await dontSave.waitFor({ timeout: 10000 });
  await dontSave.click();
  assert.equal(await answer(), null);

  answer = await openDraft(page, request, 'e2e-draft-4', { cancelAfterMs: 1000 });
  assert.equal(await answer(), null);
  await tabGone(page, 'e2e-draft-4');
}
