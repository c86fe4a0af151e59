// The demo's booking form (form-mode elicitation), one field per step through the contract's
// inputBox / quickPick: typed answers, a rejected email re-asked with the sidecar's validation
// message, Back, a single and a multi-select pick, the review step, Submit.
import assert from 'node:assert/strict';
import { answer, back, notifications, pick, quickInput, runCommand, waitEditorText, waitFor, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'Booking form (elicitation): every field kind, validation, Back, review, Submit';

const FORM_TITLE = /demo: Confirm your trip to Lisbon/;

/** The next form prompt: one whose title (with its step counter) differs from the last one seen. */
async function nextPrompt(page, lastTitle) {
  return waitFor('the next form prompt', async () => {
    const q = await quickInput(page);
    return q && FORM_TITLE.test(q.title) && q.title !== lastTitle ? q : null;
  });
}

export async function run({ page, screenshot, log }) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, '(1/2)');
  await pick(page, 'demo');
  await waitQuickInput(page, '(2/2)');
  await pick(page, 'book_trip');
  // The tool's own argument first (asked by the sidecar), then the server's form.
  await waitQuickInput(page, 'demo: arguments for book_trip (1/1)');
  await answer(page, 'Lisbon');
  await waitQuickInput(page, /^demo: arguments for book_trip$/);
  await pick(page, 'Call book_trip');
  // The first question may be announced ("demo needs input") when an editor was typed in just
  // before (prompts.notifyFirst: whenTyping): Respond to it.
  const first = await waitFor('the first form prompt', async () => {
    const q = await quickInput(page);
    if (q && FORM_TITLE.test(q.title)) return 'prompt';
    return (await notifications(page)).some((n) => /demo needs input/.test(n.message)) ? 'announced' : null;
  }, { timeout: 15000 });
  if (first === 'announced') {
    await page.locator('.notifications-toasts .notification-toast', { hasText: 'demo needs input' })
      .locator('.monaco-button', { hasText: 'Respond' }).first().click();
    await waitQuickInput(page, FORM_TITLE);
  }

  let title;
  let wentBack = false;
  let emailRejected = false;
  for (let guard = 0; guard < 30; guard++) {
    const q = await nextPrompt(page, title);
    title = q.title;
    const about = `${q.message} ${q.placeholder}`;
    log(`  form step: ${q.title} | ${about} | ${q.rows.map((r) => r.label).join(', ')}`);
    if (/Review/i.test(about) || q.rows.some((r) => r.label === 'Submit')) {
      const labels = q.rows.map((r) => r.aria).join('\n');
      assert.match(labels, /Full name.*Ada Lovelace/);
      assert.match(labels, /Email.*ada@example\.com/);
      // Choices as the pickers showed them: their titles, not their values.
      assert.match(labels, /Cabin.*Business/);
      assert.doesNotMatch(labels, /Cabin.*business/);
      assert.match(labels, /Insurance.*No insurance/);
      await screenshot('booking-form-review');
      await pick(page, 'Submit');
      break;
    }
    if (/Full name/.test(about)) {
      assert.match(q.title, /\(1\/10\)/, 'the first field is step 1 of 10');
      await answer(page, 'Ada Lovelace');
    } else if (/Email/.test(about)) {
      if (!emailRejected) {
        emailRejected = true;
        await answer(page, 'ada@');
        await waitFor('the email to be re-asked', async () => {
          const r = await quickInput(page);
          return r && r.title === q.title && /email/i.test(r.message) && r.value === 'ada@' && r.message !== q.message ? r : null;
        });
        await answer(page, 'ada@example.com');
      } else {
        await answer(page, 'ada@example.com');
      }
    } else if (/Travelers/.test(about)) {
      await answer(page, '2');
    } else if (/Window seat/.test(about)) {
      assert.ok(q.hasBack, 'a later step offers Back');
      if (!wentBack) {
        wentBack = true;
        await screenshot('booking-form-quick-pick-with-step-and-back');
        await back(page);
        const prev = await nextPrompt(page, title);
        assert.match(prev.title, /\(4\/10\)/, 'Back returns to step 4');
        assert.match(prev.message, /Budget/, 'Back returns to the previous field');
        title = prev.title;
        await page.keyboard.press('Enter');
      } else {
        await page.keyboard.press('Enter');
      }
    } else if (/Cabin/.test(about)) {
      await pick(page, 'Business');
    } else if (/Extras/.test(about)) {
      await page.keyboard.press('Space');
      await page.keyboard.press('Enter');
    } else {
      // Budget, meal, insurance, departure: keep the default.
      await page.keyboard.press('Enter');
    }
  }
  const text = await waitEditorText(page, /Booked: Ada Lovelace/, { timeout: 20000 });
  assert.match(text, /Booked: Ada Lovelace <ada@example\.com>, 2 traveler\(s\) to Lisbon, business cabin/);
  assert.ok(wentBack && emailRejected);
}
