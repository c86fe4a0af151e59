// The sidecar's settings object (initializationOptions and didChangeConfiguration) from VS Code's
// settings. Servers keep their scope: {"serverScopes": {"name": "user" | "workspace"}} rides
// beside {"servers": {...}} (workspace-scoped servers need trust), and {"workspaceTrusted"} says
// whether VS Code trusts the workspace (false: Restricted Mode, nothing workspace-scoped starts).
// Only settings the person set are sent, so the sidecar's defaults and the person's own mcp.json
// still apply. The policies and limits are the person's own: only their global (user or remote)
// value counts, never a workspace's, which a repository could ship. Pure.

export type ServerScope = 'user' | 'workspace';

export interface Inspected<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/** What `WorkspaceConfiguration.inspect` returned for each setting (undefined: not set anywhere). */
export interface ExtensionSettings {
  servers: Inspected<Record<string, unknown>> | undefined;
  samplingProvider?: Inspected<string>;
  /** Default per-server policies, for servers whose definition sets none. */
  samplingPolicy?: Inspected<string>;
  elicitationPolicy?: Inspected<string>;
  elicitationRateLimit?: Inspected<string>;
  elicitationIdleLimit?: Inspected<string>;
  gatewayEnabled?: Inspected<boolean>;
  gatewayQuestions?: Inspected<string>;
  /** `vscode.workspace.isTrusted`. */
  workspaceTrusted: boolean;
}

export interface SidecarSettings {
  servers: Record<string, unknown>;
  serverScopes: Record<string, ServerScope>;
  workspaceTrusted: boolean;
  sampling?: { provider?: string };
  elicitation?: { rateLimit?: string; idleLimit?: string };
  gateway?: { enabled?: boolean; questions?: string };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The person's own value (user or remote settings); a workspace's value is ignored. */
export function userValue<T>(inspected: Inspected<T> | undefined): T | undefined {
  return inspected?.globalValue;
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
    if (!isObject(value)) continue;
    for (const [name, definition] of Object.entries(value)) {
      servers[name] = definition;
      serverScopes[name] = scope;
    }
  }
  return { servers, serverScopes };
}

/** `{..., [feature]: {policy}}` on a definition that sets no policy of its own. */
function withDefaultPolicy(definition: unknown, feature: 'elicitation' | 'sampling', policy: string | undefined): unknown {
  if (!policy || !isObject(definition)) return definition;
  const current = definition[feature];
  if (isObject(current) && current.policy !== undefined) return definition;
  return { ...definition, [feature]: { ...(isObject(current) ? current : {}), policy } };
}

function compact<T extends Record<string, unknown>>(o: T): T | undefined {
  const entries = Object.entries(o).filter(([, v]) => v !== undefined);
  return entries.length ? (Object.fromEntries(entries) as T) : undefined;
}

export function sidecarSettings(s: ExtensionSettings): SidecarSettings {
  const { servers, serverScopes } = serversWithScopes(s.servers);
  const elicitationPolicy = userValue(s.elicitationPolicy);
  const samplingPolicy = userValue(s.samplingPolicy);
  for (const name of Object.keys(servers)) {
    servers[name] = withDefaultPolicy(withDefaultPolicy(servers[name], 'elicitation', elicitationPolicy), 'sampling', samplingPolicy);
  }
  const out: SidecarSettings = { servers, serverScopes, workspaceTrusted: s.workspaceTrusted };
  const sampling = compact({ provider: userValue(s.samplingProvider) });
  const elicitation = compact({ rateLimit: userValue(s.elicitationRateLimit), idleLimit: userValue(s.elicitationIdleLimit) });
  if (sampling) out.sampling = sampling;
  if (elicitation) out.elicitation = elicitation;
  const enabled = userValue(s.gatewayEnabled);
  const gateway = compact({
    enabled: typeof enabled === 'boolean' ? enabled : undefined,
    questions: userValue(s.gatewayQuestions),
  });
  if (gateway) out.gateway = gateway;
  return out;
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'];

/** The sidecar's command line: LSP over stdio at the chosen log level. */
export function sidecarArgs(logLevel: string | undefined): string[] {
  const level = LOG_LEVELS.includes(logLevel ?? '') ? (logLevel as string) : 'info';
  return ['lsp', '--log-level', level];
}
