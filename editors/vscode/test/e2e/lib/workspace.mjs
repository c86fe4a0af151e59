// The multi-root workspace the tests open: folders alpha and beta in a .code-workspace file, a
// demo server in user settings and a legacy-era one in workspace settings (so both scopes and
// both MCP eras are exercised), and the settings that keep the workbench quiet. `sidecar` is the
// demo servers' command only.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export function makeWorkspace(dir, sidecar) {
  const folders = ['alpha', 'beta'].map((name) => {
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, 'README.md'), `# ${name}\n`);
    // The sidecar's roots are file:// URIs without a trailing slash.
    return { name, path, uri: pathToFileURL(path).href };
  });
  const file = join(dir, 'e2e.code-workspace');
  const workspaceSettings = {
    'mcpSidecar.servers': { legacy: { command: sidecar, args: ['demo-server', '--era', 'legacy'] } },
  };
  let current = folders.map((f) => f.name);
  const writeFolders = (names) => {
    current = names;
    writeFileSync(file, JSON.stringify({ folders: names.map((path) => ({ path })), settings: workspaceSettings }, null, 2));
  };
  writeFolders(current);
  return {
    dir,
    file,
    folders,
    /** Rewrites the workspace file with these folder names (VS Code picks the change up). */
    setFolders(names) {
      for (const n of names) mkdirSync(join(dir, n), { recursive: true });
      writeFolders(names);
    },
    /** Sets (or with undefined, removes) a workspace setting; VS Code picks the change up. */
    setSetting(key, value) {
      if (value === undefined) delete workspaceSettings[key];
      else workspaceSettings[key] = value;
      writeFolders(current);
    },
    userSettings: {
      'mcpSidecar.servers': { demo: { command: sidecar, args: ['demo-server'] } },
      'mcpSidecar.log.level': 'debug',
      'workbench.startupEditor': 'none',
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'telemetry.telemetryLevel': 'off',
      'extensions.autoUpdate': false,
      'extensions.autoCheckUpdates': false,
      'extensions.ignoreRecommendations': true,
      'update.mode': 'none',
      'security.workspace.trust.enabled': false,
      'editor.minimap.enabled': false,
      'editor.wordWrap': 'on',
      'git.enabled': false,
    },
    // No mcpSidecar.binaryPath: the extension runs the sidecar its (platform-specific) VSIX carries.
    machineSettings: {},
  };
}
