// The script of an app view's webview page (bundled to dist/appView.js): creates the app's
// sandboxed frame, starts McpSidecarHost (dist/host.js, the AppBridge bundle) on it before it
// loads, and carries the app's messages to the extension, which sends them to the sidecar
// (mcp-sidecar.appRequest). The app's frame has an opaque origin: it reaches neither this page
// nor acquireVsCodeApi; only the bridge talks to it.

import type { AppAnswer, FromView, ToView } from '../appModel';

interface HostHandle {
  teardown(reason: string): Promise<void>;
}

declare const acquireVsCodeApi: () => { postMessage(message: FromView): void };
declare const McpSidecarHost: {
  start(options: {
    iframe: HTMLIFrameElement;
    data: unknown;
    request: (message: unknown) => Promise<AppAnswer>;
    notify: (message: unknown) => void;
  }): HostHandle;
};

const extension = acquireVsCodeApi();
const pending = new Map<number, (answer: AppAnswer) => void>();
let nextId = 1;
let frame: HTMLIFrameElement | undefined;
let host: HostHandle | undefined;

for (const style of [document.documentElement.style, document.body.style]) {
  style.margin = '0';
  style.padding = '0';
  style.height = '100%';
  style.overflow = 'hidden';
}

function open(html: string, data: unknown): void {
  if (frame) return; // one app per page; a second 'open' (a reload of the page) is a new page
  const iframe = document.createElement('iframe');
  // No allow-same-origin: the app runs in an opaque origin of its own.
  iframe.setAttribute('sandbox', 'allow-scripts allow-forms');
  iframe.setAttribute('title', document.title || 'MCP app');
  Object.assign(iframe.style, { border: '0', width: '100%', height: '100%', display: 'block' });
  document.body.appendChild(iframe);
  frame = iframe;
  host = McpSidecarHost.start({
    iframe,
    data,
    request: (message) =>
      new Promise<AppAnswer>((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        extension.postMessage({ type: 'request', id, message: message as never });
      }),
    notify: (message) => extension.postMessage({ type: 'notify', message: message as never }),
  });
  // After start(): the bridge listens before the app's first message.
  iframe.srcdoc = html;
}

async function teardown(reason: string): Promise<void> {
  try {
    await host?.teardown(reason);
  } finally {
    extension.postMessage({ type: 'tornDown' });
  }
}

window.addEventListener('message', (event: MessageEvent) => {
  // Only VS Code's host frame (this page's origin; VS Code hides it from window.parent) speaks
  // for the extension. The app's messages (origin "null") and its frames' are the bridge's.
  if (event.origin !== window.origin || (frame && event.source === frame.contentWindow)) return;
  const message = event.data as ToView;
  switch (message?.type) {
    case 'open':
      open(message.html, message.data);
      break;
    case 'answer':
      pending.get(message.id)?.(message.answer);
      pending.delete(message.id);
      break;
    case 'teardown':
      void teardown(message.reason);
      break;
  }
});

extension.postMessage({ type: 'ready' });
