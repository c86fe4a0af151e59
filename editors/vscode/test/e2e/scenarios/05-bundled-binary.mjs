// The VSIX is platform-specific and carries the sidecar: with no mcpSidecar.binaryPath set (the
// run's Machine settings are empty), the extension starts <extension>/server/mcp-sidecar, the
// very binary `npm run package` put in (MCP_SIDECAR_BIN for the test run).
import assert from 'node:assert/strict';
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../lib/workbench.mjs';

export const name = 'No binaryPath: the extension starts the sidecar its VSIX carries';

export async function run({ profile, sidecar, outputLog }) {
  const settings = JSON.parse(readFileSync(profile.machineSettingsFile, 'utf8'));
  assert.equal(settings['mcpSidecar.binaryPath'], undefined, 'the run sets no binaryPath');
  const installed = readdirSync(profile.extensions).filter((d) => /^mcp-sidecar\.mcp-sidecar-\d+\.\d+\.\d+/.test(d));
  assert.equal(installed.length, 1, `the extension is installed once: ${readdirSync(profile.extensions)}`);
  const manifest = readFileSync(join(profile.extensions, installed[0], '.vsixmanifest'), 'utf8');
  assert.match(manifest, /TargetPlatform="linux-x64"/, 'the VSIX is the linux-x64 one');
  const bundled = join(profile.extensions, installed[0], 'server', 'mcp-sidecar');
  accessSync(bundled, constants.X_OK); // still executable after VS Code unpacked the VSIX
  assert.equal(statSync(bundled).size, statSync(sidecar).size, 'the bundled binary is the one packaged');
  const line = await waitFor('the start line in the output channel', async () =>
    outputLog().split('\n').find((l) => /\[extension\] \S+ starting \//.test(l)) ?? null);
  assert.ok(line.includes(`starting ${bundled} `), `started the bundled binary: ${line}`);
  assert.match(line, /binary from bundled/);
}
