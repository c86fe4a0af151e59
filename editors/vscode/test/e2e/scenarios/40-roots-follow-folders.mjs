// Adding a folder to the workspace reaches the sidecar (workspace/didChangeWorkspaceFolders): the
// legacy server is told roots/list_changed and sees the new folder; removing it works too.
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { editorText, pick, runCommand, statusBarTexts, waitEditorText, waitFor, waitQuickInput, waitStatusBar } from '../lib/workbench.mjs';

export const name = 'Workspace folders added and removed flow to the servers as roots';

async function listRoots(page) {
  // The workspace-defined legacy server keeps running through folder changes (it is told
  // roots/list_changed); a sidecar that stops it instead is reported as such.
  const status = (await statusBarTexts(page)).find((t) => /^MCP \d/.test(t));
  if (status !== 'MCP 2/2') {
    throw new Error(`a server is not running after the folders changed (status bar "${status}"): legacy, defined in workspace settings, should keep running and be told roots/list_changed`);
  }
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, '(1/2)');
  await pick(page, 'legacy');
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (legacy)');
  await pick(page, 'list_roots');
  return waitEditorText(page, /# legacy: list_roots[\s\S]*listChangedCount/);
}

export async function run({ page, workspace }) {
  try {
    await foldersFlow(page, workspace);
  } finally {
    // Whatever happened, the next scenarios get the two folders and both servers back.
    workspace.setFolders(['alpha', 'beta']);
    await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 });
  }
}

async function foldersFlow(page, workspace) {
  const gamma = pathToFileURL(join(workspace.dir, 'gamma')).href;
  workspace.setFolders(['alpha', 'beta', 'gamma']);
  await waitFor('gamma in the Explorer', () => page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'gamma' }).count());
  // The change is coalesced by the sidecar (150 ms) before servers hear about it.
  let text = '';
  await waitFor('list_roots to include gamma', async () => {
    text = await listRoots(page);
    return text.includes(gamma);
  }, { timeout: 30000, interval: 500 });
  const changed = Number(/"listChangedCount": (\d+)/.exec(text)?.[1]);
  assert.ok(changed >= 1, `the legacy server got roots/list_changed (count ${changed})`);

  workspace.setFolders(['alpha', 'beta']);
  await waitFor('gamma gone from the Explorer', async () => (await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'gamma' }).count()) === 0);
  await waitFor('list_roots without gamma', async () => {
    text = await listRoots(page);
    return !text.includes(gamma) && text.includes(workspace.folders[1].uri);
  }, { timeout: 30000, interval: 500 });
  assert.ok(!(await editorText(page)).includes(gamma));
}
