// The pure parts of an app view (docs/apps.md): the app's document under its CSP, the webview's
// own page and policy, the messages between the webview and the extension. No vscode import.

import type { AppSummary, JsonRpcMessage } from '../contract';

/** Escapes text for a double-quoted HTML attribute value. */
export function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/'/g, '&#39;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function cspMeta(csp: string): string {
  return `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">`;
}

/** A leading doctype (after a byte order mark or white space), as the HTML tokenizer reads it. */
const DOCTYPE = /^[\uFEFF\s]*<!doctype(?=[\s>])[^>]*>/i;

/**
 * The app's HTML with its CSP as a `<meta>` that the parser puts first in the document's head,
 * before anything of the app. It goes right after a leading doctype (keeping standards mode), else
 * at the very start; it is not put after the app's own `<head>` tag, because finding that tag
 * needs a full tokenizer (comments, quoted attributes holding `>`, scripts before it) and a wrong
 * guess would let the app's first scripts run before the policy. A `<meta>` before `<html>` and
 * `<head>` makes the parser open both; their own tags later only add their attributes.
 */
export function withCsp(html: string, csp: string): string {
  const doctype = DOCTYPE.exec(html);
  const at = doctype ? doctype[0].length : 0;
  return html.slice(0, at) + cspMeta(csp) + html.slice(at);
}

/** A directive of a policy: its lower-case name and its sources. */
function directives(csp: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    // The first of a repeated directive is the one a browser enforces.
    if (name && !out.has(name.toLowerCase())) out.set(name.toLowerCase(), sources);
  }
  return out;
}

/**
 * The policy of the webview's own page. A `srcdoc` frame inherits its parent's policy and the
 * browser enforces both, so the page's policy must allow everything the app's allows: it is the
 * app's, plus the extension's own scripts (`cspSource`: host.js and appView.js). The page holds
 * no markup from the server (the app's HTML reaches it by postMessage and goes into the frame's
 * `srcdoc`), so the app's `'unsafe-inline'` in it has nothing to run. Never `'unsafe-eval'`.
 */
export function webviewCsp(appCsp: string, cspSource: string): string {
  const policy = directives(appCsp);
  const scripts = policy.get('script-src') ?? policy.get('default-src') ?? [];
  policy.set('script-src', [...scripts.filter((s) => s.toLowerCase() !== "'unsafe-eval'"), cspSource]);
  return [...policy].map(([name, sources]) => [name, ...sources].join(' ')).join('; ');
}

/** The webview's page: its policy and the two scripts, nothing of the server's. */
export function webviewHtml(csp: string, scripts: string[]): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    cspMeta(csp),
    '</head>',
    '<body>',
    ...scripts.map((src) => `<script src="${escapeAttribute(src)}"></script>`),
    '</body>',
    '</html>',
  ].join('\n');
}

/** The `theme` of the host context, from VS Code's color theme. */
export function themeOf(light: boolean): 'light' | 'dark' {
  return light ? 'light' : 'dark';
}

/** Webview → extension. */
export type FromView =
  | { type: 'ready' }
  | { type: 'request'; id: number; message: JsonRpcMessage }
  | { type: 'notify'; message: JsonRpcMessage }
  | { type: 'tornDown' };

/** Extension → webview. */
export type ToView =
  | { type: 'open'; html: string; data: AppData }
  | { type: 'answer'; id: number; answer: AppAnswer }
  | { type: 'teardown'; reason: string };

/** What `McpSidecarHost.start` gets as `data`. */
export interface AppData {
  server: string;
  tool: unknown;
  arguments: Record<string, unknown>;
  result: unknown;
  hostContext: Record<string, unknown>;
}

/** What `request` of `McpSidecarHost.start` resolves to. */
export type AppAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A message of the webview, checked; anything else is undefined. */
export function fromView(message: unknown): FromView | undefined {
  if (!isObject(message)) return undefined;
  switch (message.type) {
    case 'ready':
    case 'tornDown':
      return { type: message.type };
    case 'request':
      return Number.isSafeInteger(message.id) && isObject(message.message)
        ? { type: 'request', id: message.id as number, message: message.message as JsonRpcMessage }
        : undefined;
    case 'notify':
      return isObject(message.message) ? { type: 'notify', message: message.message as JsonRpcMessage } : undefined;
    default:
      return undefined;
  }
}

/** The sidecar's JSON-RPC answer (`mcp-sidecar.appRequest`) as the bridge wants it. */
export function appAnswer(answer: unknown): AppAnswer {
  if (isObject(answer) && isObject(answer.error) && typeof answer.error.code === 'number') {
    const { code, message, data } = answer.error;
    return { error: { code, message: typeof message === 'string' ? message : 'error', ...(data === undefined ? {} : { data }) } };
  }
  if (isObject(answer) && 'result' in answer) return { result: answer.result };
  return { error: { code: -32603, message: 'the sidecar gave no answer to the view\'s request' } };
}

/** The answer when the request did not reach the sidecar (it is not running, the command failed). */
export function failedAnswer(error: unknown): AppAnswer {
  const message = (error as { message?: unknown })?.message;
  return { error: { code: -32000, message: typeof message === 'string' ? message : String(error) } };
}

/** A row of "Open App View…". */
export function appPickItem(app: AppSummary): { label: string; description: string; detail?: string } {
  return {
    label: app.title,
    description: `${app.server} · ${app.tool}`,
    detail: app.initialized ? undefined : 'not started yet (the app has not finished its handshake)',
  };
}
