import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerStatusParams } from '../../src/contract';
import { trustCandidates } from '../../src/servers/trustModel';

const servers: ServerStatusParams[] = [
  { name: 'demo', state: 'running', source: 'editor settings' },
  { name: 'legacy', state: 'running', source: 'editor settings' },
  { name: 'files', state: 'failed', source: '/work/alpha/.vscode/mcp.json' },
  { name: 'waiting', state: 'needsTrust', source: '/work/alpha/.mcp.json' },
];
const scopes = { demo: 'user', legacy: 'workspace' } as const;

test('trust: Trust Server offers the servers waiting for trust', () => {
  assert.deepEqual(trustCandidates(servers, scopes, true).map((s) => s.name), ['waiting']);
});

test('trust: Revoke Trust offers trusted workspace servers, never the user-scoped settings ones', () => {
  assert.deepEqual(trustCandidates(servers, scopes, false).map((s) => s.name), ['legacy', 'files']);
  assert.deepEqual(trustCandidates([], scopes, false), []);
});
