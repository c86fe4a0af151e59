// Open Resource on a template of RFC 6570 levels 3 and 4 (`{/path*}`, `{?q,lang}`; the fixture
// fixtures/node/resource_templates_server.mjs on the TypeScript SDK from the peers, added as
// `notes`): the sidecar names the variables (mcp-sidecar.expandUriTemplate), each is asked in its
// own step (optional: "Leave out" offered while nothing is typed), the sidecar expands the
// answers, and the resource the server reads back is the expanded URI, whose variables the SDK's
// own UriTemplate matches. A malformed template ("Broken") is shown with the sidecar's reason.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { peer } from '../lib/peers.mjs';
import { Skip } from '../lib/skip.mjs';
import { closeAllEditors, notifications, pick, quickInput, runCommand, waitEditorText, waitFor, waitQuickInput, waitQuickInputClosed, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'Open Resource: a level 3 and 4 template asked variable by variable and expanded by the sidecar';
export const timeoutMs = 120000;

const TEMPLATE = 'notes://{owner}/notes{/path*}{?q,lang}';
const URI = 'notes://me/notes/2026%20plans?q=a%26b&lang=en';

export async function run(ctx) {
  const { page, workspace, setUserSetting, screenshot } = ctx;
  const modules = peer(ctx.repo, 'MCP_PEERS_NODE_MODULES');
  if (!modules || !existsSync(join(modules, '@modelcontextprotocol', 'sdk'))) throw new Skip('no MCP_PEERS_NODE_MODULES with the TypeScript SDK (run scripts/install-peers.sh)');
  const servers = workspace.userSettings['mcpSidecar.servers'];
  const fixture = join(ctx.repo, 'fixtures', 'node', 'resource_templates_server.mjs');
  await setUserSetting('mcpSidecar.servers', { ...servers, notes: { command: process.execPath, args: [fixture, modules] } });
  try {
    await waitStatusBar(page, /MCP 3\/3/, { timeout: 30000 });

    await runCommand(page, 'MCP Sidecar: Open Resource');
    await waitQuickInput(page, 'MCP Sidecar: Open Resource');
    await pick(page, 'Notes');
    for (const [variable, value] of [
      ['owner', 'me'],
      ['path', '2026 plans'],
      ['q', 'a&b'],
      ['lang', 'en'],
    ]) {
      const step = await waitFor(`the step asking ${variable}`, async () => {
        const q = await quickInput(page);
        return q?.title.includes(`notes: ${TEMPLATE}`) && q.placeholder.startsWith(`${variable} `) && q.value === '' ? q : null;
      });
      assert.match(step.placeholder, /\(optional\)/, `${variable}: ${step.placeholder}`);
      assert.equal(step.rows[0]?.label, 'Leave out', `${variable} may be left out: ${JSON.stringify(step.rows)}`);
      await page.keyboard.type(value);
      await waitFor(`"${value}" as the first row`, async () => ((await quickInput(page))?.rows[0]?.label === value ? true : null));
      await page.keyboard.press('Enter');
    }
    const text = await waitEditorText(page, new RegExp(`read ${URI.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)).catch(async (error) => {
      ctx.log(`  notifications: ${JSON.stringify(await notifications(page))}`);
      throw error;
    });
    // The SDK's own RFC 6570 reading of the URI the sidecar expanded.
    for (const line of ['owner = me', 'path = 2026 plans', 'q = a&b', 'lang = en']) assert.ok(text.includes(line), `${line} in ${text}`);
    await screenshot('open-resource-template');
    await closeAllEditors(page);

    // A malformed template: the sidecar's reason, nothing asked.
    await runCommand(page, 'MCP Sidecar: Open Resource');
    await waitQuickInput(page, 'MCP Sidecar: Open Resource');
    await pick(page, 'Broken');
    await waitFor('the reason the template is refused', async () =>
      (await notifications(page)).find((n) => n.message.includes('notes: cannot use the resource template: the "{" at character 23 of the URI template is not closed')) ?? null);
    // Nothing is asked: no variable's step opens (the list's pick closes and stays closed).
    await waitQuickInputClosed(page);
  } finally {
    await setUserSetting('mcpSidecar.servers', servers);
    await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 }).catch(() => {});
  }
}
