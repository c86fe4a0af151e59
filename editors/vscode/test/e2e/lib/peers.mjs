// The third-party MCP peers that scripts/install-peers.sh installs (<repo>/.cache/peers/env.sh):
// a variable from the environment, else from that file; and server-everything added to the User
// settings for a scenario.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Skip } from './skip.mjs';
import { waitStatusBar } from './workbench.mjs';

/** `$NAME`, else the value <repo>/.cache/peers/env.sh exports for it. */
export function peer(repo, name) {
  if (process.env[name]) return process.env[name];
  const env = join(repo, '.cache', 'peers', 'env.sh');
  if (!existsSync(env)) return undefined;
  return new RegExp(`^export ${name}='([^']+)'$`, 'm').exec(readFileSync(env, 'utf8'))?.[1];
}

/**
 * Runs `fn` with server-everything (stdio, run by this Node) added to the User settings as
 * `everything`; takes it out again afterwards. Skips when the peers are not installed.
 */
export async function withEverything(ctx, fn) {
  const js = peer(ctx.repo, 'MCP_EVERYTHING_JS');
  if (!js || !existsSync(js)) throw new Skip('no MCP_EVERYTHING_JS (run scripts/install-peers.sh)');
  const servers = ctx.workspace.userSettings['mcpSidecar.servers'];
  await ctx.setUserSetting('mcpSidecar.servers', { ...servers, everything: { command: process.execPath, args: [js, 'stdio'] } });
  try {
    await waitStatusBar(ctx.page, /MCP 3\/3/, { timeout: 30000 });
    await fn();
  } finally {
    await ctx.setUserSetting('mcpSidecar.servers', servers);
    await waitStatusBar(ctx.page, /MCP 2\/2/, { timeout: 30000 }).catch(() => {});
  }
}
