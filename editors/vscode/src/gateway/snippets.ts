// Ready configurations for agents that connect to the gateway (docs/gateway.md), from
// `mcp-sidecar.gatewayInfo` and the path of the sidecar binary this editor runs, and the terminal
// environment's description. Pure.

import type { GatewayInfo } from '../contract';

export interface Snippet {
  /** Which agent, and which file it goes into. */
  label: string;
  description: string;
  text: string;
  /** True when the snippet holds the per-session secret (it changes each time the sidecar starts). */
  secret: boolean;
}

/** The server's name in the agents' configurations. */
export const SERVER_NAME = 'workspace';

/** A POSIX shell word: bare when safe, else single-quoted. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** A TOML basic string. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** A YAML scalar: plain when safe, else double-quoted (JSON's escapes are YAML's). */
function yamlScalar(s: string): string {
  return /^[\w./-]+$/.test(s) && !/^(true|false|null|yes|no|on|off|~)$/i.test(s) ? s : JSON.stringify(s);
}

export function gatewaySnippets(info: GatewayInfo, binary: string): Snippet[] {
  const stdio = { command: binary, args: ['gateway'] };
  const mcpServers = JSON.stringify({ mcpServers: { [SERVER_NAME]: stdio } }, null, 2);
  return [
    { label: 'Claude Code: .mcp.json', description: 'project file, stdio through mcp-sidecar gateway', text: mcpServers, secret: false },
    {
      label: 'Claude Code: claude mcp add',
      description: 'a command line for the terminal',
      text: `claude mcp add ${SERVER_NAME} -- ${shellQuote(binary)} gateway`,
      secret: false,
    },
    {
      label: 'Codex CLI: ~/.codex/config.toml',
      description: 'an [mcp_servers] table',
      text: `[mcp_servers.${SERVER_NAME}]\ncommand = ${tomlString(binary)}\nargs = ["gateway"]`,
      secret: false,
    },
    { label: 'gemini-cli: .gemini/settings.json', description: 'mcpServers', text: mcpServers, secret: false },
    {
      label: 'goose: ~/.config/goose/config.yaml',
      description: 'an extension',
      text: `extensions:\n  ${SERVER_NAME}:\n    type: stdio\n    cmd: ${yamlScalar(binary)}\n    args: [gateway]\n    enabled: true`,
      secret: false,
    },
    {
      label: 'Streamable HTTP: URL and headers',
      description: 'for any MCP client; the secret changes each time the sidecar starts',
      text: JSON.stringify({ url: info.url, headers: info.headers }, null, 2),
      secret: true,
    },
  ];
}

/** Why integrated terminals have the gateway's variables (shown by VS Code on the terminal). */
export function terminalEnvDescription(info: GatewayInfo): string {
  const names = Object.keys(info.env).sort().join(', ');
  return `MCP Sidecar: ${names} let agents started here (\`mcp-sidecar gateway\`) use this workspace's MCP servers through the gateway at ${info.url}`;
}
