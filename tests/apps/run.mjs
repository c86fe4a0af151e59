// MCP Apps in Chromium through the sidecar's loopback page (docs/apps.md): the built sidecar is
// started over LSP by a scripted editor without `openApp`; each view it opens with
// `window/showDocument` is loaded in headless Chromium and checked, with three real Apps servers
// (server-basic-vanillajs, server-budget-allocator, server-pdf) and a hostile one
// (fixtures/node/hostile_app_server.mjs). One line per check; exit 1 on any failure.
//
//   cargo build && . .cache/peers/env.sh && (cd tests/apps && npm ci)
//   MCP_SIDECAR_BIN=target/debug/mcp-sidecar node tests/apps/run.mjs
//
// Screenshots go to target/apps/<view>.png, the sidecar's log to target/apps/sidecar.log.
// CHROMIUM=/path/to/chromium overrides /usr/bin/chromium.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import crypto from 'node:crypto';
import {
  OUT,
  TIMEOUT_MS,
  appServers,
  appFrame,
  callAndShow,
  need,
  openBrowser,
  openView,
  samplePdf,
  startSidecar,
} from './lib.mjs';

const bin = path.resolve(need('MCP_SIDECAR_BIN'));
fs.mkdirSync(OUT, { recursive: true });
const logFile = path.join(OUT, 'sidecar.log');
fs.rmSync(logFile, { force: true });

let failures = 0;
function check(name, ok, detail = '') {
  if (ok) {
    console.log(`ok   ${name}`);
  } else {
    failures++;
    console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`);
  }
  return ok;
}
const short = (v) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s && s.length > 300 ? `${s.slice(0, 300)}…` : s;
};

// A plain HTTP request (node's http: it can set Host and Origin as a page or an attacker would).
function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'GET', headers, timeout: 10_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

const refuseLabel = /^(decline|cancel|don'?t|do not|refuse|no\b|deny)/i;
const sidecar = await startSidecar({
  bin,
  servers: appServers(),
  logFile,
  // The only question of this run is a view's ui/open-link: refused (the refusing item, else
  // dismissed).
  quickPick: (params) => {
    const index = (params.items || []).findIndex((item) => refuseLabel.test(item.label || ''));
    return index >= 0 ? { selected: [index] } : null;
  },
});
const { lsp } = sidecar;
console.log(`sidecar ${bin} running (pid ${sidecar.child.pid}), servers: ${Object.keys(appServers()).join(', ')}`);

const { browser, context, offline } = await openBrowser();
const views = {}; // name -> {url, token, page}

async function listApps() {
  return (await lsp.command('mcp-sidecar.listApps')) || [];
}

async function runView(name, server, tool, args, inspect) {
  let shown;
  try {
    shown = await callAndShow(sidecar, server, tool, args);
  } catch (e) {
    check(`${name}: callTool ${server}/${tool} opens the view with window/showDocument`, false, e.message);
    return;
  }
  const { result, url } = shown;
  const token = /\/view\/([0-9a-f]+)$/.exec(url)?.[1];
  check(`${name}: callTool ${server}/${tool} answered (isError ${!!result?.isError})`, result && !result.isError, short(result));
  check(`${name}: window/showDocument external with a loopback view URL`,
    shown.external === true && /^http:\/\/127\.0\.0\.1:\d+\/view\/[0-9a-f]{64}$/.test(url), `${url} external=${shown.external}`);
  const { page, initialized, rpc } = await openView(context, url);
  views[name] = { url, token, page };
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let appCsp = null;
  page.on('response', (response) => {
    if (/\/app\/[0-9a-f]+$/.test(new URL(response.url()).pathname)) appCsp = response.headers()['content-security-policy'] ?? '';
  });
  try {
    const init = await initialized;
    check(`${name}: the app's ui/notifications/initialized reached the sidecar (HTTP ${init.status})`, init.status === 204 || init.status === 200);
  } catch (e) {
    check(`${name}: the app's ui/notifications/initialized reached the sidecar`, false, e.message);
  }
  const row = (await listApps()).find((r) => r.url === url);
  check(`${name}: listApps shows the view initialized`, row?.initialized === true && row.server === server && row.tool === tool, short(row));
  views[name].view = row?.view;
  let frame;
  try {
    frame = await appFrame(page);
    await inspect({ page, frame, rpc, result, url, token, appCsp: () => appCsp });
  } catch (e) {
    check(`${name}: the view shows what it should`, false, e.message.split('\n')[0]);
  }
  await page.screenshot({ path: path.join(OUT, `${name}.png`) }).catch((e) => check(`${name}: screenshot`, false, e.message));
  check(`${name}: the page ran without uncaught errors`, errors.length === 0, short(errors));
}

// The app's tools/call of `tool`, as the page sent it to the sidecar, and its answer.
const toolCall = (name) => (m) => m.method === 'tools/call' && m.params?.name === name;

try {
  // ---------------------------------------------------------------- listTools
  const tools = await lsp.command('mcp-sidecar.listTools');
  const find = (server, name) => tools.find((t) => t.server === server && t.name === name);
  check('listTools: basic/get-time has ui.resourceUri ui://get-time/mcp-app.html',
    find('basic', 'get-time')?.ui?.resourceUri === 'ui://get-time/mcp-app.html', short(find('basic', 'get-time')));
  check('listTools: pdf/display_pdf has ui.resourceUri ui://pdf-viewer/mcp-app.html',
    find('pdf', 'display_pdf')?.ui?.resourceUri === 'ui://pdf-viewer/mcp-app.html', short(find('pdf', 'display_pdf')));
  const pdfAppOnly = ['read_pdf_bytes', 'submit_page_data', 'submit_save_data', 'submit_viewer_state', 'poll_pdf_commands', 'save_pdf'];
  check('listTools: pdf lists none of its app-only tools (read_pdf_bytes, …)',
    pdfAppOnly.every((n) => !find('pdf', n)) && !!find('pdf', 'list_pdfs'), short(tools.filter((t) => t.server === 'pdf').map((t) => t.name)));
  check('listTools: hostile lists model-only and hostile, not app-only',
    !!find('hostile', 'model-only') && !!find('hostile', 'hostile') && !find('hostile', 'app-only'),
    short(tools.filter((t) => t.server === 'hostile').map((t) => t.name)));
  check('listTools: a tool without a view has no ui', find('pdf', 'list_pdfs') && !find('pdf', 'list_pdfs').ui);
  try {
    const r = await lsp.command('mcp-sidecar.callTool', { server: 'hostile', tool: 'app-only', arguments: {} });
    check('callTool of an app-only tool is refused', false, short(r));
  } catch (e) {
    check('callTool of an app-only tool is refused', !!e.rpc, e.message);
  }

  // ---------------------------------------------------------------- get-time
  await runView('get-time', 'basic', 'get-time', {}, async ({ frame, rpc, result }) => {
    const first = result.structuredContent?.time ?? result.content?.[0]?.text;
    await frame.waitForFunction((t) => document.querySelector('#server-time')?.textContent === t, first, { timeout: TIMEOUT_MS });
    check('get-time: the view shows the time of the tool result', true);
    await frame.click('#get-time-btn', { timeout: TIMEOUT_MS });
    const { status, body } = await rpc(toolCall('get-time'), 'the button\'s tools/call');
    const again = body?.result?.structuredContent?.time ?? body?.result?.content?.[0]?.text;
    check('get-time: the button\'s tools/call round-trips through the sidecar', status === 200 && !!again && again !== first, short(body));
    await frame.waitForFunction((t) => document.querySelector('#server-time')?.textContent === t, again, { timeout: TIMEOUT_MS });
    check('get-time: the view shows the new time', true);
  });

  // ---------------------------------------------------------------- budget-allocator
  await runView('budget', 'budget', 'get-budget-data', {}, async ({ frame }) => {
    await frame.waitForFunction(
      () => /Marketing/.test(document.querySelector('#sliders-container')?.textContent || '') &&
        /\$100,000/.test(document.querySelector('#status-bar')?.textContent || ''),
      null, { timeout: TIMEOUT_MS });
    check('budget: the view shows the categories and the $100,000 budget', true);
    const drawn = await frame.evaluate(() => {
      const c = document.querySelector('#budget-chart');
      if (!c || !c.width || !c.height) return 0;
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    });
    check('budget: the chart is drawn', drawn > 100, `${drawn} painted pixels`);
  });

  // ---------------------------------------------------------------- pdf
  await runView('pdf', 'pdf', 'display_pdf', { url: samplePdf() }, async ({ frame, rpc }) => {
    // The app reads the bytes with its app-only tool: allowed for the view.
    const bytes = await rpc(toolCall('read_pdf_bytes'), 'tools/call read_pdf_bytes').catch((e) => ({ error: e.message }));
    check('pdf: the view\'s tools/call of the app-only read_pdf_bytes is answered', bytes.status === 200 && !!bytes.body?.result && !bytes.body.result.isError, short(bytes.body ?? bytes.error));
    // The page is rendered: the sample's blue band (0.16 0.42 0.74 rg) is on the canvas.
    const rendered = await frame.waitForFunction(() => {
      const c = document.querySelector('#pdf-canvas');
      if (!c || c.width < 100 || c.height < 100) return false;
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let blue = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (Math.abs(d[i] - 41) < 20 && Math.abs(d[i + 1] - 107) < 20 && Math.abs(d[i + 2] - 189) < 20) blue++;
      }
      return blue > 1000;
    }, null, { timeout: TIMEOUT_MS }).then(() => true, () => false);
    // When it is not, the viewer says why (the CSP refused its worker, say).
    const why = rendered ? '' : `the viewer shows: ${await frame.textContent('#error-message').catch(() => '?')}`;
    if (!check('pdf: the page is rendered on the canvas', rendered, short(why))) return;
    await frame.waitForFunction(() => /mcp-sidecar sample PDF/.test(document.querySelector('#text-layer')?.textContent || ''), null, { timeout: TIMEOUT_MS });
    check('pdf: its text layer holds the sample\'s text', true);
  });

  // ---------------------------------------------------------------- hostile
  const picksBefore = sidecar.quickPicks.length;
  await runView('hostile', 'hostile', 'hostile', {}, async ({ frame, token, appCsp }) => {
    await frame.waitForFunction(() => /^hostile: (done|crashed)$/.test(document.title), null, { timeout: 60_000 });
    const r = JSON.parse(await frame.textContent('#log'));
    if (r.crash) check('hostile: the view ran every probe', false, r.crash);
    const csp = appCsp() ?? '';
    const connect = /(?:^|;)\s*connect-src ([^;]*)/.exec(csp)?.[1]?.trim();
    check('hostile: the app\'s CSP header has connect-src https://allowed.example only (bad entries dropped, the content item\'s _meta.ui wins)',
      connect === 'https://allowed.example', csp);
    check('hostile: the app\'s CSP has no unsafe-eval', csp !== '' && !/unsafe-eval/.test(csp), csp);
    check('hostile: ui/initialize answered with 2026-01-26', r.initialize?.protocolVersion === '2026-01-26', short(r.initialize));
    check('hostile: tool-input and tool-result reached the view',
      !!r.toolInput && r.toolResult?.content?.[0]?.text === 'hostile called', short({ toolInput: r.toolInput, toolResult: r.toolResult }));
    check('hostile: fetch of an undeclared domain blocked by CSP (securitypolicyviolation connect-src)',
      r.evilFetch?.violation === 'connect-src' && !!r.evilFetch.error, short(r.evilFetch));
    check('hostile: fetch of the declared domain allowed', r.allowedFetch === 'ok', short(r.allowedFetch));
    check('hostile: tools/call of the model-only tool refused with -32000', r.modelOnly?.error?.code === -32000, short(r.modelOnly));
    check('hostile: tools/call of the app-only tool answered',
      r.appOnly?.result?.content?.[0]?.text === 'app-only called', short(r.appOnly));
    check('hostile: ui/open-link javascript: refused', !!r.linkJavascript?.error, short(r.linkJavascript));
    check('hostile: ui/open-link file: refused', !!r.linkFile?.error, short(r.linkFile));
    check('hostile: ui/open-link https: refused when the person refuses', !!r.linkHttps?.error, short(r.linkHttps));
    const picks = sidecar.quickPicks.slice(picksBefore);
    const mentions = (p, s) => JSON.stringify(p).includes(s);
    for (const p of picks) console.log(`     asked: ${short(p.title)} [${(p.items || []).map((i) => i.label).join(' | ')}]`);
    check('hostile: the person was asked about the https link, with its full URL',
      picks.some((p) => mentions(p, 'https://allowed.example/consent')), short(picks));
    check('hostile: the person was never asked about the javascript: or file: link',
      !picks.some((p) => mentions(p, 'javascript:') || mentions(p, 'file:///etc/passwd')), short(picks));
    check('hostile: parent.document unreachable (SecurityError)', r.parentDocument === 'SecurityError', short(r.parentDocument));
    check('hostile: window.open gave no window (no allow-popups)', r.popup === false, short(r.popup));
    check('hostile: document.referrer does not hold the view\'s token', typeof r.referrer === 'string' && !r.referrer.includes(token), r.referrer);
    check('hostile: a flood of 200 pings is rate-limited (-32000), the first ones answered',
      r.flood?.ok > 0 && r.flood.limited > 0 && r.flood.other === 0 && r.flood.ok + r.flood.limited === 200, short(r.flood));
  });

  // A person keeps several views open in one browser: each page holds a GET /events open, and
  // Chromium opens at most 6 connections to one host and port; views 5 to 7 must still open.
  for (let n = 5; n <= 7; n++) {
    const name = `view ${n}`;
    try {
      const shown = await callAndShow(sidecar, 'basic', 'get-time', {});
      views[name] = { url: shown.url, view: (await listApps()).find((r) => r.url === shown.url)?.view };
      const opened = await openView(context, shown.url, 10_000).catch((e) => ({ error: e }));
      if (opened.error) throw opened.error;
      views[name].page = opened.page;
      await opened.initialized;
      check(`${name} in the same browser opens and initializes within 10 s`, true);
    } catch (e) {
      check(`${name} in the same browser opens and initializes within 10 s`, false, e.message.split('\n')[0]);
    }
  }

  check('no refused link ever reached window/showDocument',
    sidecar.showDocuments.every((d) => /^http:\/\/127\.0\.0\.1:\d+\/view\/[0-9a-f]{64}$/.test(d.uri)), short(sidecar.showDocuments.map((d) => d.uri)));
  check('nothing but the declared domain left the page for the network',
    offline.every((u) => /^https:\/\/(allowed\.example|unpkg\.com)\//.test(u)), short(offline));

  // ---------------------------------------------------------------- the loopback listeners
  const v = views['get-time'];
  if (v) {
    const base = new URL(v.url);
    const origin = base.origin;
    const wrong = crypto.randomBytes(32).toString('hex');
    const page = await get(`${origin}/view/${wrong}`);
    check('GET /view/<wrong token> is 404 with no body', page.status === 404 && page.body === '', `${page.status} ${short(page.body)}`);
    const data = await get(`${origin}/view/${wrong}/data`);
    check('GET /view/<wrong token>/data is 404', data.status === 404 && data.body === '', `${data.status} ${short(data.body)}`);
    const good = await get(`${v.url}/data`);
    let appUrl = null;
    try {
      const d = JSON.parse(good.body);
      appUrl = d.appUrl;
      check('GET /view/<token>/data answers the view\'s data', good.status === 200 && d.server === 'basic' && !!appUrl, short(d));
    } catch {
      check('GET /view/<token>/data answers the view\'s data', false, `${good.status} ${short(good.body)}`);
    }
    const foreign = await get(`${v.url}/data`, { Origin: 'http://evil.example' });
    check('GET /view/<token>/data with a foreign Origin is 403', foreign.status === 403, `${foreign.status}`);
    const rebinding = await get(`${v.url}/data`, { Host: `evil.example:${base.port}` });
    check('GET /view/<token>/data with a foreign Host is refused', rebinding.status === 403 || rebinding.status === 421 || rebinding.status === 400, `${rebinding.status}`);
    if (appUrl) {
      const app = new URL(appUrl, v.url);
      check('the app listener is another origin than the page', app.origin !== origin, `${app.origin}`);
      const wrongApp = await get(`${app.origin}/app/${wrong}`);
      check('GET /app/<wrong token> on the app listener is 404', wrongApp.status === 404, `${wrongApp.status}`);
    }
  }

  // ---------------------------------------------------------------- closing
  const open = await listApps();
  check('listApps lists the views', ['basic', 'budget', 'pdf', 'hostile'].every((s) => open.some((r) => r.server === s)) && open.length === 7, short(open));
  for (const [name, v] of Object.entries(views)) {
    if (!v.view) continue;
    if (!v.page) {
      await lsp.command('mcp-sidecar.closeApp', { view: v.view });
      continue;
    }
    const hosted = await v.page.$('iframe');
    const gone = v.page.waitForFunction(() => !document.querySelector('iframe'), null, { timeout: TIMEOUT_MS });
    await lsp.command('mcp-sidecar.closeApp', { view: v.view });
    try {
      await gone;
      check(`${name}: closeApp tears the page's view down`, !!hosted, hosted ? '' : 'the page had no app frame to tear down');
    } catch (e) {
      check(`${name}: closeApp tears the page's view down`, false, e.message.split('\n')[0]);
    }
    // The view's page listener stops with it: nothing answers there any more.
    const after = await get(`${v.url}/data`).then((r) => `${r.status}`, (e) => e.code);
    check(`${name}: a closed view's page is gone`, after === 'ECONNREFUSED', after);
  }
  check('listApps is empty after closeApp', (await listApps()).length === 0);
  check('the sidecar still serves the editor (listServers)', (await lsp.command('mcp-sidecar.listServers')).length === 4);
} catch (e) {
  check('the run finished', false, e.stack || String(e));
} finally {
  await browser.close().catch(() => {});
  await sidecar.stop();
  const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
  const dropped = log.split('\n').filter((l) => l.includes('https://evil.example;'));
  check('the hostile view\'s two bad CSP entries are dropped with one log line',
    dropped.length === 1 && dropped[0].includes("'self' https://evil.example"), short(dropped));
  check('the sidecar never panicked', !/panicked/.test(log), log.split('\n').filter((l) => /panicked/.test(l)).join(' | '));
}

console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
