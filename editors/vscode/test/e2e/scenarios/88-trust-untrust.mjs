// "MCP Sidecar: Revoke Trust for Server" (mcp-sidecar.untrustServer) stops the workspace-defined
// legacy server at once and records "don't trust"; "MCP Sidecar: Trust Server"
// (mcp-sidecar.trustServer) starts it again. The user-scoped demo server is never offered.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pick, runCommand, waitQuickInput, waitQuickInputClosed, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'Trust Server / Revoke Trust for Server: the workspace server stops and starts again';

const decision = (runDir, server) => {
  const all = JSON.parse(readFileSync(join(runDir, 'state', 'mcp-sidecar', 'trust.json'), 'utf8'));
  return all.find((d) => d.server === server)?.trusted;
};

export async function run({ page, runDir, screenshot }) {
  await waitStatusBar(page, /MCP 2\/2/);
  await runCommand(page, 'MCP Sidecar: Revoke Trust for Server');
  let q = await waitQuickInput(page, 'Revoke the trust of which MCP server?');
  assert.deepEqual(q.rows.map((r) => r.label), ['legacy'], 'only the workspace-defined server is offered');
  await pick(page, 'legacy');
  await waitQuickInputClosed(page);
  await waitStatusBar(page, /legacy is no longer trusted/);
  await waitStatusBar(page, /MCP 1\/2/, { timeout: 30000 });
  assert.equal(decision(runDir, 'legacy'), false, '"don\'t trust" is recorded');
  await screenshot('untrusted-server');

  await runCommand(page, 'MCP Sidecar: Trust Server');
  q = await waitQuickInput(page, 'Trust which MCP server?');
  assert.deepEqual(q.rows.map((r) => r.label), ['legacy'], 'the server waiting for trust is offered');
  assert.match(q.rows[0].aria, /needsTrust/);
  await pick(page, 'legacy');
  await waitQuickInputClosed(page);
  await waitStatusBar(page, /Trusted legacy/);
  await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 });
  assert.equal(decision(runDir, 'legacy'), true, 'the trust is recorded again');
}
