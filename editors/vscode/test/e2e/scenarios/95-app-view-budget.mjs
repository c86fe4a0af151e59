// MCP Apps in a webview: the real server-budget-allocator (a Chart.js app with inline scripts and
// styles) renders under the view's CSP from the tool's structured result: its categories, the
// $100,000 budget and the chart drawn on its canvas.
import assert from 'node:assert/strict';
import { callToolWithView, closePanel, waitAppFrame, withAppServer } from '../lib/apps.mjs';

export const name = 'App view: server-budget-allocator renders its categories and chart in a webview panel';
export const timeoutMs = 150000;

const TITLE = 'budget: Get Budget Data';

export async function run(ctx) {
  const { page, screenshot } = ctx;
  await withAppServer(ctx, 'budget', 'MCP_APP_BUDGET_JS', async () => {
    await callToolWithView(ctx, 'budget', 'get-budget-data');
    const frame = await waitAppFrame(page, TITLE, '#sliders-container');
    await frame.waitForFunction(
      () =>
        /Marketing/.test(document.querySelector('#sliders-container')?.textContent || '') &&
        /\$100,000/.test(document.querySelector('#status-bar')?.textContent || ''),
      null,
      { timeout: 30000 },
    );
    const painted = await frame.evaluate(() => {
      const c = document.querySelector('#budget-chart');
      if (!c || !c.width || !c.height) return 0;
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    });
    assert.ok(painted > 100, `the chart is drawn (${painted} painted pixels)`);
    await screenshot('app-view-budget');
    await closePanel(page, TITLE);
  });
}
