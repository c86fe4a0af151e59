// The servers' states as the sidecar reports them (mcp-sidecar/serverStatus, listServers), and
// the status bar's text for them. Pure.

import type { ServerState, ServerStatusParams } from '../contract';

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

  get(name: string): ServerStatusParams | undefined {
    return this.map.get(name);
  }
}

function pick(s: ServerStatusParams): ServerStatusParams {
  return { name: s.name, state: s.state, protocolVersion: s.protocolVersion, source: s.source, message: s.message };
}

export const STATE_ICONS: Record<ServerState, string> = {
  starting: '$(sync~spin)',
  running: '$(pass-filled)',
  stopped: '$(circle-slash)',
  failed: '$(error)',
  needsTrust: '$(shield)',
};

export interface StatusBarView {
  text: string;
  tooltip: string;
  severity: 'ok' | 'warning' | 'error';
}

export function describeServer(s: ServerStatusParams): string {
  const parts = [`${s.name}: ${s.state}`];
  if (s.protocolVersion) parts.push(`(${s.protocolVersion})`);
  if (s.message) parts.push(`— ${s.message}`);
  return parts.join(' ');
}

export function statusBarView(sidecar: SidecarState, servers: ServerStatusParams[]): StatusBarView {
  if (sidecar === 'starting') return { text: '$(sync~spin) MCP', tooltip: 'MCP Sidecar is starting', severity: 'ok' };
  if (sidecar === 'failed') {
    return { text: '$(error) MCP', tooltip: 'MCP Sidecar is not running. Click for the log and actions.', severity: 'error' };
  }
  if (sidecar === 'stopped') return { text: '$(circle-slash) MCP', tooltip: 'MCP Sidecar is stopped', severity: 'ok' };
  const total = servers.length;
  if (total === 0) {
    return { text: '$(server) MCP: no servers', tooltip: 'No MCP servers configured ("mcpSidecar.servers")', severity: 'ok' };
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
  const tooltip = ['MCP servers (click for actions)', ...servers.map(describeServer)].join('\n');
  return { text: `${icon} MCP ${running}/${total}`, tooltip, severity: failed > 0 ? 'warning' : 'ok' };
}
