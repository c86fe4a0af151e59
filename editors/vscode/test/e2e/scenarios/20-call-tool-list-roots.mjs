// Both workspace folders reach the servers as roots (multi-root): list_roots on the legacy server
// (a real roots/list request from it) shows both folder URIs.
import assert from 'node:assert/strict';
import { pick, runCommand, waitEditorText, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'Call Tool: list_roots shows both workspace folders';

export async function run({ page, workspace }) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, '(1/2)');
  await pick(page, 'legacy');
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (legacy)');
  await pick(page, 'list_roots');
  const [alpha, beta] = workspace.folders;
  const text = await waitEditorText(page, new RegExp(escape(beta.uri)));
  assert.match(text, /# legacy: list_roots/);
  assert.match(text, new RegExp(`"uri": "${escape(alpha.uri)}"`));
  assert.match(text, new RegExp(`"uri": "${escape(beta.uri)}"`));
}

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
