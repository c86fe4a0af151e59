// Restricted Mode, in a code-server of its own with workspace trust on (the main one runs with
// --disable-workspace-trust): the extension still runs ("untrustedWorkspaces": "limited"), the
// sidecar starts with workspaceTrusted: false, and VS Code keeps the workspace's mcpSidecar.servers
// from it (restrictedConfigurations), so only the User server runs. Trusting the workspace sends
// the settings again: workspaceTrusted: true and the workspace's server.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { freePort, installExtension, prepareProfile, startCodeServer } from '../lib/codeServer.mjs';
import { runCommand, statusBarTexts, waitFor } from '../lib/workbench.mjs';
import { makeWorkspace } from '../lib/workspace.mjs';

export const name = 'Restricted Mode: workspaceTrusted false and no workspace servers; trusting sends them';

export async function run({ browserContext, codeServer, vsix, sidecar, runDir, artifacts, outputLogOf, log }) {
  const dir = join(runDir, 'restricted');
  const workspace = makeWorkspace(join(dir, 'workspace'), sidecar);
  const profile = prepareProfile(join(dir, 'profile'), {
    userSettings: {
      ...workspace.userSettings,
      'security.workspace.trust.enabled': true,
      // Opens the untrusted workspace in Restricted Mode without the modal question.
      'security.workspace.trust.startupPrompt': 'never',
    },
    machineSettings: workspace.machineSettings,
  });
  installExtension(codeServer, profile, vsix);
  const env = { XDG_STATE_HOME: join(dir, 'state'), XDG_CONFIG_HOME: join(dir, 'config') };
  const server = await startCodeServer(codeServer, profile, {
    port: await freePort(),
    logFile: join(artifacts, 'code-server-restricted.log'),
    env,
    workspaceTrust: true,
  });
  const page = await browserContext.newPage();
  try {
    await page.goto(`${server.url}/?workspace=${encodeURIComponent(workspace.file)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    const output = () => outputLogOf(profile.userData);
    const start = await waitFor('the sidecar started in Restricted Mode', async () =>
      output().split('\n').find((l) => l.includes('settings at the sidecar\'s start:')) ?? null, { timeout: 60000, interval: 250 });
    assert.match(start, /: 1 servers, .*workspace trusted: false$/, 'only the User server; the workspace is not trusted');
    await waitFor('the User server running (MCP 1/1)', async () => (await statusBarTexts(page)).some((t) => /MCP 1\/1/.test(t)) || null, { timeout: 30000 });
    await page.screenshot({ path: join(artifacts, 'restricted-mode.png') });

    const before = output().length;
    await runCommand(page, 'Workspaces: Manage Workspace Trust');
    const trust = page.locator('.workspace-trust-editor .workspace-trust-buttons-row .monaco-button', { hasText: /^Trust/ }).first();
    await trust.click();
    // Two events, in either order: trust granted (workspaceTrusted) and the workspace's restricted
    // settings applied (its server). The settings are sent after each; the last has both.
    const sent = await waitFor('the settings sent again once trusted, with the workspace server', async () =>
      output().slice(before).split('\n').find((l) => /settings sent to the sidecar: 2 servers, .*workspace trusted: true$/.test(l)) ?? null,
    { timeout: 20000, interval: 200 });
    const after = output().slice(before);
    assert.ok(!/\[extension\] \S+ starting \//.test(after), `trusting the workspace does not restart the sidecar:\n${after}`);
    log(`  Restricted Mode: "${start.slice(start.indexOf('settings'))}" → "${sent.slice(sent.indexOf('settings'))}"`);
  } catch (error) {
    await page.screenshot({ path: join(artifacts, 'failure-85-restricted-mode-own-window.png') }).catch(() => {});
    throw error;
  } finally {
    await page.close().catch(() => {});
    await server.stop();
  }
}
