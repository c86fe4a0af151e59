// The sidecar's settings object (initializationOptions and didChangeConfiguration) from VS Code's
// settings. Servers keep their scope: {"serverScopes": {"name": "user" | "workspace"}} rides
// beside {"servers": {...}} (workspace-scoped servers will need trust). Pure.

export type ServerScope = 'user' | 'workspace';

export interface Inspected<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export interface ExtensionSettings {
  servers: Inspected<Record<string, unknown>> | undefined;
  samplingProvider: string;
  samplingPolicy: string;
  elicitationPolicy: string;
  formBufferThreshold: number;
}

export interface SidecarSettings {
  servers: Record<string, unknown>;
  serverScopes: Record<string, ServerScope>;
  sampling: { provider: string; policy: string };
  elicitation: { policy: string; formBufferThreshold: number };
}

function objectOrEmpty(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Servers by name, the workspace's definition winning whole over the user's (as VS Code merges
 * object settings), each with the scope its definition came from.
 */
export function serversWithScopes(inspected: Inspected<Record<string, unknown>> | undefined): {
  servers: Record<string, unknown>;
  serverScopes: Record<string, ServerScope>;
} {
  const servers: Record<string, unknown> = {};
  const serverScopes: Record<string, ServerScope> = {};
  const layers: [unknown, ServerScope][] = [
    [inspected?.globalValue, 'user'],
    [inspected?.workspaceValue, 'workspace'],
    [inspected?.workspaceFolderValue, 'workspace'],
  ];
  for (const [value, scope] of layers) {
    for (const [name, definition] of Object.entries(objectOrEmpty(value))) {
      servers[name] = definition;
      serverScopes[name] = scope;
    }
  }
  return { servers, serverScopes };
}

export function sidecarSettings(s: ExtensionSettings): SidecarSettings {
  return {
    ...serversWithScopes(s.servers),
    sampling: { provider: s.samplingProvider, policy: s.samplingPolicy },
    elicitation: { policy: s.elicitationPolicy, formBufferThreshold: s.formBufferThreshold },
  };
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'];

/** The sidecar's command line: LSP over stdio at the chosen log level. */
export function sidecarArgs(logLevel: string | undefined): string[] {
  const level = LOG_LEVELS.includes(logLevel ?? '') ? (logLevel as string) : 'info';
  return ['lsp', '--log-level', level];
}
