// Skills (the Skills extension) of the demo server: "Browse Skills" lists each skill with its
// server (a skill that shares its name with another server's is marked, never left out); its
// SKILL.md and its template open as read-only documents whose code lens says where they came
// from and that the sidecar verified them against the manifest; Copy Path (the action, and the
// lens) copies the skill's URI.
import assert from 'node:assert/strict';
import { closeAllEditors, editorText, pick, quickInput, runCommand, waitEditorText, waitFor, waitQuickInput, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'Skills: browse per server, open SKILL.md and a file verified read-only, Copy Path';

/** Opens Browse Skills and accepts the row of `skill` of the demo server; returns the list shown. */
async function chooseSkill(page, skill) {
  await runCommand(page, 'MCP Sidecar: Browse Skills');
  const list = await waitQuickInput(page, 'MCP Skills');
  await page.keyboard.type(skill);
  await waitFor(`${skill} of demo focused`, async () => {
    const q = await quickInput(page);
    const focused = q?.rows.find((r) => r.focused);
    // A row's aria label is "label, description, detail"; the description starts with the server.
    if (focused && focused.aria.includes(skill) && (focused.aria.split(', ')[1] ?? '').startsWith('demo')) return true;
    await page.keyboard.press('ArrowDown');
    return null;
  });
  await page.keyboard.press('Enter');
  return list;
}

/** The code lenses of the active editor, as text. */
function lenses(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.editor-group-container.active .codelens-decoration')].map((l) => (l.textContent ?? '').replace(/\u00a0/g, ' ').trim()),
  );
}

export async function run({ page, screenshot }) {
  const list = await chooseSkill(page, 'flight-report');
  const rows = list.rows.map((r) => r.aria);
  assert.ok(rows.some((r) => r.includes('flight-report') && r.includes('demo')), `demo's flight-report is listed: ${rows.join(' | ')}`);
  assert.ok(rows.some((r) => r.includes('trip-checklist')), 'and trip-checklist');
  // The legacy-era demo of the workspace serves the same skills when the sidecar lists them there:
  // then each is marked, neither hidden.
  const twins = rows.filter((r) => r.includes('flight-report'));
  if (twins.length > 1) for (const r of twins) assert.match(r, /same name as/);

  const actions = await waitQuickInput(page, 'demo: flight-report');
  assert.deepEqual(actions.rows.map((r) => r.label), ['Open SKILL.md', 'Open a File…', 'Copy Path']);
  await pick(page, 'Open SKILL.md');
  await waitEditorText(page, /# Flight report/);
  const lens = await waitFor('the provenance lens', async () => {
    const all = await lenses(page);
    return all.some((l) => /demo · verified sha256:[0-9a-f]{8}…[0-9a-f]{7}/.test(l)) ? all : null;
  });
  assert.ok(lens.some((l) => /Copy Path/.test(l)), `a Copy Path lens: ${lens.join(' | ')}`);
  await screenshot('skill-open');
  // Read-only: typing changes nothing.
  await page.keyboard.type('xyz');
  assert.doesNotMatch(await editorText(page), /xyz/);
  // The lens copies the skill's path.
  await page.locator('.editor-group-container.active .codelens-decoration a', { hasText: 'Copy Path' }).first().click();
  await waitStatusBar(page, /Copied skill:\/\/flight-report\/SKILL\.md/);

  // Another file of its manifest.
  await chooseSkill(page, 'flight-report');
  await waitQuickInput(page, 'demo: flight-report');
  await pick(page, 'Open a File…');
  await waitQuickInput(page, 'demo: flight-report');
  await pick(page, 'templates/report.md');
  await waitFor('the template with its lens', async () => {
    const all = await lenses(page);
    return all.some((l) => /demo · verified/.test(l)) && /report/i.test(await editorText(page)) ? true : null;
  });

  // Copy Path from the list.
  await chooseSkill(page, 'trip-checklist');
  await waitQuickInput(page, 'demo: trip-checklist');
  await pick(page, 'Copy Path');
  await waitStatusBar(page, /Copied skill:\/\/trip-checklist\/SKILL\.md/);
  await closeAllEditors(page);
}
