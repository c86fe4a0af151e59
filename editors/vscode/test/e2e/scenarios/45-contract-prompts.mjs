// The contract's inputBox and quickPick on the real widgets, with the options the sidecar's
// relays use: password, step counter, Back and Skip buttons, multi-select with preselected items.
// Fed through the extension's test hook (ctx.request) to the same handlers as the sidecar's
// requests, and answered by typing, pressing keys and clicking.
import assert from 'node:assert/strict';
import { back, clickTitleButton, quickInput, waitFor, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'Contract prompts: password, steps, Back, Skip, multi-select with preselection';

const passport = (id) => ({
  method: 'inputBox',
  params: { id, server: 'travel', title: 'travel: Confirm your trip', prompt: 'Passport number', password: true, step: 2, totalSteps: 9, canGoBack: true, canSkip: true },
});
const extras = (id) => ({
  method: 'quickPick',
  params: {
    id, server: 'travel', title: 'travel: Extras', canPickMany: true, step: 9, totalSteps: 9, canGoBack: true,
    items: [{ label: 'lounge', picked: true }, { label: 'wifi', description: 'on board' }, { label: 'extra_bag', picked: true }],
  },
});

export async function run({ page, request, screenshot }) {
  let answer = await request(passport('e2e-passport-1'));
  const box = await waitQuickInput(page, 'travel: Confirm your trip (2/9)');
  assert.equal(box.password, true, 'a password box hides what is typed');
  assert.equal(box.hasBack, true);
  assert.ok(box.rightButtons.some((b) => b.startsWith('Skip')), `a Skip button (got ${box.rightButtons})`);
  assert.match(box.message, /Passport number/);
  await screenshot('contract-input-box-password-step-back-skip');
  await page.keyboard.type('X123');
  await page.keyboard.press('Enter');
  assert.deepEqual(await answer(), { value: 'X123' });

  answer = await request(extras('e2e-extras-1'));
  const pick = await waitQuickInput(page, 'travel: Extras (9/9)');
  assert.deepEqual(pick.rows.map((r) => [r.label, r.checked]), [['lounge', true], ['wifi', false], ['extra_bag', true]]);
  await screenshot('contract-quick-pick-multi-step-back');
  await page.locator('.quick-input-widget .quick-input-list .monaco-list-row').first().click(); // un-checks lounge
  await waitFor('lounge unchecked', async () => (await quickInput(page))?.rows[0].checked === false || null);
  await page.keyboard.press('Enter');
  assert.deepEqual(await answer(), { selected: [2] });

  answer = await request(passport('e2e-passport-2'));
  await waitQuickInput(page, 'travel: Confirm your trip (2/9)');
  await clickTitleButton(page, 'Skip');
  assert.deepEqual(await answer(), { skip: true });

  answer = await request(extras('e2e-extras-2'));
  await waitQuickInput(page, 'travel: Extras (9/9)');
  await back(page);
  assert.deepEqual(await answer(), { back: true });

  answer = await request(passport('e2e-passport-3'));
  await waitQuickInput(page, 'travel: Confirm your trip (2/9)');
  await page.keyboard.press('Escape');
  assert.equal(await answer(), null, 'Escape dismisses: null');
  assert.equal(await quickInput(page), null);
}
