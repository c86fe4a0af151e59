// The loopback page in a real browser, without the Rust side: src/apps/assets/page.html and host.js
// served under the page CSP of docs/apps.md, a fake sidecar behind /view/<token>/{data,rpc,events,
// close}, and the real app of @modelcontextprotocol/server-basic-vanillajs on a second origin
// under a view CSP. Headless Chromium drives it.
// Run: editors/apps/build.sh && node editors/apps/test/smoke.mjs   (exits non-zero on a failure)

import { randomBytes } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../../scripts/lib/chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const PAGE_HTML = readFileSync(join(root, 'src/apps/assets/page.html'), 'utf8');
const HOST_JS = readFileSync(join(root, 'src/apps/assets/host.js'));
const APP_HTML = readFileSync(
  join(here, '../node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/mcp-app.html'),
);
const TIMEOUT = 15_000;


const TOOL = {
  name: 'get-time',
  title: 'Get Time',
  inputSchema: { type: 'object' },
  _meta: { ui: { resourceUri: 'ui://get-time/mcp-app.html' } },
};
const TIME1 = '2026-01-26T10:00:00.000Z';
const TIME2 = '2026-01-26T11:11:11.111Z';
const ARGS = { zone: 'UTC' };

const VIEW_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'none'; " +
  "frame-src 'none'; worker-src 'self' blob:; base-uri 'self'; object-src 'none'; form-action 'none'";
const pageCsp = (appOrigin) =>
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  `connect-src 'self'; frame-src ${appOrigin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

// ---- the fake sidecar ----

const rpc = new EventEmitter();
const log = []; // {token, kind: 'rpc'|'close', message}
const views = new Map(); // token -> {events: ServerResponse[], toolCalls}
let appOrigin = '';
let pageOrigin = '';

function newView() {
  const token = randomBytes(32).toString('hex');
  views.set(token, { events: [], toolCalls: 0 });
  return token;
}

function record(entry) {
  log.push(entry);
  rpc.emit('entry', entry);
}

function waitFor(what, pred, timeout = TIMEOUT) {
  const found = log.find(pred);
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      rpc.off('entry', on);
      reject(new Error(`timed out waiting for ${what}`));
    }, timeout);
    const on = (entry) => {
      if (!pred(entry)) return;
      clearTimeout(timer);
      rpc.off('entry', on);
      resolve(entry);
    };
    rpc.on('entry', on);
  });
}
const waitRpc = (token, what, pred = () => true) =>
  waitFor(what, (e) => e.token === token && e.kind === 'rpc' && pred(e.message));

function answer(view, message) {
  const ok = (result) => ({ jsonrpc: '2.0', id: message.id, result });
  const fail = (code, text) => ({ jsonrpc: '2.0', id: message.id, error: { code, message: text } });
  switch (message.method) {
    case 'ping':
      return ok({});
    case 'tools/call':
      if (message.params?.name !== 'get-time') return fail(-32000, 'not an app tool');
      // The first call is refused, as the sidecar refuses a tool without "app" visibility.
      if (view.toolCalls++ === 0) return fail(-32000, 'refused by the fake sidecar');
      return ok({ content: [{ type: 'text', text: TIME2 }], structuredContent: { time: TIME2 } });
    default:
      return fail(-32601, 'Method not found');
  }
}

function send(res, status, type, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
  res.end(body);
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const pageServer = http.createServer(async (req, res) => {
  const m = /^\/view\/([0-9a-f]{64})(\/[a-z.]+)?$/.exec(req.url ?? '');
  const view = m && views.get(m[1]);
  if (!view) return send(res, 404, 'text/plain', '');
  if (req.headers.origin !== undefined && req.headers.origin !== pageOrigin) {
    return send(res, 403, 'text/plain', '');
  }
  const token = m[1];
  const route = `${req.method} ${m[2] ?? ''}`;
  switch (route) {
    case 'GET ':
      return send(res, 200, 'text/html; charset=utf-8', PAGE_HTML.replaceAll('{{TOKEN}}', token), {
        'Content-Security-Policy': pageCsp(appOrigin),
      });
    case 'GET /host.js':
      return send(res, 200, 'text/javascript; charset=utf-8', HOST_JS);
    case 'GET /data':
      if (view.dataGone) return send(res, 404, 'text/plain', '');
      return send(
        res,
        200,
        'application/json',
        JSON.stringify({
          server: 'basic',
          tool: TOOL,
          appUrl: `${appOrigin}/app/${token}`,
          arguments: ARGS,
          result: { content: [{ type: 'text', text: TIME1 }], structuredContent: { time: TIME1 } },
          hostContext: { locale: 'en-US' },
        }),
      );
    case 'POST /rpc': {
      const message = JSON.parse(await readBody(req));
      record({ token, kind: 'rpc', message });
      if (message.id === undefined) return send(res, 204, 'text/plain', '');
      return send(res, 200, 'application/json', JSON.stringify(answer(view, message)));
    }
    case 'GET /events': {
      view.events.push(res);
      const timer = setTimeout(() => {
        view.events = view.events.filter((r) => r !== res);
        send(res, 204, 'text/plain', '');
      }, 25_000);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    case 'POST /close':
      await readBody(req);
      record({ token, kind: 'close' });
      return send(res, 204, 'text/plain', '');
    default:
      return send(res, 404, 'text/plain', '');
  }
});

function closeView(token, reason) {
  const view = views.get(token);
  for (const res of view.events.splice(0)) {
    send(res, 200, 'application/json', JSON.stringify({ teardown: reason }));
  }
}

const appServer = http.createServer((req, res) => {
  const m = /^\/app\/([0-9a-f]{64})$/.exec(req.url ?? '');
  if (req.method !== 'GET' || !m || !views.has(m[1])) return send(res, 404, 'text/plain', '');
  send(res, 200, 'text/html; charset=utf-8', APP_HTML, { 'Content-Security-Policy': VIEW_CSP });
});

async function listen(server) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${server.address().port}`;
}

// ---- the checks ----

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (error) {
    failed++;
    console.log(`not ok - ${name}\n  ${String(error?.stack ?? error).replaceAll('\n', '\n  ')}`);
    throw error;
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

// Each frame records the JSON-RPC messages it receives and any CSP violation.
function recorder() {
  window.__mcp = { received: [], violations: [] };
  addEventListener('message', (event) => {
    if (event.data && event.data.jsonrpc === '2.0') window.__mcp.received.push(event.data);
  });
  document.addEventListener('securitypolicyviolation', (event) => {
    window.__mcp.violations.push(`${event.violatedDirective} ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber}:${event.columnNumber}`);
  });
}

const received = (frame) => frame.evaluate(() => window.__mcp.received);

async function main() {
  pageOrigin = await listen(pageServer);
  appOrigin = await listen(appServer);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
  });
  try {
    const context = await browser.newContext({ colorScheme: 'dark' });
    await context.addInitScript(recorder);
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT);
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(String(error)));

    const token = newView();
    const appUrl = `${appOrigin}/app/${token}`;
    const appFrameLoaded = page.waitForEvent('framenavigated', {
      predicate: (frame) => frame.url() === appUrl,
      timeout: TIMEOUT,
    });
    await page.goto(`${pageOrigin}/view/${token}`);
    const app = await appFrameLoaded;

    await check('the app sends ui/initialize and the page answers as mcp-sidecar', async () => {
      await page.waitForFunction(() => window.__mcp.received.some((m) => m.method === 'ui/initialize'));
      await app.waitForFunction(() => window.__mcp.received.some((m) => m.result?.hostInfo));
      const init = (await received(app)).find((m) => m.result?.hostInfo).result;
      assert(init.hostInfo.name === 'mcp-sidecar', `hostInfo ${JSON.stringify(init.hostInfo)}`);
      assert(init.protocolVersion === '2026-01-26', `protocolVersion ${init.protocolVersion}`);
      const caps = init.hostCapabilities;
      for (const key of ['openLinks', 'serverTools', 'serverResources', 'logging', 'message', 'updateModelContext']) {
        assert(caps[key] && typeof caps[key] === 'object', `hostCapabilities.${key} missing: ${JSON.stringify(caps)}`);
      }
      const ctx = init.hostContext;
      assert(ctx.displayMode === 'inline', `displayMode ${ctx.displayMode}`);
      assert(JSON.stringify(ctx.availableDisplayModes) === '["inline"]', `modes ${ctx.availableDisplayModes}`);
      assert(ctx.toolInfo?.tool?.name === 'get-time', `toolInfo ${JSON.stringify(ctx.toolInfo)}`);
      assert(ctx.theme === 'dark', `theme ${ctx.theme} (the browser prefers dark)`);
      assert(ctx.locale === 'en-US', `the sidecar's hostContext is kept: ${JSON.stringify(ctx)}`);
    });

    await check('the page posts ui/notifications/initialized to ./rpc', async () => {
      await waitRpc(token, 'initialized', (m) => m.method === 'ui/notifications/initialized' && m.id === undefined);
    });

    await check('tool-input, then tool-result reach the app, nothing before initialized', async () => {
      await app.waitForFunction((t) => document.getElementById('server-time')?.textContent === t, TIME1);
      const got = await received(app);
      assert(got[0]?.result?.hostInfo, `the first message to the app is the initialize answer: ${JSON.stringify(got[0])}`);
      assert(got[1]?.method === 'ui/notifications/tool-input', `then tool-input: ${JSON.stringify(got[1])}`);
      assert(JSON.stringify(got[1].params) === JSON.stringify({ arguments: ARGS }), `tool-input ${JSON.stringify(got[1].params)}`);
      assert(got[2]?.method === 'ui/notifications/tool-result', `then tool-result: ${JSON.stringify(got[2])}`);
      assert(got[2].params.structuredContent.time === TIME1, `tool-result ${JSON.stringify(got[2].params)}`);
    });

    await check('the header names the server and the tool, as text', async () => {
      const heading = await page.textContent('h1');
      assert(heading === 'basic: Get Time', `header ${heading}`);
    });

    await check('size-changed goes to ./rpc and sizes the iframe', async () => {
      await waitRpc(token, 'size-changed', (m) => m.method === 'ui/notifications/size-changed');
      await page.waitForFunction(() => {
        const sizes = window.__mcp.received.filter((m) => m.method === 'ui/notifications/size-changed');
        const height = sizes.at(-1)?.params?.height;
        const want = `${Math.round(Math.min(4000, Math.max(60, height)))}px`;
        return typeof height === 'number' && document.querySelector('iframe').style.height === want;
      });
    });

    await check("the app's tools/call goes to ./rpc; a refusal reaches it with its code", async () => {
      await app.click('#get-time-btn');
      const call = await waitRpc(token, 'tools/call', (m) => m.method === 'tools/call');
      assert(call.message.params.name === 'get-time' && call.message.id !== undefined, JSON.stringify(call.message));
      await app.waitForFunction(() => document.getElementById('server-time')?.textContent === '[ERROR]');
      const refusal = (await received(app)).find((m) => m.id === call.message.id && m.error);
      assert(refusal?.error.code === -32000, `error ${JSON.stringify(refusal)}`);
      assert(refusal.error.message === 'refused by the fake sidecar', `error ${JSON.stringify(refusal)}`);
    });

    await check("the sidecar's result of the app's tools/call reaches the app", async () => {
      await app.click('#get-time-btn');
      await app.waitForFunction((t) => document.getElementById('server-time')?.textContent === t, TIME2);
      const calls = log.filter((e) => e.token === token && e.message?.method === 'tools/call');
      assert(calls.length === 2, `${calls.length} tools/call`);
    });

    await check('ping and an unknown method go to ./rpc; ui/request-display-mode is answered inline', async () => {
      await app.evaluate(() => {
        parent.postMessage({ jsonrpc: '2.0', id: 'p1', method: 'ping' }, '*');
        parent.postMessage({ jsonrpc: '2.0', id: 'u1', method: 'no/such', params: { a: 1 } }, '*');
        parent.postMessage({ jsonrpc: '2.0', id: 'd1', method: 'ui/request-display-mode', params: { mode: 'fullscreen' } }, '*');
      });
      await waitRpc(token, 'ping', (m) => m.method === 'ping' && m.id === 'p1');
      const unknown = await waitRpc(token, 'no/such', (m) => m.method === 'no/such' && m.id === 'u1');
      assert(unknown.message.params.a === 1, JSON.stringify(unknown.message));
      await app.waitForFunction(() => ['p1', 'u1', 'd1'].every((id) => window.__mcp.received.some((m) => m.id === id)));
      const got = await received(app);
      const by = (id) => got.find((m) => m.id === id);
      assert(JSON.stringify(by('p1').result) === '{}', `ping ${JSON.stringify(by('p1'))}`);
      assert(by('u1').error?.code === -32601, `no/such ${JSON.stringify(by('u1'))}`);
      assert(by('d1').result?.mode === 'inline', `display mode ${JSON.stringify(by('d1'))}`);
      assert(!log.some((e) => e.message?.method === 'ui/request-display-mode'), 'display mode went to the sidecar');
    });

    await check('a teardown from ./events reaches the app, then the iframe goes and the page says why', async () => {
      closeView(token, 'the test is done');
      await page.waitForFunction(() => document.querySelector('.status')?.textContent === 'This view was closed: the test is done');
      assert((await page.$$('iframe')).length === 0, 'the iframe is still there');
      const answers = await received(page);
      const teardownAnswer = answers.find((m) => m.id !== undefined && m.result && !m.method);
      assert(teardownAnswer, `the app answered no ui/resource-teardown: ${JSON.stringify(answers)}`);
    });

    await check('the page runs under its CSP without a violation or an error', async () => {
      const violations = await page.evaluate(() => window.__mcp.violations);
      assert(violations.length === 0, `CSP violations: ${violations.join('; ')}`);
      assert(pageErrors.length === 0, `page errors: ${pageErrors.join('; ')}`);
    });

    await check('leaving the page sends ./close', async () => {
      const other = newView();
      const page2 = await context.newPage();
      page2.setDefaultTimeout(TIMEOUT);
      await page2.goto(`${pageOrigin}/view/${other}`);
      await waitRpc(other, 'initialized', (m) => m.method === 'ui/notifications/initialized');
      await page2.goto('about:blank');
      await waitFor('close', (e) => e.token === other && e.kind === 'close');
    });

    await check('a view whose data is gone says so', async () => {
      const gone = newView();
      views.get(gone).dataGone = true;
      const page3 = await context.newPage();
      page3.setDefaultTimeout(TIMEOUT);
      await page3.goto(`${pageOrigin}/view/${gone}`);
      await page3.waitForFunction(() => document.querySelector('.status')?.textContent === 'This view is not available (HTTP 404).');
      assert((await page3.$$('iframe')).length === 0, 'an iframe without data');
    });
  } finally {
    await browser.close();
    pageServer.closeAllConnections();
    appServer.closeAllConnections();
    pageServer.close();
    appServer.close();
  }
}

try {
  await main();
} catch (error) {
  // A failed check was reported by check(); anything else is reported here.
  if (failed === 0) {
    failed++;
    console.log(`not ok - smoke setup\n  ${String(error?.stack ?? error)}`);
  }
}
console.log(`smoke: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
