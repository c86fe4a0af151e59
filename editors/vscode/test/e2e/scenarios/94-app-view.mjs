// MCP Apps in a webview (docs/apps.md): the real server-basic-vanillajs, added to the User
// settings for the scenario. Call Tool marks get-time as having a view; calling it opens the
// app's panel beside the result, where the app (in its sandboxed frame inside the webview) shows
// the time of the result; its "Get Server Time" button calls get-time again through the sidecar
// (mcp-sidecar.appRequest) and shows the new time. Open App View lists the view; closing the
// panel closes the view in the sidecar (Open App View then finds none).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { peer } from '../lib/peers.mjs';
import { Skip } from '../lib/skip.mjs';
import { notifications, pick, quickInput, runCommand, waitEditorText, waitFor, waitQuickInput, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'App view: server-basic-vanillajs get-time in a webview panel, its button calls the tool again';
export const timeoutMs = 150000;

const TITLE = 'basic: get-time';
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The frame of the app: the one holding the basic app's #server-time (inside the webview's frames). */
async function appFrame(page) {
  for (const frame of page.frames()) {
    if (await frame.$('#server-time').catch(() => null)) return frame;
  }
  return null;
}

function panelTab(page) {
  return page.locator('.tabs-container .tab', { hasText: TITLE });
}

export async function run(ctx) {
  const { page, screenshot } = ctx;
  const js = peer(ctx.repo, 'MCP_APP_BASIC_JS');
  if (!js || !existsSync(js)) throw new Skip('no MCP_APP_BASIC_JS (server-basic-vanillajs; run scripts/install-peers.sh)');
  const node = peer(ctx.repo, 'MCP_APP_NODE') || process.execPath;
  const servers = ctx.workspace.userSettings['mcpSidecar.servers'];
  await ctx.setUserSetting('mcpSidecar.servers', { ...servers, basic: { command: node, args: [js, '--stdio'] } });
  try {
    await waitStatusBar(page, /MCP 3\/3/, { timeout: 30000 });

    await runCommand(page, 'MCP Sidecar: Call Tool');
    await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/2)');
    await pick(page, 'basic');
    const tools = await waitQuickInput(page, 'MCP Sidecar: Call Tool (basic) (2/2)');
    const row = tools.rows.find((r) => r.label === 'get-time');
    assert.ok(row, `get-time is offered: ${JSON.stringify(tools.rows)}`);
    assert.match(row.aria, /has a view/, `the row says the tool has a view: ${row.aria}`);
    await screenshot('app-view-tool-pick');
    await pick(page, 'get-time');
    // No arguments to ask: a review with Submit may come first, depending on the sidecar.
    const text = await waitFor('the result, after Submit if the sidecar asks', async () => {
      const q = await quickInput(page);
      if (q?.rows.some((r) => r.label === 'Submit')) await pick(page, 'Submit');
      return waitEditorText(page, /# basic: get-time/, { timeout: 500 }).catch(() => null);
    }, { timeout: 30000 });
    const resultTime = /\d{4}-\d\d-\d\dT[\d:.]+Z/.exec(text)?.[0];
    assert.ok(resultTime, `the result shows the time: ${text}`);

    // The panel opens beside the result; the app shows the result's time.
    await waitFor(`a tab "${TITLE}"`, async () => (await panelTab(page).count()) > 0, { timeout: 20000 });
    const first = await waitFor('the app to show the time of the result', async () => {
      const frame = await appFrame(page);
      const shown = (await frame?.textContent('#server-time'))?.trim();
      return shown && ISO_TIME.test(shown) ? shown : null;
    }, { timeout: 30000 });
    assert.equal(first, resultTime, 'the app shows the time of the tool result the editor got');
    const frame = await appFrame(page);
    // The app runs in an opaque origin: it cannot reach the webview's page.
    assert.equal(await frame.evaluate(() => window.origin), 'null');
    assert.equal(await frame.evaluate(() => { try { return typeof window.parent.acquireVsCodeApi; } catch { return 'blocked'; } }), 'blocked');
    await screenshot('app-view-basic-get-time');

    // Its button calls get-time through the sidecar: a new time.
    await frame.click('#get-time-btn');
    const second = await waitFor('the app to show a new time', async () => {
      const shown = (await frame.textContent('#server-time'))?.trim();
      return shown && ISO_TIME.test(shown) && shown !== first ? shown : null;
    }, { timeout: 20000 });
    assert.ok(Date.parse(second) > Date.parse(first), `${second} is later than ${first}`);
    await screenshot('app-view-basic-get-time-again');

    // Open App View lists it (and shows it again).
    await runCommand(page, 'MCP Sidecar: Open App View…');
    const views = await waitQuickInput(page, 'MCP Sidecar: Open App View');
    assert.deepEqual(views.rows.map((r) => r.label), [TITLE]);
    await page.keyboard.press('Enter');
    await waitFor('the app still there', async () => (await appFrame(page)) !== null);

    // Closing the panel closes the view in the sidecar.
    await panelTab(page).first().hover();
    await panelTab(page).first().locator('.tab-actions .action-label').click();
    await waitFor('the panel to close', async () => (await panelTab(page).count()) === 0);
    await runCommand(page, 'MCP Sidecar: Open App View…');
    await waitFor('"No app view is open"', async () => (await notifications(page)).some((n) => /No app view is open/.test(n.message)));
  } finally {
    await ctx.setUserSetting('mcpSidecar.servers', servers);
    await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 }).catch(() => {});
  }
}
