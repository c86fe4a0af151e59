// Open Resource on blobs (a fixture server on the TypeScript SDK, test/e2e/fixtures): an image/png
// blob opens as an image in a webview panel; an application/octet-stream blob is offered for
// saving ("… is binary (application/octet-stream, 8 bytes)", Save As…), and the save dialog
// writes exactly the decoded bytes.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peer } from '../lib/peers.mjs';
import { Skip } from '../lib/skip.mjs';
import { activeTabTitle, answer, closeAllEditors, notifications, pick, quickInput, runCommand, waitFor, waitQuickInput, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'Open Resource: an image blob in a webview, a binary blob saved byte for byte';
export const timeoutMs = 120000;

const here = dirname(fileURLToPath(import.meta.url));

export async function run(ctx) {
  const { page, workspace, setUserSetting, screenshot } = ctx;
  const modules = peer(ctx.repo, 'MCP_PEERS_NODE_MODULES');
  if (!modules || !existsSync(join(modules, '@modelcontextprotocol', 'sdk'))) throw new Skip('no MCP_PEERS_NODE_MODULES with the TypeScript SDK (run scripts/install-peers.sh)');
  const servers = workspace.userSettings['mcpSidecar.servers'];
  const target = join(workspace.folders[0].path, 'saved-data.bin');
  rmSync(target, { force: true });
  await setUserSetting('mcpSidecar.servers', { ...servers, blobs: { command: process.execPath, args: [join(here, '..', 'fixtures', 'blob-resources-server.mjs'), modules] } });
  try {
    await waitStatusBar(page, /MCP 3\/3/, { timeout: 30000 });

    await runCommand(page, 'MCP Sidecar: Open Resource');
    await waitQuickInput(page, 'MCP Sidecar: Open Resource');
    await pick(page, 'red.png');
    await waitFor('the image panel', async () => (/blobs: red\.png/.test(await activeTabTitle(page)) ? true : null));
    // The picture itself, decoded (2×2), inside the webview's nested frames.
    await waitFor('the decoded image in the webview', async () => {
      for (const frame of page.frames()) {
        const width = await frame.evaluate(() => document.querySelector('img')?.naturalWidth ?? 0).catch(() => 0);
        if (width === 2) return true;
      }
      return null;
    });
    await screenshot('open-resource-image');

    await runCommand(page, 'MCP Sidecar: Open Resource');
    await waitQuickInput(page, 'MCP Sidecar: Open Resource');
    // The image's webview can keep the keyboard while the quick pick opens over it (the typed
    // filter then goes nowhere): give the pick's filter box the focus first.
    await page.locator('.quick-input-widget .quick-input-box input').first().focus();
    await pick(page, 'data.bin');
    await waitFor('the offer to save', async () =>
      (await notifications(page)).find((n) => n.message.includes('blob://fixture/data.bin is binary (application/octet-stream, 8 bytes)') && n.buttons.includes('Save As…')) ?? null);
    await page.locator('.notifications-toasts .notification-toast .monaco-button', { hasText: 'Save As…' }).first().click();
    // code-server's save dialog is a quick input with the proposed path.
    const dialog = await waitFor('the save dialog', async () => {
      const q = await quickInput(page);
      return q && /data\.bin$/.test(q.value) ? q : null;
    });
    assert.match(dialog.value, /alpha\/data\.bin$/, `proposed in the first folder: ${dialog.value}`);
    await answer(page, target);
    await waitFor('the file written', async () => (existsSync(target) && readFileSync(target).length === 8 ? true : null));
    assert.deepEqual([...readFileSync(target)], [0x00, 0xff, 0xfe, 0x10, 0x80, 0x42, 0x00, 0x01]);
    await closeAllEditors(page);
  } finally {
    rmSync(target, { force: true });
    await setUserSetting('mcpSidecar.servers', servers);
    await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 }).catch(() => {});
  }
}
