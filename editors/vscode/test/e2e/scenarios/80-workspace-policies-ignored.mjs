// The policies are the person's own: a workspace that sets mcpSidecar.sampling.provider,
// sampling.policy and elicitation.policy changes nothing the sidecar gets, while the same
// setting in the User settings does. Every settings object also says workspaceTrusted (true
// here: the harness runs code-server with --disable-workspace-trust).
import assert from 'node:assert/strict';
import { waitFor } from '../lib/workbench.mjs';

export const name = 'A workspace cannot set the sampling provider or the policies; the User settings can';

const MARKER = 'e2e-workspace-policies';
const WORKSPACE_KEYS = {
  'mcpSidecar.sampling.provider': 'editor',
  'mcpSidecar.sampling.policy': 'auto',
  'mcpSidecar.elicitation.policy': 'acceptDefaults',
  // Visible in the page title once VS Code has read the workspace file: the point after which
  // the extension has seen these workspace values too.
  'window.title': MARKER,
};

const sentLines = (log) => log.split('\n').filter((l) => l.includes('settings sent to the sidecar:'));

export async function run({ page, workspace, setUserSetting, outputLog }) {
  const before = outputLog().length;
  try {
    for (const [key, value] of Object.entries(WORKSPACE_KEYS)) workspace.setSetting(key, value);
    await waitFor('VS Code to read the workspace settings', async () => (await page.title()).includes(MARKER) || null, { timeout: 15000 });

    // Were the workspace's provider used, the sidecar would already have "editor" and this User
    // value would not be sent at all.
    await setUserSetting('mcpSidecar.sampling.provider', 'manual');
    const [line] = await waitFor('the User sampling provider sent to the sidecar', async () => {
      const lines = sentLines(outputLog().slice(before)).filter((l) => l.includes('sampling provider manual'));
      return lines.length ? lines : null;
    }, { timeout: 15000, interval: 200 });
    assert.match(line, /workspace trusted: true/);
    const sent = sentLines(outputLog().slice(before));
    assert.ok(!sent.some((l) => l.includes('sampling provider editor')), `the workspace's provider was never sent: ${sent.join('\n')}`);
  } finally {
    const cleanup = outputLog().length;
    for (const key of Object.keys(WORKSPACE_KEYS)) workspace.setSetting(key, undefined);
    await setUserSetting('mcpSidecar.sampling.provider', undefined);
    await waitFor('the sampling provider unset again', async () =>
      sentLines(outputLog().slice(cleanup)).some((l) => l.includes('sampling provider (not set)')) || null, { timeout: 15000, interval: 200 }).catch(() => {});
  }
}
