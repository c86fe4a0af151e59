// Which servers "Trust Server" and "Revoke Trust for Server" offer. Pure.
//
// Only servers defined by the workspace need trust (its files, or workspace-level settings): the
// sidecar refuses the others. Servers from the person's own VS Code settings (scope "user") are
// never offered for revoking; a server from a file may still be the person's own mcp.json, which
// the sidecar then refuses with its reason.

import type { ServerStatusParams } from '../contract';
import type { ServerScope } from '../settings';
import { EDITOR_SETTINGS } from './serverStates';

export function trustCandidates(
  servers: ServerStatusParams[],
  scopes: Record<string, ServerScope>,
  trusted: boolean,
): ServerStatusParams[] {
  return servers.filter((s) =>
    trusted ? s.state === 'needsTrust' : s.state !== 'needsTrust' && !(s.source === EDITOR_SETTINGS && scopes[s.name] === 'user'),
  );
}
