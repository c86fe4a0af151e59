// Run Prompt (issue 15) on server-everything: args-prompt with its required argument typed and
// its optional one left out opens as Markdown (role header, the text), and Insert at Cursor puts
// the text into the editor that was active; completable-prompt's suggestions come from the
// server (completion/complete), the second argument's narrowed by the first (context.arguments).
import assert from 'node:assert/strict';
import { withEverything } from '../lib/peers.mjs';
import {
  activeTabTitle,
  closeAllEditors,
  editorText,
  notifications,
  pick,
  quickInput,
  runCommand,
  waitEditorText,
  waitFor,
  waitQuickInput,
} from '../lib/workbench.mjs';

export const name = 'Run Prompt: server-everything args-prompt with an argument, Insert at Cursor, completions with context';
export const timeoutMs = 120000;

export async function run(ctx) {
  const { page, screenshot } = ctx;
  await withEverything(ctx, async () => {
    // The editor to insert into.
    await runCommand(page, 'File: New Untitled Text File');
    await waitFor('an untitled editor', async () => (/Untitled/.test(await activeTabTitle(page)) ? true : null));

    await runCommand(page, 'MCP Sidecar: Run Prompt');
    const list = await waitQuickInput(page, 'MCP Sidecar: Run Prompt');
    const row = list.rows.find((r) => r.label === 'args-prompt — Arguments Prompt');
    assert.ok(row, `args-prompt listed: ${JSON.stringify(list.rows.map((r) => r.label))}`);
    assert.match(row.aria, /everything · \(city, state\?\)/);
    await pick(page, 'args-prompt — Arguments Prompt');

    const city = await waitQuickInput(page, 'everything: args-prompt (1/2)');
    assert.match(city.placeholder, /city: Name of the city \(required\)/);
    // Enter on nothing: required, so it stays.
    await page.keyboard.press('Enter');
    await waitFor('the required argument insisted on', async () => ((await quickInput(page))?.placeholder.includes('is required') ? true : null));
    await page.keyboard.type('Paris');
    await waitFor('"Paris" as typed', async () => ((await quickInput(page))?.rows[0]?.label === 'Paris' ? true : null));
    await screenshot('run-prompt-argument');
    await page.keyboard.press('Enter');
    const state = await waitQuickInput(page, 'everything: args-prompt (2/2)');
    assert.equal(state.rows[0]?.label, 'Leave out');
    await page.keyboard.press('Enter');

    const md = await waitEditorText(page, /What's weather in Paris\?/);
    assert.match(md, /# everything: args-prompt/);
    assert.match(md, /Arguments: `city` = `Paris`/);
    assert.match(md, /## user/);
    assert.doesNotMatch(md, /state/);
    await screenshot('run-prompt-markdown');

    // Insert at Cursor: into the untitled editor that was active.
    const insert = await waitFor('the Insert at Cursor notification', async () => {
      const n = (await notifications(page)).find((x) => x.message.includes('everything: args-prompt: 1 message'));
      return n?.buttons.includes('Insert at Cursor') ? n : null;
    });
    assert.ok(insert);
    await page.locator('.notifications-toasts .notification-toast .monaco-button', { hasText: 'Insert at Cursor' }).first().click();
    await waitFor('the untitled editor active again', async () => (/Untitled/.test(await activeTabTitle(page)) ? true : null));
    await waitEditorText(page, /^What's weather in Paris\?$/);
    await runCommand(page, 'View: Revert and Close Editor');

    // Completions: the department's suggestions, then the names for that department only.
    await runCommand(page, 'MCP Sidecar: Run Prompt');
    await waitQuickInput(page, 'MCP Sidecar: Run Prompt');
    await pick(page, 'completable-prompt — Team Management');
    await waitQuickInput(page, 'everything: completable-prompt (1/2)');
    await page.keyboard.type('Eng');
    await waitFor('Engineering suggested', async () => {
      const q = await quickInput(page);
      return q?.rows.map((r) => r.label).join() === 'Eng,Engineering' ? true : null;
    });
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await waitQuickInput(page, 'everything: completable-prompt (2/2)');
    const names = await waitFor('the Engineering names suggested', async () => {
      const q = await quickInput(page);
      const labels = q?.rows.map((r) => r.label) ?? [];
      return labels.includes('Alice') ? labels : null;
    });
    assert.deepEqual(names, ['Alice', 'Bob', 'Charlie']);
    await page.keyboard.type('B');
    await waitFor('Bob suggested for B', async () => ((await quickInput(page))?.rows.map((r) => r.label).join() === 'B,Bob' ? true : null));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await waitEditorText(page, /Please promote Bob to the head of the Engineering team\./);
    assert.match(await editorText(page), /Arguments: `department` = `Engineering`, `name` = `Bob`/);

    await closeAllEditors(page);
  });
}
