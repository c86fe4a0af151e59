// What run.mjs and bench.mjs share: a scripted editor (LSP over the sidecar's stdio, without the
// `openApp` capability, so views open through `window/showDocument`), the Apps servers' settings,
// and headless Chromium.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/lib/chromium.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const OUT = path.join(ROOT, 'target', 'apps');

// A prompt or a wait that takes longer than this fails the run.
export const TIMEOUT_MS = 30_000;

export function need(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set (build with cargo build, then: . .cache/peers/env.sh)`);
    process.exit(2);
  }
  return value;
}

// The servers under test, as an editor's settings define them.
export function appServers() {
  const node = need('MCP_APP_NODE');
  return {
    basic: { command: node, args: [need('MCP_APP_BASIC_JS'), '--stdio'] },
    budget: { command: node, args: [need('MCP_APP_BUDGET_JS'), '--stdio'] },
    // A local file given on the command line is one the server may read.
    pdf: { command: node, args: [need('MCP_APP_PDF_JS'), '--stdio', samplePdf()] },
    hostile: {
      command: process.execPath,
      args: [path.join(ROOT, 'fixtures/node/hostile_app_server.mjs'), need('MCP_PEERS_NODE_MODULES')],
    },
  };
}

export function samplePdf() {
  return path.join(ROOT, 'fixtures/apps/sample.pdf');
}

// One JSON-RPC connection with Content-Length framing over a child's stdio.
export class Lsp {
  constructor(child) {
    this.child = child;
    this.nextId = 1;
    this.pending = new Map();
    this.handlers = new Map();
    this.events = []; // {kind: 'notification' | 'request', method, params, at}
    this.waiters = new Set();
    let buffer = Buffer.alloc(0);
    child.stdout.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const header = buffer.subarray(0, end).toString('ascii');
        const match = /content-length:\s*(\d+)/i.exec(header);
        if (!match) throw new Error(`bad LSP header: ${header}`);
        const length = Number(match[1]);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
        buffer = buffer.subarray(end + 4 + length);
        this.receive(JSON.parse(body));
      }
    });
    child.on('exit', (code, signal) => {
      this.exited = { code, signal };
      for (const { reject } of this.pending.values()) reject(new Error(`the sidecar exited (${code ?? signal})`));
      this.pending.clear();
      this.wake();
    });
  }

  receive(msg) {
    if (msg.method === undefined) {
      const waiting = this.pending.get(msg.id);
      if (!waiting) return;
      this.pending.delete(msg.id);
      if (msg.error) {
        const error = new Error(`${waiting.method}: ${msg.error.code} ${msg.error.message}`);
        error.rpc = msg.error;
        waiting.reject(error);
      } else {
        waiting.resolve(msg.result);
      }
      return;
    }
    this.events.push({ kind: msg.id === undefined ? 'notification' : 'request', method: msg.method, params: msg.params, at: performance.now() });
    if (msg.id !== undefined) {
      const handler = this.handlers.get(msg.method);
      Promise.resolve(handler ? handler(msg.params) : null).then(
        (result) => this.send({ jsonrpc: '2.0', id: msg.id, result: result ?? null }),
        (e) => this.send({ jsonrpc: '2.0', id: msg.id, error: { code: -32603, message: String(e) } }),
      );
    }
    this.wake();
  }

  wake() {
    for (const waiter of [...this.waiters]) waiter();
  }

  send(msg) {
    const body = Buffer.from(JSON.stringify(msg), 'utf8');
    this.child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  onRequest(method, handler) {
    this.handlers.set(method, handler);
  }

  request(method, params, timeoutMs = TIMEOUT_MS) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        method,
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method, params) {
    this.send({ jsonrpc: '2.0', method, params });
  }

  command(command, argument, timeoutMs) {
    return this.request('workspace/executeCommand', { command, arguments: argument === undefined ? [] : [argument] }, timeoutMs);
  }

  // The first event from `from` on (an index into this.events) that `match` accepts.
  waitEvent(what, match, from = 0, timeoutMs = TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const check = () => {
        for (let i = from; i < this.events.length; i++) {
          if (match(this.events[i])) {
            done();
            resolve(this.events[i]);
            return;
          }
        }
        if (this.exited) {
          done();
          reject(new Error(`${what}: the sidecar exited (${this.exited.code ?? this.exited.signal})`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${what}: not seen within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }
}

// Starts the built sidecar as an editor without `openApp` would, with `servers` in its settings
// (all of the person's own: no trust question), and waits until each runs. HOME and the XDG dirs
// are a temp dir. Returns {lsp, child, dir, workspace, showDocuments, quickPicks, stop()}.
export async function startSidecar({ bin, servers, logFile, logLevel = 'info', quickPick }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-apps-'));
  const workspace = path.join(dir, 'workspace');
  fs.mkdirSync(workspace);
  const env = {
    ...process.env,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_STATE_HOME: path.join(dir, 'state'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_CACHE_HOME: path.join(dir, 'cache'),
  };
  delete env.MCP_SIDECAR_LOG;
  delete env.RUST_LOG;
  const child = spawn(bin, ['lsp', '--log-file', logFile, '--log-level', logLevel], {
    cwd: workspace,
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lsp = new Lsp(child);
  const showDocuments = [];
  const quickPicks = [];
  lsp.onRequest('window/showDocument', (params) => {
    showDocuments.push(params);
    return { success: true };
  });
  lsp.onRequest('mcp-sidecar/quickPick', (params) => {
    quickPicks.push(params);
    return quickPick ? quickPick(params) : null;
  });
  lsp.onRequest('mcp-sidecar/inputBox', () => null);
  lsp.onRequest('workspace/configuration', (params) => (params.items || []).map(() => null));
  lsp.onRequest('client/registerCapability', () => null);
  lsp.onRequest('window/workDoneProgress/create', () => null);

  const folder = { uri: `file://${workspace}`, name: 'workspace' };
  await lsp.request('initialize', {
    processId: process.pid,
    rootUri: folder.uri,
    workspaceFolders: [folder],
    capabilities: { experimental: { mcpSidecar: { inputBox: true, quickPick: true, serverScopes: true } } },
    clientInfo: { name: 'mcp-sidecar apps tests', version: '1' },
  });
  lsp.notify('initialized', {});
  const scopes = Object.fromEntries(Object.keys(servers).map((name) => [name, 'user']));
  const from = lsp.events.length;
  lsp.notify('workspace/didChangeConfiguration', { settings: { servers, serverScopes: scopes } });
  await Promise.all(
    Object.keys(servers).map((name) =>
      lsp.waitEvent(
        `server ${name} running`,
        (e) => e.method === 'mcp-sidecar/serverStatus' && e.params.name === name &&
          (e.params.state === 'running' || e.params.state === 'failed' || e.params.state === 'needsTrust'),
        from,
      ).then((e) => {
        if (e.params.state !== 'running') throw new Error(`server ${name} is ${e.params.state}: ${e.params.message || ''}`);
      }),
    ),
  );
  const stop = async () => {
    if (lsp.exited) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await lsp.request('shutdown', null, 10_000);
      lsp.notify('exit', null);
    } catch {
      // already gone or wedged: killed below
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { lsp, child, dir, workspace, showDocuments, quickPicks, stop };
}

// Calls `tool` of `server` as the editor's command does; returns the result, the moment the reply
// came, and the view's page URL from the `window/showDocument` that follows it.
export async function callAndShow(sidecar, server, tool, args) {
  const { lsp } = sidecar;
  const from = lsp.events.length;
  const result = await lsp.command('mcp-sidecar.callTool', { server, tool, arguments: args }, 120_000);
  const repliedAt = performance.now();
  const shown = await lsp.waitEvent(
    `window/showDocument after ${server}/${tool}`,
    (e) => e.method === 'window/showDocument' && /\/view\/[0-9a-f]+$/.test(e.params.uri),
    from,
  );
  return { result, repliedAt, url: shown.params.uri, external: shown.params.external, shownAt: shown.at };
}

export async function openBrowser(executablePath = process.env.CHROMIUM || '/usr/bin/chromium') {
  const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  // Nothing leaves this machine: a request outside loopback gets a local stub (a view's declared
  // domains, a font from a CDN), and is kept for the checks.
  const offline = [];
  const newContext = async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    await context.route(
      (url) => /^https?:$/.test(url.protocol) && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname),
      (route) => {
        offline.push(route.request().url());
        return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>stub</title>offline test stub' });
      },
    );
    return context;
  };
  return { browser, context: await newContext(), newContext, offline };
}

// Opens a view's page. `initialized` resolves when the app's `ui/notifications/initialized` has
// reached the sidecar (the page's POST of it was answered), with the moment that happened;
// `rpc(match)` resolves with the first of the app's messages to the sidecar that `match` accepts
// ({message, status, body}), from the page's first request on.
export async function openView(context, url, timeoutMs = TIMEOUT_MS) {
  const page = await context.newPage();
  const exchanges = [];
  const waiters = new Set();
  page.on('response', async (response) => {
    if (response.url() !== `${url}/rpc`) return;
    let message = null;
    try {
      message = JSON.parse(response.request().postData() || '');
    } catch {
      // not JSON: kept as null
    }
    const body = response.status() === 200 ? await response.json().catch(() => null) : null;
    exchanges.push({ message, status: response.status(), body, at: performance.now() });
    for (const waiter of [...waiters]) waiter();
  });
  const rpc = (match, what = 'the app\'s message', ms = timeoutMs) => new Promise((resolve, reject) => {
    const check = () => {
      const found = exchanges.find((e) => e.message && match(e.message));
      if (found) {
        clearTimeout(timer);
        waiters.delete(check);
        resolve(found);
      }
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`${what}: not sent within ${ms} ms`));
    }, ms);
    waiters.add(check);
    check();
  });
  const initialized = rpc((m) => m.method === 'ui/notifications/initialized', 'ui/notifications/initialized');
  initialized.catch(() => {}); // reported where it is awaited; the page may fail to load first
  await page.goto(url, { timeout: timeoutMs });
  return { page, initialized, rpc };
}

// The app's frame of a view's page (the iframe of the host page).
export async function appFrame(page, timeoutMs = TIMEOUT_MS) {
  const handle = await page.waitForSelector('iframe', { state: 'attached', timeout: timeoutMs });
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('the view page has no app frame');
  return frame;
}

export function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match ? Number(match[1]) : NaN;
}
