// mcp-sidecar/cancelPrompt closes the prompt on screen and its request answers null; a prompt
// waiting behind it (one quick input at a time) is dropped without being shown.
import assert from 'node:assert/strict';
import { quickInput, waitQuickInput, waitQuickInputClosed } from '../lib/workbench.mjs';

export const name = 'cancelPrompt closes the open prompt (null); queued prompts wait their turn';

export async function run({ page, request }) {
  const first = await request({
    method: 'inputBox',
    params: { id: 'e2e-cancel-1', server: 'travel', title: 'travel: Will be cancelled', prompt: 'Wait…', step: 2, totalSteps: 3 },
    cancelAfterMs: 2500,
  });
  await waitQuickInput(page, 'travel: Will be cancelled');
  // A second question while the first is open waits; it is shown once the first is gone.
  const second = await request({
    method: 'quickPick',
    params: { id: 'e2e-cancel-2', server: 'travel', title: 'travel: Next in line', items: [{ label: 'a' }, { label: 'b' }], step: 3, totalSteps: 3 },
  });
  assert.match((await quickInput(page)).title, /Will be cancelled/, 'the open prompt stays on screen');
  assert.equal(await first({ timeout: 10000 }), null);
  await waitQuickInput(page, 'travel: Next in line');
  await page.keyboard.press('Enter');
  assert.deepEqual(await second(), { selected: [0] });
  await waitQuickInputClosed(page);
}
