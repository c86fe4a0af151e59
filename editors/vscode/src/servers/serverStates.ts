// The servers' states as the sidecar reports them (mcp-sidecar/serverStatus, listServers), and
// the status bar's text for them. Pure.

import { shownName, type ServerState, type ServerStatusParams } from '../contract';

/** The `source` of a server the editor's settings define. */
export const EDITOR_SETTINGS = 'editor settings';

export type SidecarState = 'starting' | 'running' | 'stopped' | 'failed';

export class ServerStates {
  private map = new Map<string, ServerStatusParams>();

  replaceAll(list: ServerStatusParams[]): void {
    this.map.clear();
    for (const s of list) this.map.set(s.name, pick(s));
  }

  update(s: ServerStatusParams): void {
    this.map.set(s.name, pick(s));
  }

  clear(): void {
    this.map.clear();
  }

  all(): ServerStatusParams[] {
    return [...this.map.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Forgets the servers from the editor's settings that are no longer among `names` (the
   * settings just sent): the sidecar stops them without a word. Returns whether any went.
   */
  forgetRemovedSettingsServers(names: string[]): boolean {
    const keep = new Set(names);
    const gone = [...this.map.values()].filter((s) => s.source === EDITOR_SETTINGS && !keep.has(s.name));
    for (const s of gone) this.map.delete(s.name);
    return gone.length > 0;
  }

  get(name: string): ServerStatusParams | undefined {
    return this.map.get(name);
  }
}

function pick(s: ServerStatusParams): ServerStatusParams {
  return { name: s.name, label: s.label, state: s.state, protocolVersion: s.protocolVersion, source: s.source, message: s.message };
}

export const STATE_ICONS: Record<ServerState, string> = {
  starting: '$(sync~spin)',
  running: '$(pass-filled)',
  stopped: '$(circle-slash)',
  failed: '$(error)',
  needsTrust: '$(shield)',
  needsAuth: '$(key)',
};

export interface StatusBarView {
  text: string;
  tooltip: string;
  severity: 'ok' | 'warning' | 'error';
  /** What a click runs: the server list, unless a server needs a sign-in (then Sign In). */
  command: { id: string; args: string[] };
}

const SHOW_SERVERS = { id: 'mcpSidecar.showServers', args: [] };

export function describeServer(s: ServerStatusParams): string {
  const parts = [`${shownName(s)}: ${s.state}`];
  if (s.protocolVersion) parts.push(`(${s.protocolVersion})`);
  if (s.message) parts.push(`— ${s.message}`);
  return parts.join(' ');
}

export function statusBarView(sidecar: SidecarState, servers: ServerStatusParams[]): StatusBarView {
  const view = (text: string, tooltip: string, severity: StatusBarView['severity'] = 'ok'): StatusBarView => ({
    text,
    tooltip,
    severity,
    command: SHOW_SERVERS,
  });
  if (sidecar === 'starting') return view('$(sync~spin) MCP', 'MCP Sidecar is starting');
  if (sidecar === 'failed') return view('$(error) MCP', 'MCP Sidecar is not running. Click for the log and actions.', 'error');
  if (sidecar === 'stopped') return view('$(circle-slash) MCP', 'MCP Sidecar is stopped');
  const total = servers.length;
  if (total === 0) return view('$(server) MCP: no servers', 'No MCP servers configured ("mcpSidecar.servers")');
  const list = servers.map(describeServer).join('\n');
  // A server waiting for a sign-in waits for the person: say so, and a click signs in.
  const needAuth = servers.filter((s) => s.state === 'needsAuth');
  if (needAuth.length > 0) {
    const one = needAuth.length === 1;
    const shown = one ? shownName(needAuth[0]) : '';
    return {
      text: one ? `$(key) MCP: ${shown} needs sign-in` : `$(key) MCP: ${needAuth.length} servers need sign-in`,
      tooltip: `MCP servers\n${list}\n\nClick to sign in${one ? ` to ${shown}` : ''}.`,
      severity: 'warning',
      command: { id: 'mcpSidecar.signIn', args: one ? [needAuth[0].name] : [] },
    };
  }
  const count = (state: ServerState) => servers.filter((s) => s.state === state).length;
  const running = count('running');
  const failed = count('failed');
  const icon =
    count('starting') > 0
      ? '$(sync~spin)'
      : failed > 0
        ? '$(warning)'
        : count('needsTrust') > 0
          ? '$(shield)'
          : '$(server)';
  return view(`${icon} MCP ${running}/${total}`, `MCP servers (click for actions)\n${list}`, failed > 0 ? 'warning' : 'ok');
}
