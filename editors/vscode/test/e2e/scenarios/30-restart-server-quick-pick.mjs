// mcp-sidecar.restartServer without a server: the sidecar asks which one through
// mcp-sidecar/quickPick, answered in the real quick pick.
import assert from 'node:assert/strict';
import { pick, runCommand, waitQuickInput, waitQuickInputClosed, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'Restart Server: the sidecar asks which server through the quick pick';

export async function run({ page, screenshot }) {
  await runCommand(page, 'MCP Sidecar: Restart Server');
  const q = await waitQuickInput(page, 'Restart which MCP server?');
  assert.deepEqual(q.rows.map((r) => r.label).sort(), ['demo', 'legacy']);
  assert.ok(q.rows.every((r) => /running/.test(r.aria)), 'each server shows its state');
  await screenshot('sidecar-quick-pick-restart-server');
  await pick(page, 'legacy');
  await waitQuickInputClosed(page);
  await waitStatusBar(page, /Restarting legacy/);
  await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 });
}
