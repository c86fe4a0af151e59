// URL-mode elicitation (the demo's `login`): the consent prompt shows the URL; Copy URL puts it on
// the clipboard (mcp-sidecar/clipboard) and asks again; Open opens it in the browser
// (window/showDocument external, through VS Code's link protection) and the tool reports the
// sign-in as started.
import assert from 'node:assert/strict';
import { pick, quickInput, runCommand, waitEditorText, waitFor, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'URL elicitation: consent prompt, Copy URL to the clipboard, Open in the browser';

export async function run({ page, screenshot }) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, '(1/2)');
  await pick(page, 'demo');
  await waitQuickInput(page, '(2/2)');
  await pick(page, 'login');

  const consent = await waitQuickInput(page, /^demo: /, { timeout: 15000 });
  const labels = consent.rows.map((r) => r.label);
  const all = `${consent.title}\n${consent.placeholder}\n${consent.message}\n${consent.rows.map((r) => r.aria).join('\n')}`;
  assert.match(all, /https:\/\/example\.com\/login\?session=/, 'the full URL is shown');
  await screenshot('url-elicitation-consent');
  const copy = labels.find((l) => /Copy URL/.test(l));
  const open = labels.find((l) => /^Open/.test(l));
  assert.ok(copy && open, `Open and Copy URL are offered (got ${labels})`);

  await pick(page, copy);
  const copied = await waitFor('the URL on the clipboard', async () => {
    const text = await page.evaluate(() => navigator.clipboard.readText()).catch(() => '');
    return /^https:\/\/example\.com\/login\?session=/.test(text) ? text : null;
  });
  await waitFor('the consent prompt again', async () => {
    const q = await quickInput(page);
    return q && q.rows.some((r) => r.label === open) ? q : null;
  });

  const opened = page.context().waitForEvent('page', { timeout: 15000 });
  await pick(page, open);
  // VS Code's own link protection asks once more for a domain it does not trust yet.
  const confirm = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Open$/ });
  await confirm.waitFor({ timeout: 10000 });
  await screenshot('url-elicitation-vscode-link-protection');
  await confirm.click();
  const tab = await opened;
  await waitFor('the new tab to get its URL', async () => (tab.url() && tab.url() !== 'about:blank' ? tab.url() : null), { timeout: 10000 }).catch(() => {});
  assert.equal(tab.url(), copied, 'the URL opened in the browser is the one shown');
  await tab.close();
  const text = await waitEditorText(page, /Sign-in started in the browser/);
  assert.ok(text.includes(copied));
}
