// The MCP Apps host of mcp-sidecar (docs/apps.md, "The bundle"): ext-apps' AppBridge toward the
// app's iframe, every request and notification of the app handed to the sidecar, which checks and
// answers them. Used by the VS Code webview and by the loopback page, which this file also boots
// when it runs in it (<html data-mcp-sidecar="page">).

import './zod-jitless';
import {
  AppBridge,
  PostMessageTransport,
  type McpUiHostCapabilities,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { ProtocolError, type JSONRPCMessage, type Tool } from '@modelcontextprotocol/client';

declare const __SIDECAR_VERSION__: string;

export interface ViewData {
  server: string;
  tool: Tool;
  arguments?: Record<string, unknown>;
  result?: Record<string, unknown> | null;
  hostContext?: Record<string, unknown>;
}

export interface RpcRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
}

export interface RpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export type RpcAnswer =
  | { result: Record<string, unknown> }
  | { error: { code: number; message: string; data?: unknown } };

export interface StartOptions {
  iframe: HTMLIFrameElement;
  data: ViewData;
  request: (message: RpcRequest) => Promise<RpcAnswer>;
  notify: (message: RpcNotification) => void;
}

export interface View {
  teardown(reason: string): Promise<void>;
}

const HOST_INFO = { name: 'mcp-sidecar', version: __SIDECAR_VERSION__ };

const HOST_CAPABILITIES: McpUiHostCapabilities = {
  openLinks: {},
  serverTools: {},
  serverResources: {},
  logging: {},
  message: { text: {} },
  updateModelContext: { text: {}, structuredContent: {} },
};

const TEARDOWN_TIMEOUT_MS = 3000;
const MIN_HEIGHT = 60;
const MAX_HEIGHT = 4000;

const INITIALIZED = 'ui/notifications/initialized';
const SIZE_CHANGED = 'ui/notifications/size-changed';

// PostMessageTransport posts with the target origin "*"; when the frame was given an http(s)
// URL, only a document of that origin may read what the host sends.
class FrameTransport extends PostMessageTransport {
  constructor(private readonly frame: HTMLIFrameElement) {
    super(frame.contentWindow!, frame.contentWindow!);
  }

  override async send(message: JSONRPCMessage): Promise<void> {
    const target = this.frame.contentWindow;
    if (!target) return;
    target.postMessage(message, frameOrigin(this.frame) ?? '*');
  }
}

function frameOrigin(frame: HTMLIFrameElement): string | undefined {
  try {
    const url = new URL(frame.src);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

function asParams(params: unknown): Record<string, unknown> | undefined {
  return params && typeof params === 'object' ? (params as Record<string, unknown>) : undefined;
}

function notification(method: string, params: unknown): RpcNotification {
  const p = asParams(params);
  return p ? { jsonrpc: '2.0', method, params: p } : { jsonrpc: '2.0', method };
}

function rpcRequest(id: string | number, method: string, params: unknown): RpcRequest {
  const p = asParams(params);
  return p ? { jsonrpc: '2.0', id, method, params: p } : { jsonrpc: '2.0', id, method };
}

async function forward(options: StartOptions, message: RpcRequest): Promise<Record<string, unknown>> {
  const answer = await options.request(message);
  if (answer && typeof answer === 'object') {
    if ('error' in answer && answer.error && typeof answer.error === 'object') {
      const { code, message: text, data } = answer.error;
      throw new ProtocolError(Number.isSafeInteger(code) ? code : -32603, String(text ?? 'Internal error'), data);
    }
    if ('result' in answer && answer.result && typeof answer.result === 'object') return answer.result;
  }
  throw new ProtocolError(-32603, `no answer to ${message.method}`);
}

export function start(options: StartOptions): View {
  const { iframe, data } = options;
  if (!iframe.contentWindow) throw new Error('McpSidecarHost.start: the iframe must be in the document');

  const hostContext: McpUiHostContext = {
    ...(data.hostContext ?? {}),
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    toolInfo: { tool: data.tool },
  };
  const bridge = new AppBridge(null, HOST_INFO, HOST_CAPABILITIES, { hostContext });
  bridge.onerror = (error) => console.warn('[mcp-sidecar] app bridge:', error);

  // ui/initialize and ui/request-display-mode ({mode: "inline"}) are answered by the bridge;
  // every other request, ping included, goes to the sidecar.
  bridge.removeRequestHandler('ping');
  bridge.fallbackRequestHandler = (request) =>
    forward(options, rpcRequest(request.id, request.method, request.params));
  bridge.fallbackNotificationHandler = async (message) => {
    options.notify(notification(message.method, message.params));
  };

  let initialized = false;
  let closed = false;
  bridge.addEventListener('initialized', (params) => {
    options.notify(notification(INITIALIZED, params));
    if (initialized || closed) return;
    initialized = true;
    bridge
      .sendToolInput({ arguments: data.arguments ?? {} })
      .then(() => {
        if (data.result && typeof data.result === 'object' && !closed) {
          return bridge.sendToolResult(data.result as Parameters<AppBridge['sendToolResult']>[0]);
        }
      })
      .catch((error) => console.warn('[mcp-sidecar] app bridge:', error));
  });
  bridge.addEventListener('sizechange', (params) => {
    options.notify(notification(SIZE_CHANGED, params));
    const height = params.height;
    if (typeof height === 'number' && Number.isFinite(height)) {
      iframe.style.height = `${Math.round(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, height)))}px`;
    }
  });

  void bridge.connect(new FrameTransport(iframe)).catch((error) => {
    console.warn('[mcp-sidecar] app bridge:', error);
  });

  return {
    async teardown(reason: string): Promise<void> {
      if (closed) return;
      closed = true;
      if (initialized) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, TEARDOWN_TIMEOUT_MS);
        });
        const answered = bridge
          .teardownResource({ reason }, { timeout: TEARDOWN_TIMEOUT_MS })
          .then(() => undefined)
          .catch(() => undefined);
        await Promise.race([answered, timeout]);
        clearTimeout(timer);
      }
      await bridge.close().catch(() => undefined);
    },
  };
}

// ---- The loopback page (docs/apps.md, "The loopback page") ----

interface PageData extends ViewData {
  appUrl: string;
}

const EVENTS_RETRY_MS = 2000;
const EVENTS_MAX_FAILURES = 5;

function toolTitle(tool: Tool | undefined): string {
  if (!tool || typeof tool !== 'object') return '';
  const title = tool.title ?? tool.annotations?.title ?? tool.name;
  return typeof title === 'string' ? title : '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function bootPage(): Promise<void> {
  // The page is /view/<token>; its endpoints are /view/<token>/….
  const base = location.pathname.replace(/\/?$/, '/');
  const theme = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';

  const header = document.createElement('header');
  const heading = document.createElement('h1');
  const status = document.createElement('p');
  status.className = 'status';
  header.append(heading);
  document.body.append(header, status);
  const show = (line: string) => {
    status.textContent = line;
  };

  let data: PageData;
  try {
    const response = await fetch(`${base}data`, { cache: 'no-store' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    data = (await response.json()) as PageData;
  } catch (error) {
    show(`This view is not available (${error instanceof Error ? error.message : String(error)}).`);
    return;
  }
  const title = toolTitle(data.tool);
  heading.textContent = title ? `${data.server}: ${title}` : String(data.server);
  document.title = heading.textContent;

  let appUrl: URL;
  try {
    appUrl = new URL(data.appUrl, location.href);
    if (appUrl.protocol !== 'http:' && appUrl.protocol !== 'https:') throw new Error(appUrl.protocol);
  } catch {
    show('This view is not available (no app URL).');
    return;
  }

  const post = (message: RpcRequest | RpcNotification) =>
    fetch(`${base}rpc`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(message),
    });

  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  iframe.referrerPolicy = 'no-referrer';
  iframe.title = heading.textContent;
  document.body.append(iframe);

  const view = start({
    iframe,
    data: { ...data, hostContext: { ...(data.hostContext ?? {}), theme } },
    request: async (message) => {
      const response = await post(message);
      if (response.status === 204 || !response.ok) {
        throw new Error(`the sidecar answered ${message.method} with HTTP ${response.status}`);
      }
      return (await response.json()) as RpcAnswer;
    },
    notify: (message) => {
      post(message).catch((error) => console.warn('[mcp-sidecar] notify:', error));
    },
  });
  iframe.src = appUrl.href;

  let closed = false;
  const close = async (reason: string) => {
    if (closed) return;
    closed = true;
    await view.teardown(reason);
    iframe.remove();
    show(`This view was closed: ${reason}`);
  };

  addEventListener('pagehide', () => {
    if (!closed) navigator.sendBeacon(`${base}close`);
  });

  let failures = 0;
  while (!closed) {
    let response: Response;
    try {
      response = await fetch(`${base}events`, { cache: 'no-store' });
    } catch {
      if (++failures >= EVENTS_MAX_FAILURES) {
        await close('the sidecar is not reachable');
        return;
      }
      await sleep(EVENTS_RETRY_MS);
      continue;
    }
    if (response.status === 204) {
      failures = 0;
      continue;
    }
    if (response.status === 200) {
      const event = (await response.json().catch(() => null)) as { teardown?: unknown } | null;
      if (event && typeof event.teardown === 'string') {
        await close(event.teardown);
        return;
      }
    }
    if (response.status === 404 || response.status === 403) {
      await close(response.status === 404 ? 'the view is gone' : 'refused by the sidecar');
      return;
    }
    // Anything else is unexpected: retried a few times, slowly.
    if (++failures >= EVENTS_MAX_FAILURES) {
      await close(`the sidecar answered HTTP ${response.status}`);
      return;
    }
    await sleep(EVENTS_RETRY_MS);
  }
}

const api = { start };
(globalThis as typeof globalThis & { McpSidecarHost: typeof api }).McpSidecarHost = api;

if (typeof document !== 'undefined' && document.documentElement.dataset.mcpSidecar === 'page') {
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', () => void bootPage(), { once: true });
  } else {
    void bootPage();
  }
}
