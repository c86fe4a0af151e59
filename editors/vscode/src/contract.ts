// The editor contract, version 1 (docs/lsp-extensions.md): method names, params and results,
// spelled exactly as the sidecar declares them in src/contract/mod.rs. Types only, no behaviour.
// tests/it/contract_docs.rs checks these names against the Rust contract, and that each method has
// a handler (sidecar.ts) and each command is offered (OFFERED_COMMANDS) or listed in NOT_OFFERED.

export const INPUT_BOX = 'mcp-sidecar/inputBox';
export const QUICK_PICK = 'mcp-sidecar/quickPick';
export const EDIT_DRAFT = 'mcp-sidecar/editDraft';
export const CANCEL_PROMPT = 'mcp-sidecar/cancelPrompt';
export const CLIPBOARD = 'mcp-sidecar/clipboard';
export const LANGUAGE_MODEL = 'mcp-sidecar/languageModel';
export const SERVER_STATUS = 'mcp-sidecar/serverStatus';
export const RESOURCE_UPDATED = 'mcp-sidecar/resourceUpdated';
export const OPEN_APP = 'mcp-sidecar/openApp';
export const CLOSE_APP = 'mcp-sidecar/closeApp';
export const TASK_STATUS = 'mcp-sidecar/taskStatus';

export const CMD_LIST_SERVERS = 'mcp-sidecar.listServers';
export const CMD_LIST_TOOLS = 'mcp-sidecar.listTools';
export const CMD_CALL_TOOL = 'mcp-sidecar.callTool';
export const CMD_RESTART_SERVER = 'mcp-sidecar.restartServer';
export const CMD_OPEN_SAMPLING_LOG = 'mcp-sidecar.openSamplingLog';
export const CMD_TRUST_SERVER = 'mcp-sidecar.trustServer';
export const CMD_UNTRUST_SERVER = 'mcp-sidecar.untrustServer';
export const CMD_SIGN_IN = 'mcp-sidecar.signIn';
export const CMD_SIGN_OUT = 'mcp-sidecar.signOut';
export const CMD_LIST_RESOURCES = 'mcp-sidecar.listResources';
export const CMD_LIST_RESOURCE_TEMPLATES = 'mcp-sidecar.listResourceTemplates';
export const CMD_READ_RESOURCE = 'mcp-sidecar.readResource';
export const CMD_SUBSCRIBE_RESOURCE = 'mcp-sidecar.subscribeResource';
export const CMD_UNSUBSCRIBE_RESOURCE = 'mcp-sidecar.unsubscribeResource';
export const CMD_LIST_PROMPTS = 'mcp-sidecar.listPrompts';
export const CMD_GET_PROMPT = 'mcp-sidecar.getPrompt';
export const CMD_COMPLETE = 'mcp-sidecar.complete';
export const CMD_GATEWAY_INFO = 'mcp-sidecar.gatewayInfo';
export const CMD_EXPAND_URI_TEMPLATE = 'mcp-sidecar.expandUriTemplate';
export const CMD_LIST_APPS = 'mcp-sidecar.listApps';
export const CMD_OPEN_APP = 'mcp-sidecar.openApp';
export const CMD_CLOSE_APP = 'mcp-sidecar.closeApp';
export const CMD_APP_REQUEST = 'mcp-sidecar.appRequest';
export const CMD_LIST_TASKS = 'mcp-sidecar.listTasks';
export const CMD_CANCEL_TASK = 'mcp-sidecar.cancelTask';
export const CMD_LIST_SKILLS = 'mcp-sidecar.listSkills';
export const CMD_READ_SKILL = 'mcp-sidecar.readSkill';

/**
 * The extension's commands (package.json) that send each sidecar command. appRequest and closeApp
 * come from an app view's panel, which Call Tool (a tool with a view) and Open App View open.
 */
export const OFFERED_COMMANDS: Record<string, string[]> = {
  [CMD_LIST_SERVERS]: ['mcpSidecar.showServers', 'mcpSidecar.callTool'],
  [CMD_LIST_TOOLS]: ['mcpSidecar.callTool'],
  [CMD_CALL_TOOL]: ['mcpSidecar.callTool'],
  [CMD_RESTART_SERVER]: ['mcpSidecar.restartServer', 'mcpSidecar.showServers'],
  [CMD_OPEN_SAMPLING_LOG]: ['mcpSidecar.openSamplingLog'],
  [CMD_TRUST_SERVER]: ['mcpSidecar.trustServer'],
  [CMD_UNTRUST_SERVER]: ['mcpSidecar.untrustServer'],
  [CMD_SIGN_IN]: ['mcpSidecar.signIn', 'mcpSidecar.showServers'],
  [CMD_SIGN_OUT]: ['mcpSidecar.signOut', 'mcpSidecar.showServers'],
  [CMD_LIST_RESOURCES]: ['mcpSidecar.openResource'],
  [CMD_LIST_RESOURCE_TEMPLATES]: ['mcpSidecar.openResource'],
  [CMD_READ_RESOURCE]: ['mcpSidecar.openResource'],
  [CMD_SUBSCRIBE_RESOURCE]: ['mcpSidecar.openResource'],
  [CMD_UNSUBSCRIBE_RESOURCE]: ['mcpSidecar.openResource'],
  [CMD_LIST_PROMPTS]: ['mcpSidecar.runPrompt'],
  [CMD_GET_PROMPT]: ['mcpSidecar.runPrompt'],
  [CMD_COMPLETE]: ['mcpSidecar.openResource', 'mcpSidecar.runPrompt'],
  [CMD_GATEWAY_INFO]: ['mcpSidecar.copyGatewayConfiguration'],
  [CMD_EXPAND_URI_TEMPLATE]: ['mcpSidecar.openResource'],
  [CMD_LIST_APPS]: ['mcpSidecar.openAppView'],
  [CMD_OPEN_APP]: ['mcpSidecar.openAppView'],
  [CMD_CLOSE_APP]: ['mcpSidecar.callTool', 'mcpSidecar.openAppView'],
  [CMD_APP_REQUEST]: ['mcpSidecar.callTool', 'mcpSidecar.openAppView'],
  [CMD_LIST_TASKS]: ['mcpSidecar.showTasks'],
  [CMD_CANCEL_TASK]: ['mcpSidecar.showTasks'],
  [CMD_LIST_SKILLS]: ['mcpSidecar.browseSkills'],
  [CMD_READ_SKILL]: ['mcpSidecar.browseSkills'],
};

/** Contract methods and commands this extension deliberately leaves out, each with the reason. */
export const NOT_OFFERED: Record<string, string> = {};

/** `capabilities.experimental.mcpSidecar` in `initialize`: what this editor implements. */
export interface EditorCapabilities {
  inputBox: boolean;
  quickPick: boolean;
  editDraft: boolean;
  clipboard: boolean;
  languageModel: boolean;
  /** The settings carry `serverScopes`, so servers without `"workspace"` there are the person's own. */
  serverScopes: boolean;
  /** The editor hosts a server's view itself (`mcp-sidecar/openApp`, docs/apps.md). */
  openApp: boolean;
}

export interface InputBoxParams {
  id: string;
  server?: string;
  title: string;
  prompt?: string;
  placeholder?: string;
  value?: string;
  password?: boolean;
  validationMessage?: string;
  step?: number;
  totalSteps?: number;
  canGoBack?: boolean;
  canSkip?: boolean;
}

export type InputBoxResult = { value: string } | { back: true } | { skip: true } | null;

export interface QuickPickItemParams {
  label: string;
  description?: string;
  detail?: string;
  picked?: boolean;
}

export interface QuickPickParams {
  id: string;
  server?: string;
  title: string;
  placeholder?: string;
  items: QuickPickItemParams[];
  canPickMany?: boolean;
  step?: number;
  totalSteps?: number;
  canGoBack?: boolean;
  /** With canPickMany: an optional field. This editor skips it by confirming nothing checked. */
  canSkip?: boolean;
}

export type QuickPickResult = { selected: number[] } | { back: true } | null;

export type DraftKind = 'samplingRequest' | 'samplingResponse' | 'form' | 'toolArguments';

export interface DraftProblem {
  line: number;
  message: string;
}

export interface EditDraftParams {
  id: string;
  server?: string;
  kind: DraftKind;
  title: string;
  language: string;
  text: string;
  problems?: DraftProblem[];
}

export type EditDraftResult = { action: 'accept'; text: string } | { action: 'reject' } | null;

export interface CancelPromptParams {
  id: string;
}

export interface ClipboardParams {
  text: string;
}

/**
 * `needsAuth`: an http server answered 401 and nobody is signed in; `message` names the sign-in
 * needed and the authorization server's host. Not retried until `mcp-sidecar.signIn`.
 */
export type ServerState = 'starting' | 'running' | 'stopped' | 'failed' | 'needsTrust' | 'needsAuth';

export interface ServerStatusParams {
  name: string;
  /** How to show `name` when it cannot be shown as it is (cleaned by the sidecar); `name` stays exact, for sending back. */
  label?: string;
  state: ServerState;
  protocolVersion?: string;
  source?: string;
  message?: string;
}

export interface ServerSummary extends ServerStatusParams {
  transport: string;
  serverInfo?: { name?: string; version?: string; [key: string]: unknown };
  toolCount: number;
  restarts: number;
  /** The sign-in of an http server that uses OAuth (it asked for one, or a grant is stored). */
  auth?: AuthSummary;
}

/** `auth` of a listServers row: what is known of the server's sign-in. Never a token. */
export interface AuthSummary {
  signedIn: boolean;
  /** The authorization server (its `issuer` URL), when known. */
  issuer?: string;
  /** The scopes granted. */
  scopes?: string[];
  /** When the access token expires, in seconds since the Unix epoch (it is refreshed before). */
  expiresAt?: number;
}

export interface ToolSummary {
  server: string;
  name: string;
  /** How to show `name` when it cannot be shown as it is (cleaned by the sidecar); `name` stays exact, for sending back. */
  label?: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchema;
  /** The tool has a view (MCP Apps). */
  ui?: { resourceUri: string };
}

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
  description?: string;
  title?: string;
  enum?: unknown[];
  items?: JsonSchema;
  [key: string]: unknown;
}

/** `mcp-sidecar.trustServer` / `mcp-sidecar.untrustServer` result. */
export interface TrustServerResult {
  server: string;
  trusted: boolean;
}

/** The argument of the commands on one named server (trustServer, untrustServer, signIn, signOut). */
export interface ServerArgs {
  server: string;
}

/** `mcp-sidecar.signOut` result; `revoked`: the authorization server confirmed the revocation. */
export interface SignOutResult {
  server: string;
  signedOut: boolean;
  revoked: boolean;
}

/** `mcp-sidecar.openSamplingLog` result: the log's path, and whether the editor showed it. */
export interface OpenSamplingLogResult {
  path: string;
  opened: boolean;
}

export interface CallToolArgs {
  server: string;
  tool: string;
  arguments?: Record<string, unknown>;
}

/** MCP content blocks as they appear in a CallToolResult or a sampling message. */
export interface ContentBlock {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
  [key: string]: unknown;
}

export interface CallToolResult {
  content?: ContentBlock[];
  structuredContent?: unknown;
  isError?: boolean;
  [key: string]: unknown;
}

/** `sampling/createMessage` params as the person approved them, plus the chosen `model`. */
export interface LanguageModelParams {
  messages: { role: 'user' | 'assistant'; content: ContentBlock | ContentBlock[] }[];
  systemPrompt?: string;
  maxTokens?: number;
  temperature?: number;
  stopSequences?: string[];
  modelPreferences?: { hints?: { name?: string }[]; [key: string]: unknown };
  model?: string;
  [key: string]: unknown;
}

export interface CreateMessageResult {
  role: 'assistant';
  content: ContentBlock;
  model: string;
  stopReason: string;
}

/** `data.kind` of a command's JSON-RPC error. */
export type CommandErrorKind =
  | 'unknownServer'
  | 'notRunning'
  | 'serverGone'
  | 'timeout'
  | 'serverError'
  | 'protocol'
  | 'refused'
  | 'busy'
  | 'cancelled';

/** `mcp-sidecar.listResources` rows. */
export interface ResourceSummary {
  server: string;
  uri: string;
  name: string;
  /** How to show `name` when it cannot be shown as it is (cleaned by the sidecar); `name` stays exact, for sending back. */
  label?: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

/** `mcp-sidecar.listResourceTemplates` rows (`uriTemplate`: RFC 6570). */
export interface ResourceTemplateSummary {
  server: string;
  uriTemplate: string;
  name: string;
  /** How to show `name` when it cannot be shown as it is (cleaned by the sidecar); `name` stays exact, for sending back. */
  label?: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A variable's value for `mcp-sidecar.expandUriTemplate`: a string, a list, or an object of strings (its members in order). */
export type TemplateValue = string | string[] | Record<string, string>;

/** `mcp-sidecar.expandUriTemplate` argument: an RFC 6570 template and its variables' values (absent: undefined). */
export interface ExpandUriTemplateArgs {
  uriTemplate: string;
  values?: Record<string, TemplateValue>;
}

/** `mcp-sidecar.expandUriTemplate` result: the variables in order of first appearance, each once, and the expanded URI. */
export interface ExpandUriTemplateResult {
  variables: string[];
  uri: string;
}

/** The argument of readResource, subscribeResource and unsubscribeResource. */
export interface ResourceArgs {
  server: string;
  uri: string;
}

/** One item of a ReadResourceResult: `text`, or base64 `blob`. */
export interface ResourceContents {
  uri?: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  [key: string]: unknown;
}

export interface ReadResourceResult {
  contents?: ResourceContents[];
  [key: string]: unknown;
}

/** `mcp-sidecar/resourceUpdated` params. */
export type ResourceUpdatedParams = ResourceArgs;

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

/** `mcp-sidecar.listPrompts` rows. */
export interface PromptSummary {
  server: string;
  name: string;
  /** How to show `name` when it cannot be shown as it is (cleaned by the sidecar); `name` stays exact, for sending back. */
  label?: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
}

export interface GetPromptArgs {
  server: string;
  name: string;
  arguments?: Record<string, string>;
}

export interface PromptMessage {
  role: string;
  content: ContentBlock;
}

export interface GetPromptResult {
  description?: string;
  messages?: PromptMessage[];
  [key: string]: unknown;
}

/** The `ref` of `mcp-sidecar.complete`. */
export type CompletionRef = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };

export interface CompleteArgs {
  server: string;
  ref: CompletionRef;
  argument: { name: string; value: string };
  context?: { arguments: Record<string, string> };
}

export interface CompleteResult {
  completion?: { values?: string[]; total?: number; hasMore?: boolean };
}

/** `mcp-sidecar.gatewayInfo` result. */
export interface GatewayInfo {
  url: string;
  headers: Record<string, string>;
  env: Record<string, string>;
}

/** A tool's definition as the server listed it, `_meta` included. */
export interface ToolDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: JsonSchema;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** `mcp-sidecar/openApp` params: host a server's view (docs/apps.md). */
export interface OpenAppParams {
  view: string;
  server: string;
  tool: ToolDefinition;
  /** What to call the panel (cleaned by the sidecar). */
  title: string;
  /** The app's HTML, as the server sent it. */
  html: string;
  /** The Content-Security-Policy the view runs under (built by the sidecar). */
  csp: string;
  arguments?: Record<string, unknown>;
  result?: CallToolResult;
  hostContext?: Record<string, unknown>;
}

/** `mcp-sidecar/openApp` and `mcp-sidecar.openApp` result. */
export interface OpenAppResult {
  opened: boolean;
}

/** `mcp-sidecar/closeApp` params: the sidecar closed the view. */
export interface CloseAppParams {
  view: string;
  reason?: string;
}

/** The argument of `mcp-sidecar.openApp` and `mcp-sidecar.closeApp`. */
export interface ViewArgs {
  view: string;
}

/** One JSON-RPC request or notification of an app, or the answer to a request. */
export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
  [key: string]: unknown;
}

/** `mcp-sidecar.appRequest` argument. */
export interface AppRequestArgs {
  view: string;
  message: JsonRpcMessage;
}

/** `mcp-sidecar.listApps` rows: the open views. */
export interface AppSummary {
  view: string;
  server: string;
  tool: string;
  title: string;
  /** The view's loopback page. */
  url: string;
  /** The app finished its handshake. */
  initialized: boolean;
  modelContext?: unknown;
  message?: unknown;
}

/** Where a task is; `lost`: the server no longer knows it. */
export type TaskState = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled' | 'lost';

/** `mcp-sidecar/taskStatus` params and the rows of `mcp-sidecar.listTasks`: a tool call a server answered with a task. */
export interface TaskInfo {
  server: string;
  taskId: string;
  tool: string;
  status: TaskState;
  /** The server's latest status message, one line (cleaned by the sidecar). */
  statusMessage?: string;
  /** When the call was made (RFC 3339). */
  startedAt: string;
  /** When the sidecar last saw the task change (RFC 3339). */
  updatedAt: string;
  /** The CallToolResult of a completed task. */
  result?: CallToolResult;
  /** Why the task failed or was lost. */
  error?: string;
}

/** `mcp-sidecar.cancelTask` argument. */
export interface TaskArgs {
  server: string;
  taskId: string;
}

/** One file of a skill's manifest. */
export interface SkillFile {
  uri: string;
  /** `sha256:<64 lowercase hex>`. */
  digest: string;
  size: number;
}

/** A skill named by its server and its SKILL.md URI. */
export interface SkillRef {
  server: string;
  uri: string;
}

/** `mcp-sidecar.listSkills` rows. */
export interface SkillSummary {
  server: string;
  /** The skill's SKILL.md URI: with `server`, what names the skill. */
  uri: string;
  name: string;
  description?: string;
  /** The manifest; absent for a "dynamic" skill, whose files cannot be verified. */
  files?: SkillFile[];
  /** The other skills listed with the same name: both are shown, neither hides the other. */
  sameName?: SkillRef[];
  /** Why the skill cannot be loaded, when it cannot. */
  problem?: string;
}

/** `mcp-sidecar.readSkill` argument: the skill and a file of its manifest (its SKILL.md when absent). */
export interface ReadSkillArgs {
  server: string;
  uri: string;
  file?: string;
}

/** `mcp-sidecar.readSkill` result: one file, checked against the manifest. */
export interface SkillFileContents {
  server: string;
  /** The skill's SKILL.md URI. */
  skill: string;
  uri: string;
  text?: string;
  /** base64, when the bytes are not UTF-8. */
  blob?: string;
  size: number;
  /** The digest the bytes were checked against; absent for a "dynamic" skill. */
  digest?: string;
  /** Whether size and digest (and SKILL.md's frontmatter) matched the manifest; false for a dynamic skill. */
  verified: boolean;
}

/** How a row's `name` is shown: its cleaned `label` when the sidecar sent one. */
export function shownName(row: { name: string; label?: string }): string {
  return row.label ?? row.name;
}

/**
 * Whether the extension lets `window/showDocument` with `external: true` open `uri`: only web
 * addresses (http, https). The sidecar checks first; this is the second line.
 */
export function mayOpenExternal(uri: string): boolean {
  try {
    const scheme = new URL(uri).protocol;
    return scheme === 'https:' || scheme === 'http:';
  } catch {
    return false;
  }
}
