import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appAnswer, appPickItem, cspMeta, escapeAttribute, failedAnswer, fromView, webviewCsp, webviewHtml, withCsp } from '../../src/apps/appModel';
import { toolPickItem } from '../../src/tools/toolPickItem';

const CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; object-src 'none'";
const META = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self' 'unsafe-inline'; object-src 'none'">`.replace(/'/g, '&#39;');

test('the CSP meta goes right after a leading doctype, whatever the case and spacing', () => {
  assert.equal(withCsp('<!doctype html><html><head><title>t</title></head></html>', CSP), `<!doctype html>${META}<html><head><title>t</title></head></html>`);
  assert.equal(withCsp('\uFEFF\n  <!DOCTYPE HTML PUBLIC "x">\n<HTML><HEAD></HEAD>', CSP), `\uFEFF\n  <!DOCTYPE HTML PUBLIC "x">${META}\n<HTML><HEAD></HEAD>`);
});

test('without a doctype the CSP meta is the very first thing, before any script of the app', () => {
  assert.equal(withCsp('<script>steal()</script><head></head>', CSP), `${META}<script>steal()</script><head></head>`);
  assert.equal(withCsp('<p>no head at all', CSP), `${META}<p>no head at all`);
  assert.equal(withCsp('', CSP), META);
  // A doctype that is not the first thing is not one the parser honours: the meta still comes first.
  assert.equal(withCsp('<script>x()</script><!doctype html>', CSP), `${META}<script>x()</script><!doctype html>`);
  // Tricks around <head> change nothing: the app's own head tags and comments come after the policy.
  const tricky = '<!doctype html><!-- </head><head> --><html a=">"><HEAD data-x="<head>"><script>x()</script>';
  assert.equal(withCsp(tricky, CSP), `<!doctype html>${META}${tricky.slice('<!doctype html>'.length)}`);
  // "<!doctypex" is not a doctype.
  assert.ok(withCsp('<!doctypex><script>x()</script>', CSP).startsWith(META));
});

test('the CSP is escaped for its attribute: quotes cannot end it', () => {
  assert.equal(escapeAttribute(`a"b'c<d>e&f`), 'a&quot;b&#39;c&lt;d&gt;e&amp;f');
  const meta = cspMeta(`default-src 'none'"><script>alert(1)</script>`);
  assert.equal(meta.match(/"/g)?.length, 4, 'only the attribute quotes of http-equiv and content');
  assert.doesNotMatch(meta, /<script/);
});

test("the webview's policy is the app's plus the extension's scripts, and never unsafe-eval", () => {
  const app =
    "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; style-src 'self' 'unsafe-inline'; " +
    "connect-src 'none'; frame-src 'none'; worker-src 'self' blob:; base-uri 'self'; object-src 'none'; form-action 'none'";
  const page = webviewCsp(app, 'https://*.vscode-cdn.net');
  assert.equal(
    page,
    "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com https://*.vscode-cdn.net; style-src 'self' 'unsafe-inline'; " +
      "connect-src 'none'; frame-src 'none'; worker-src 'self' blob:; base-uri 'self'; object-src 'none'; form-action 'none'",
  );
  // No script-src: the default-src's sources, plus ours; a repeated directive: the first counts.
  assert.equal(webviewCsp("default-src 'self' 'unsafe-eval'; script-src x; SCRIPT-SRC y", 'z'), "default-src 'self' 'unsafe-eval'; script-src x z");
  assert.equal(webviewCsp("default-src 'none' 'unsafe-eval'", 'z'), "default-src 'none' 'unsafe-eval'; script-src 'none' z");
  assert.doesNotMatch(webviewCsp("script-src 'unsafe-eval' 'unsafe-inline'", 'z'), /script-src[^;]*unsafe-eval/);
});

test("the webview's page holds its policy and scripts only", () => {
  const html = webviewHtml("default-src 'none'", ['https://x/host.js', 'https://x/app"View.js']);
  assert.match(html, /^<!DOCTYPE html>/);
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;">/);
  assert.match(html, /<script src="https:\/\/x\/host.js"><\/script>\n<script src="https:\/\/x\/app&quot;View.js"><\/script>/);
  assert.equal(html.match(/<script/g)?.length, 2);
});

test("the webview's messages are checked", () => {
  assert.deepEqual(fromView({ type: 'ready' }), { type: 'ready' });
  assert.deepEqual(fromView({ type: 'request', id: 3, message: { jsonrpc: '2.0', id: 1, method: 'ping' } }), {
    type: 'request',
    id: 3,
    message: { jsonrpc: '2.0', id: 1, method: 'ping' },
  });
  assert.equal(fromView({ type: 'request', id: '3', message: {} }), undefined);
  assert.equal(fromView({ type: 'request', id: 1.5, message: {} }), undefined);
  assert.equal(fromView({ type: 'request', id: 1, message: [] }), undefined);
  assert.equal(fromView({ type: 'notify', message: 'x' }), undefined);
  assert.equal(fromView({ type: 'eval' }), undefined);
  assert.equal(fromView(null), undefined);
  assert.equal(fromView('ready'), undefined);
});

test("the sidecar's JSON-RPC answer becomes {result} or {error}", () => {
  assert.deepEqual(appAnswer({ jsonrpc: '2.0', id: 4, result: { content: [] } }), { result: { content: [] } });
  assert.deepEqual(appAnswer({ jsonrpc: '2.0', id: 4, result: null }), { result: null });
  assert.deepEqual(appAnswer({ jsonrpc: '2.0', id: 4, error: { code: -32000, message: 'not for apps' } }), {
    error: { code: -32000, message: 'not for apps' },
  });
  assert.deepEqual(appAnswer({ error: { code: -32601, message: 'no', data: { x: 1 } } }), { error: { code: -32601, message: 'no', data: { x: 1 } } });
  assert.equal((appAnswer(null) as { error: { code: number } }).error.code, -32603);
  assert.equal((appAnswer({ error: 'x' }) as { error: { code: number } }).error.code, -32603);
  assert.deepEqual(failedAnswer(new Error('MCP Sidecar is not running')), { error: { code: -32000, message: 'MCP Sidecar is not running' } });
});

test('Open App View rows, and tools with a view marked in Call Tool', () => {
  assert.deepEqual(appPickItem({ view: 'v3', server: 'basic', tool: 'get-time', title: 'basic: get-time', url: 'http://127.0.0.1:1/view/x', initialized: true }), {
    label: 'basic: get-time',
    description: 'basic · get-time',
    detail: undefined,
  });
  assert.match(appPickItem({ view: 'v', server: 's', tool: 't', title: 't', url: '', initialized: false }).detail ?? '', /not started/);
  const plain = toolPickItem({ server: 'demo', name: 'add', title: 'Add', description: 'Adds.', inputSchema: {} });
  assert.deepEqual(plain, { label: 'add', description: 'Add', detail: 'Adds.' });
  const view = toolPickItem({ server: 'basic', name: 'get-time', inputSchema: {}, ui: { resourceUri: 'ui://get-time/mcp-app.html' } });
  assert.deepEqual(view, { label: 'get-time', description: '$(window) has a view', detail: undefined });
  assert.equal(toolPickItem({ server: 'b', name: 'x', title: 'X', inputSchema: {}, ui: { resourceUri: 'ui://x' } }).description, '$(window) has a view · X');
});
