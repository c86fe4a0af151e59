// prompts.notifyFirst: a server's first question announced by "‹server› needs input" with
// Respond / Cancel; Respond opens it, Cancel answers null, and a cancelPrompt meanwhile answers
// null at once.
import assert from 'node:assert/strict';
import { notifications, quickInput, waitFor, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'Announce first: "needs input" notification with Respond / Cancel';

// Only the first question of a server's exchange is announced, so each round uses its own server.
const seat = (id, server, extra = {}) => ({
  method: 'inputBox',
  params: { id, server, title: 'Pick a seat', prompt: 'Seat' },
  ...extra,
});

async function toast(page, server) {
  return waitFor(`the "${server} needs input" notification`, async () =>
    (await notifications(page)).find((n) => n.message.includes(`${server} needs input: ${server}: Pick a seat`)) ?? null,
  );
}

async function clickToast(page, server, label) {
  await page.locator('.notifications-toasts .notification-toast', { hasText: `${server} needs input` })
    .locator('.monaco-button', { hasText: label }).first().click();
}

export async function run({ page, request, workspace, screenshot }) {
  workspace.setSetting('mcpSidecar.prompts.notifyFirst', 'always');
  try {
    await page.waitForTimeout(1500); // the workspace file is watched
    let answer = await request(seat('e2e-seat-1', 'airline'));
    const shown = await toast(page, 'airline');
    assert.deepEqual(shown.buttons, ['Respond', 'Cancel']);
    assert.equal(await quickInput(page), null, 'nothing opens before Respond');
    await screenshot('announce-first-notification');
    await clickToast(page, 'airline', 'Respond');
    await waitQuickInput(page, 'airline: Pick a seat');
    await page.keyboard.type('12A');
    await page.keyboard.press('Enter');
    assert.deepEqual(await answer(), { value: '12A' });

    // The same server's next question belongs to the same exchange: it opens at once.
    answer = await request(seat('e2e-seat-2', 'airline'));
    await waitQuickInput(page, 'airline: Pick a seat');
    await page.keyboard.type('12B');
    await page.keyboard.press('Enter');
    assert.deepEqual(await answer(), { value: '12B' });

    answer = await request(seat('e2e-seat-3', 'railway'));
    await toast(page, 'railway');
    await clickToast(page, 'railway', 'Cancel');
    assert.equal(await answer(), null);

    answer = await request(seat('e2e-seat-4', 'ferry', { cancelAfterMs: 1500 }));
    await toast(page, 'ferry');
    assert.equal(await answer({ timeout: 8000 }), null, 'cancelPrompt answers at once, notification or not');
  } finally {
    workspace.setSetting('mcpSidecar.prompts.notifyFirst', undefined);
    await page.waitForTimeout(1000);
    await page.evaluate(() => {
      for (const b of document.querySelectorAll('.notifications-toasts .codicon-notifications-clear')) b.click();
    });
  }
}
