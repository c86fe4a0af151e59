// Open Resource (issue 15) on server-everything, added to the User settings for the scenario: a
// static Markdown document opens read-only as markdown under the mcp-resource: scheme and is
// subscribed; a template's variable is asked (with the server's completions) and the expanded
// URI opens; server-everything's simulated updates (its toggle-subscriber-updates tool, called
// through Call Tool) reach the open document as mcp-sidecar/resourceUpdated and it shows the new
// text; after a restart of the server the open ones are subscribed again; a blob of a text type
// shows as text; closing the documents unsubscribes them.
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
  statusBarTexts,
  waitEditorText,
  waitFor,
  waitQuickInput,
} from '../lib/workbench.mjs';

export const name = 'Open Resource: server-everything text, a template with its variable, updates while subscribed';
export const timeoutMs = 150000;

const DOC = 'demo://resource/static/document/features.md';
const DYNAMIC = 'demo://resource/dynamic/text/3';

export async function run(ctx) {
  const { page, outputLog, screenshot } = ctx;
  await withEverything(ctx, async () => {
    const before = outputLog().length;
    const logSince = () => outputLog().slice(before);

    // A static Markdown document.
    await runCommand(page, 'MCP Sidecar: Open Resource');
    const list = await waitQuickInput(page, 'MCP Sidecar: Open Resource');
    assert.ok(list.rows.length > 0, 'resources are listed');
    await page.keyboard.type('features.md');
    const row = await waitFor('features.md listed first', async () => {
      const q = await quickInput(page);
      return q?.rows[0]?.label === 'features.md' ? q.rows[0] : null;
    });
    await screenshot('open-resource-pick');
    assert.match(row.aria, /everything · text\/markdown/, `the row names the server and type: ${row.aria}`);
    assert.match(row.aria, /demo:\/\/resource\/static\/document\/features\.md/, 'and the URI');
    await page.keyboard.press('Enter');
    const text = await waitEditorText(page, /# Everything Server - Features/).catch(async (error) => {
      ctx.log(`  notifications: ${JSON.stringify(await notifications(page))}`);
      throw error;
    });
    assert.match(text, /## Tools/);
    assert.match(await activeTabTitle(page), /features\.md/);
    await waitFor('the language mode Markdown', async () => ((await statusBarTexts(page)).includes('Markdown') ? true : null));
    await waitFor('the subscription', async () => (logSince().includes(`resource everything ${DOC}: subscribed`) ? true : null));
    // Read-only: typing changes nothing.
    await page.keyboard.type('xyz');
    assert.doesNotMatch(await editorText(page), /xyz/);
    await screenshot('open-resource-markdown');

    // A template: its variable asked, the URI expanded.
    await runCommand(page, 'MCP Sidecar: Open Resource');
    await waitQuickInput(page, 'MCP Sidecar: Open Resource');
    await pick(page, 'Dynamic Text Resource');
    const variable = await waitQuickInput(page, 'everything: demo://resource/dynamic/text/{resourceId}');
    assert.match(variable.placeholder, /resourceId/);
    assert.ok(variable.hasBack, 'Back returns to the list');
    await page.keyboard.type('3');
    await waitFor('"3" as the first row', async () => ((await quickInput(page))?.rows[0]?.label === '3' ? true : null));
    await page.keyboard.press('Enter');
    const first = await waitEditorText(page, /Resource 3: This is a plaintext resource created at/);
    const firstTime = /created at (.+)$/m.exec(first)[1];
    await waitFor('the template resource subscribed', async () => (logSince().includes(`resource everything ${DYNAMIC}: subscribed`) ? true : null));

    // Updates: server-everything sends notifications/resources/updated for subscribed URIs
    // (now, then every 5 s) once its toggle-subscriber-updates tool is called.
    await callTool(page, 'toggle-subscriber-updates');
    await waitFor('an update of the subscribed resource', async () => (logSince().includes(`resource everything ${DYNAMIC} updated: reading it again`) ? true : null), { timeout: 20000 });
    await runCommand(page, 'View: Close Editor'); // the tool's result; the resource is active again
    await waitFor('the document read again with a new time', async () => {
      const t = /Resource 3: This is a plaintext resource created at (.+)$/m.exec(await editorText(page));
      return t && t[1] !== firstTime ? t[1] : null;
    }, { timeout: 20000 });
    await callTool(page, 'toggle-subscriber-updates'); // off again
    await runCommand(page, 'View: Close Editor');

    // The server restarts: what is still open is subscribed again (and read again).
    const subscribedLine = `resource everything ${DYNAMIC}: subscribed`;
    await runCommand(page, 'MCP Sidecar: Restart Server');
    await waitQuickInput(page, 'Restart which MCP server?');
    await pick(page, 'everything');
    await waitFor('the subscription renewed after the restart', async () => (logSince().split(subscribedLine).length - 1 === 2 ? true : null), { timeout: 30000 });

    // A blob of a text type is shown as its text.
    await runCommand(page, 'MCP Sidecar: Open Resource');
    await waitQuickInput(page, 'MCP Sidecar: Open Resource');
    await pick(page, 'Dynamic Blob Resource');
    await waitQuickInput(page, 'everything: demo://resource/dynamic/blob/{resourceId}');
    await page.keyboard.type('2');
    await waitFor('"2" as the first row', async () => ((await quickInput(page))?.rows[0]?.label === '2' ? true : null));
    await page.keyboard.press('Enter');
    await waitEditorText(page, /Resource 2: This is a base64 blob created at/);

    await closeAllEditors(page);
    await waitFor('both resources unsubscribed', async () => {
      const log = logSince();
      return log.includes(`resource everything ${DOC}: unsubscribed`) && log.includes(`resource everything ${DYNAMIC}: unsubscribed`) ? true : null;
    });
  });
}

async function callTool(page, tool) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/2)');
  await pick(page, 'everything');
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (everything)');
  await pick(page, tool);
  // A tool without arguments may still get the sidecar's review step.
  await waitFor(`the result of ${tool}`, async () => {
    if (new RegExp(`# everything: ${tool}`).test(await editorText(page))) return true;
    const q = await quickInput(page);
    if (q?.rows[0]?.label === `Call ${tool}`) await page.keyboard.press('Enter');
    return null;
  });
}
