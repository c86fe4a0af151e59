import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerSummary } from '../../src/contract';
import {
  canSignIn,
  canSignOut,
  describeAuth,
  issuerHost,
  roughDuration,
  signInCandidates,
  signOutCandidates,
} from '../../src/servers/authModel';
import { ServerStates, STATE_ICONS, statusBarView } from '../../src/servers/serverStates';

const row = (name: string, over: Partial<ServerSummary>): ServerSummary => ({
  name,
  state: 'running',
  transport: 'http',
  toolCount: 0,
  restarts: 0,
  ...over,
});

const servers: ServerSummary[] = [
  row('demo', { transport: 'stdio' }),
  row('plain', {}),
  row('signed', { auth: { signedIn: true, issuer: 'https://auth.example.com', scopes: ['read'], expiresAt: 1000 } }),
  row('linear', { state: 'needsAuth', message: 'needs you to sign in at mcp.linear.app', auth: { signedIn: false } }),
  row('out', { state: 'stopped', auth: { signedIn: false, issuer: 'https://auth.example.com' } }),
];

test('auth: Sign In for http servers not signed in (needsAuth first), Sign Out for signed-in ones, never stdio', () => {
  assert.deepEqual(signInCandidates(servers).map((s) => s.name), ['linear', 'out', 'plain']);
  assert.deepEqual(signOutCandidates(servers).map((s) => s.name), ['signed']);
  const stdioSignedIn = row('odd', { transport: 'stdio', auth: { signedIn: true } });
  assert.equal(canSignIn(stdioSignedIn), false);
  assert.equal(canSignOut(stdioSignedIn), false);
  // needsAuth is a sign-in to do even if a stale row still says signed in.
  assert.equal(canSignIn(row('x', { state: 'needsAuth', auth: { signedIn: true } })), true);
  assert.equal(canSignIn(servers[2]), false);
});

test('auth: the description names the issuer host, scopes and expiry; nothing for a server without OAuth', () => {
  assert.equal(describeAuth(undefined, 0), undefined);
  assert.equal(
    describeAuth({ signedIn: true, issuer: 'https://auth.example.com/tenant/1', scopes: ['read', 'write'], expiresAt: 1000 + 42 * 60 }, 1000),
    'signed in at auth.example.com · read, write · expires in 42 min',
  );
  assert.equal(describeAuth({ signedIn: true }, 0), 'signed in');
  assert.equal(describeAuth({ signedIn: false, issuer: 'https://127.0.0.1:8123' }, 0), 'not signed in at 127.0.0.1:8123');
  assert.match(describeAuth({ signedIn: true, expiresAt: 100 }, 400) ?? '', /expired 5 min ago/);
  assert.equal(issuerHost('not a url'), 'not a url');
  assert.deepEqual([30, 61, 3600, 3600 + 5 * 60, 49 * 3600].map(roughDuration), ['30 s', '1 min', '1 h', '1 h 5 min', '2 days']);
});

test('auth: the status bar names the server that needs a sign-in, and its click signs in to it', () => {
  const states = new ServerStates();
  states.replaceAll([
    { name: 'demo', state: 'running' },
    { name: 'linear', state: 'needsAuth', message: 'needs you to sign in at mcp.linear.app' },
  ]);
  let v = statusBarView('running', states.all());
  assert.equal(v.text, '$(key) MCP: linear needs sign-in');
  assert.deepEqual(v.command, { id: 'mcpSidecar.signIn', args: ['linear'] });
  assert.equal(v.severity, 'warning');
  assert.match(v.tooltip, /linear: needsAuth — needs you to sign in at mcp\.linear\.app/);
  states.update({ name: 'github', state: 'needsAuth' });
  v = statusBarView('running', states.all());
  assert.equal(v.text, '$(key) MCP: 2 servers need sign-in');
  assert.deepEqual(v.command, { id: 'mcpSidecar.signIn', args: [] }, 'several: Sign In asks which');
  states.update({ name: 'github', state: 'running' });
  states.update({ name: 'linear', state: 'running' });
  v = statusBarView('running', states.all());
  assert.equal(v.text, '$(server) MCP 3/3');
  assert.deepEqual(v.command, { id: 'mcpSidecar.showServers', args: [] });
  assert.equal(STATE_ICONS.needsAuth, '$(key)');
  // The sidecar's own state comes first.
  states.update({ name: 'linear', state: 'needsAuth' });
  assert.equal(statusBarView('failed', states.all()).text, '$(error) MCP');
});

test('a server taken out of the editor settings leaves the list (the sidecar says nothing of it)', () => {
  const states = new ServerStates();
  states.replaceAll([
    { name: 'demo', state: 'running', source: 'editor settings' },
    { name: 'secure', state: 'needsAuth', source: 'editor settings' },
    { name: 'files', state: 'running', source: '/work/alpha/.vscode/mcp.json' },
  ]);
  assert.equal(states.forgetRemovedSettingsServers(['demo', 'secure']), false);
  assert.equal(states.forgetRemovedSettingsServers(['demo']), true);
  assert.deepEqual(states.all().map((s) => s.name), ['demo', 'files'], 'servers from files stay: the sidecar reads those');
  assert.equal(statusBarView('running', states.all()).text, '$(server) MCP 2/2');
});
