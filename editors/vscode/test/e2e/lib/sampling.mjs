// Sampling through the drafts: starting the demo's `analyze_flights`, editing a draft by typing,
// and reading a tool result's text back from the editor.

import { editorLines, pick, runCommand, waitActiveTab, waitEditorText, waitFor, waitQuickInput } from './workbench.mjs';

export const REQUEST_TAB = /^(\S+) wants a model answer \[(.+)\]\.md/;
export const ANSWER_TAB = /^Answer for (\S+) \[(.+)\]\.md/;

/** Call Tool → `server` → analyze_flights, until the sampling request draft is on screen. */
export async function callAnalyzeFlights(page, server) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, '(1/2)');
  await pick(page, server);
  await waitQuickInput(page, '(2/2)');
  await pick(page, 'analyze_flights');
  const tab = await waitActiveTab(page, REQUEST_TAB, { timeout: 15000 });
  await waitEditorText(page, /### user[\s\S]*10\. EX999/);
  return tab;
}

/** Clicks the draft's line that contains `text` and puts the cursor at its end. */
export async function clickLineEnd(page, text) {
  await page.locator('.editor-group-container.active .view-lines .view-line', { hasText: text }).first().click();
  await page.keyboard.press('End');
}

/** Changes the end of the line containing `text` by deleting `remove` characters and typing `typed`. */
export async function retypeLineEnd(page, text, remove, typed) {
  await clickLineEnd(page, text);
  for (let i = 0; i < remove; i++) await page.keyboard.press('Backspace');
  await page.keyboard.type(typed);
}

/** The document line (joined across word wrap) that starts with `prefix`, as the editor shows it. */
export async function lineStartingWith(page, prefix) {
  return (await editorLines(page)).find((l) => l.text.startsWith(prefix))?.text;
}

/**
 * The text of a result document's "## Result" section (the blank lines around it dropped), once
 * a result for `server: tool` is on screen.
 */
export async function resultText(page, server, tool) {
  return waitFor(`the result of ${server}: ${tool}`, async () => {
    const lines = (await editorLines(page)).map((l) => l.text);
    if (lines[0] !== `# ${server}: ${tool}`) return null;
    const start = lines.indexOf('## Result');
    if (start < 0) return null;
    let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
    if (end < 0) end = lines.length;
    const body = lines.slice(start + 1, end);
    while (body.length && body[0] === '') body.shift();
    while (body.length && body[body.length - 1] === '') body.pop();
    return { text: body.join('\n'), lines };
  }, { timeout: 15000 });
}
