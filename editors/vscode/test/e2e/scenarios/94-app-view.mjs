// MCP Apps in a webview (docs/apps.md): the real server-basic-vanillajs, added to the User
// settings for the scenario. Call Tool marks get-time as having a view; calling it opens the
// app's panel beside the result, where the app (in its sandboxed frame inside the webview) shows
// the time of the result; its "Get Server Time" button calls get-time again through the sidecar
// (mcp-sidecar.appRequest) and shows the new time. Open App View lists the view; closing the
// panel closes the view in the sidecar (Open App View then finds none).
import assert from 'node:assert/strict';
import { appFrame, callToolWithView, closePanel, focusWorkbench, waitAppFrame, withAppServer } from '../lib/apps.mjs';
import { notifications, runCommand, waitFor, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'App view: server-basic-vanillajs get-time in a webview panel, its button calls the tool again';
export const timeoutMs = 150000;

const TITLE = 'basic: Get Time'; // the sidecar's title: the server and the tool's title
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export async function run(ctx) {
  const { page, screenshot } = ctx;
  await withAppServer(ctx, 'basic', 'MCP_APP_BASIC_JS', async () => {
    const text = await callToolWithView(ctx, 'basic', 'get-time');
    const resultTime = /\d{4}-\d\d-\d\dT[\d:.]+Z/.exec(text)?.[0];
    assert.ok(resultTime, `the result shows the time: ${text}`);

    // The panel opens beside the result; the app shows the result's time.
    const frame = await waitAppFrame(page, TITLE, '#server-time');
    const first = await waitFor('the app to show the time of the result', async () => {
      const shown = (await frame.textContent('#server-time'))?.trim();
      return shown && ISO_TIME.test(shown) ? shown : null;
    }, { timeout: 30000 });
    assert.equal(first, resultTime, 'the app shows the time of the tool result the editor got');
    // The app runs in an opaque origin: it cannot reach the webview's page.
    assert.equal(await frame.evaluate(() => window.origin), 'null');
    assert.equal(
      await frame.evaluate(() => {
        try {
          return typeof window.parent.acquireVsCodeApi;
        } catch {
          return 'blocked';
        }
      }),
      'blocked',
    );
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
    await focusWorkbench(page);
    await runCommand(page, 'MCP Sidecar: Open App View…');
    const views = await waitQuickInput(page, 'MCP Sidecar: Open App View');
    assert.deepEqual(views.rows.map((r) => r.label), [TITLE]);
    await page.keyboard.press('Enter');
    await waitFor('the app still there', async () => (await appFrame(page, '#server-time')) !== null);

    // Closing the panel closes the view in the sidecar.
    await closePanel(page, TITLE);
    await runCommand(page, 'MCP Sidecar: Open App View…');
    await waitFor('"No app view is open"', async () => (await notifications(page)).some((n) => /No app view is open/.test(n.message)));
  });
}
