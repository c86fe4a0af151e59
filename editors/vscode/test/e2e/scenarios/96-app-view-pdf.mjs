// MCP Apps in a webview: the real server-pdf, started with fixtures/apps/sample.pdf (a local file
// given on its command line is one it may read). Call Tool offers display_pdf with a view and none
// of the app's own tools (read_pdf_bytes, …: visibility without "model"); display_pdf of the
// sample (its `url` answered with the file's path) opens the viewer, which reads the PDF's bytes
// with read_pdf_bytes through the sidecar (mcp-sidecar.appRequest) and renders the page with
// pdf.js: the sample's blue band on the canvas and its text in the text layer.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { callToolWithView, closePanel, waitAppFrame, withAppServer } from '../lib/apps.mjs';

export const name = 'App view: server-pdf display_pdf renders the sample PDF in a webview panel';
export const timeoutMs = 150000;

const TITLE = 'pdf: Display PDF';
// The tools whose visibility is the app's only: never offered to the person.
const APP_ONLY = ['read_pdf_bytes', 'submit_page_data', 'submit_save_data', 'submit_viewer_state', 'poll_pdf_commands', 'save_pdf'];

export async function run(ctx) {
  const { page, screenshot } = ctx;
  const pdf = join(ctx.repo, 'fixtures', 'apps', 'sample.pdf');
  await withAppServer(ctx, 'pdf', 'MCP_APP_PDF_JS', async () => {
    const text = await callToolWithView(ctx, 'pdf', 'display_pdf', {
      answers: { url: pdf },
      checkTools: (rows) => {
        const labels = rows.map((r) => r.label);
        assert.ok(labels.includes('list_pdfs'), `the tools without a view are offered: ${labels}`);
        const offered = APP_ONLY.filter((t) => labels.includes(t));
        assert.deepEqual(offered, [], `the app's own tools are not offered: ${labels}`);
      },
    });
    assert.ok(text.includes('sample.pdf'), `the result names the sample: ${text}`);

    // The viewer renders the page from the bytes it read with read_pdf_bytes: the sample's blue
    // band (0.16 0.42 0.74 rg) on the canvas, then its text in the text layer.
    const frame = await waitAppFrame(page, TITLE, '#pdf-canvas');
    const rendered = await frame
      .waitForFunction(() => {
        const c = document.querySelector('#pdf-canvas');
        if (!c || c.width < 100 || c.height < 100) return false;
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let blue = 0;
        for (let i = 0; i < d.length; i += 4) {
          if (Math.abs(d[i] - 41) < 20 && Math.abs(d[i + 1] - 107) < 20 && Math.abs(d[i + 2] - 189) < 20) blue++;
        }
        return blue > 1000;
      }, null, { timeout: 30000 })
      .then(() => true, () => false);
    // When it is not, the viewer says why (a refused worker, a failed read).
    const why = rendered ? '' : await frame.textContent('#error-message').catch(() => '?');
    assert.ok(rendered, `the page is rendered on the canvas; the viewer shows: ${why}`);
    await frame.waitForFunction(
      () => /mcp-sidecar sample PDF/.test(document.querySelector('#text-layer')?.textContent || ''),
      null,
      { timeout: 30000 },
    );
    await screenshot('app-view-pdf');
    await closePanel(page, TITLE);
  }, [pdf]);
}
