import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statusBarView, ServerStates } from '../../src/servers/serverStates';
import { resultMarkdown } from '../../src/tools/resultMarkdown';

test('a tool result as Markdown: text, JSON text fenced, structured content', () => {
  const md = resultMarkdown('demo', 'add', { a: 2, b: 3 }, {
    content: [{ type: 'text', text: '2 + 3 = 5' }, { type: 'text', text: '{"roots": []}' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }],
    structuredContent: { sum: 5 },
  });
  assert.match(md, /^# demo: add\n/);
  assert.match(md, /Arguments: `\{"a":2,"b":3\}`/);
  assert.match(md, /\n2 \+ 3 = 5\n/);
  assert.match(md, /```json\n\{"roots": \[\]\}\n```/);
  assert.match(md, /_\[image image\/png, 3 bytes\]_/);
  assert.match(md, /## Structured content\n\n```json\n\{\n {2}"sum": 5\n\}\n```/);
  assert.match(resultMarkdown('s', 't', undefined, { isError: true, content: [] }), /reported an error[\s\S]*no content/);
  // A text block that is the structured content as JSON is not repeated.
  const roots = resultMarkdown('s', 'list_roots', undefined, {
    content: [{ type: 'text', text: '{\n  "roots": [],\n  "listChangedCount": 0\n}' }],
    structuredContent: { listChangedCount: 0, roots: [] },
  });
  assert.doesNotMatch(roots, /Structured content/);
});

test('status bar text counts running servers and flags failures', () => {
  const states = new ServerStates();
  assert.equal(statusBarView('running', states.all()).text, '$(server) MCP: no servers');
  states.replaceAll([{ name: 'demo', state: 'running', protocolVersion: '2026-07-28' }, { name: 'b', state: 'starting' }]);
  assert.equal(statusBarView('running', states.all()).text, '$(sync~spin) MCP 1/2');
  states.update({ name: 'b', state: 'failed', message: 'exited with code 1' });
  const v = statusBarView('running', states.all());
  assert.equal(v.text, '$(warning) MCP 1/2');
  assert.equal(v.severity, 'warning');
  assert.match(v.tooltip, /b: failed — exited with code 1/);
  assert.match(v.tooltip, /demo: running \(2026-07-28\)/);
  states.update({ name: 'b', state: 'running' });
  assert.equal(statusBarView('running', states.all()).text, '$(server) MCP 2/2');
  assert.equal(statusBarView('failed', states.all()).severity, 'error');
  assert.equal(statusBarView('starting', []).text, '$(sync~spin) MCP');
});
