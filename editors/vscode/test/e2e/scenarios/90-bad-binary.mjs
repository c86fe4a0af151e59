// A wrong binary path gives one clear notification naming the path and the fix; removing the
// setting again brings the sidecar back, from the binary the VSIX carries. (Last: it restarts the
// sidecar.)
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { clearNotifications, notifications, waitFor, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'A wrong binary path: one notification with the fix, then recovery';

export async function run({ page, profile, screenshot, outputLog }) {
  await clearNotifications(page);
  const bad = '/nonexistent/mcp-sidecar';
  writeFileSync(profile.machineSettingsFile, JSON.stringify({ 'mcpSidecar.binaryPath': bad }));
  const errors = async () => (await notifications(page)).filter((n) => n.severity === 'error' && /MCP Sidecar/.test(n.message + n.source));
  const [shown] = await waitFor('the error notification', async () => {
    const list = await errors();
    return list.length ? list : null;
  }, { timeout: 30000 });
  await page.waitForTimeout(1000);
  const all = await errors();
  await screenshot('bad-binary-notification');
  assert.equal(all.length, 1, `exactly one notification, got: ${JSON.stringify(all)}`);
  assert.match(shown.message, /\/nonexistent\/mcp-sidecar .*does not exist/);
  assert.match(shown.message, /cargo build/);
  assert.deepEqual(shown.buttons, ['Open Settings', 'Show Log']);
  await waitStatusBar(page, /^MCP$|MCP$/);

  await clearNotifications(page);
  const before = outputLog().length;
  writeFileSync(profile.machineSettingsFile, JSON.stringify({}));
  await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 });
  const restart = outputLog().slice(before).split('\n').find((l) => /\[extension\] \S+ starting \//.test(l)) ?? '';
  assert.match(restart, /\/server\/mcp-sidecar .*binary from bundled/, `the bundled binary after the setting is removed: ${restart}`);
}
