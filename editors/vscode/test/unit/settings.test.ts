import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkVersionOutput, resolveBinary, type BinaryEnv } from '../../src/binary';
import { explicitValue, serversWithScopes, sidecarArgs, sidecarSettings } from '../../src/settings';

test('servers carry the scope of the definition that wins', () => {
  const r = serversWithScopes({
    globalValue: { demo: { command: 'mcp-sidecar', args: ['demo-server'] }, shared: { command: 'a' } },
    workspaceValue: { shared: { command: 'b' }, local: { command: 'c' } },
  });
  assert.deepEqual(r.servers, {
    demo: { command: 'mcp-sidecar', args: ['demo-server'] },
    shared: { command: 'b' },
    local: { command: 'c' },
  });
  assert.deepEqual(r.serverScopes, { demo: 'user', shared: 'workspace', local: 'workspace' });
  assert.deepEqual(serversWithScopes(undefined), { servers: {}, serverScopes: {} });
  assert.deepEqual(serversWithScopes({ globalValue: ['not', 'an', 'object'] as never }), { servers: {}, serverScopes: {} });
});

test('the settings object: only what was set; default policies fill servers that set none', () => {
  const bare = sidecarSettings({ servers: { globalValue: { demo: { command: 'x' } } } });
  assert.deepEqual(bare, { servers: { demo: { command: 'x' } }, serverScopes: { demo: 'user' } });
  const s = sidecarSettings({
    servers: {
      globalValue: { demo: { command: 'x' }, strict: { command: 'y', elicitation: { policy: 'decline' } } },
      workspaceValue: { odd: 'not an object' },
    },
    samplingProvider: 'editor',
    samplingPolicy: 'never',
    elicitationPolicy: 'acceptDefaults',
    elicitationRateLimit: '5/min',
  });
  assert.deepEqual(s, {
    servers: {
      demo: { command: 'x', elicitation: { policy: 'acceptDefaults' }, sampling: { policy: 'never' } },
      strict: { command: 'y', elicitation: { policy: 'decline' }, sampling: { policy: 'never' } },
      odd: 'not an object',
    },
    serverScopes: { demo: 'user', strict: 'user', odd: 'workspace' },
    sampling: { provider: 'editor' },
    elicitation: { rateLimit: '5/min' },
  });
  assert.equal(explicitValue({ globalValue: 'a', workspaceValue: 'b' }), 'b');
  assert.equal(explicitValue({}), undefined);
  assert.deepEqual(sidecarArgs('debug'), ['lsp', '--log-level', 'debug']);
  assert.deepEqual(sidecarArgs('bogus'), ['lsp', '--log-level', 'info']);
});

function fakeEnv(files: Record<string, 'exec' | 'file' | 'dir'>, searchPath = ''): BinaryEnv {
  return {
    home: '/home/me',
    workspaceFolder: '/work/repo',
    searchPath,
    isFile: (p) => files[p] === 'exec' || files[p] === 'file',
    isDirectory: (p) => files[p] === 'dir',
    isExecutable: (p) => files[p] === 'exec',
  };
}

test('binary: a setting may be a file, a folder, ~ or relative to the workspace', () => {
  const env = fakeEnv({
    '/work/repo/target/debug': 'dir',
    '/work/repo/target/debug/mcp-sidecar': 'exec',
    '/home/me/bin/mcp-sidecar': 'exec',
  });
  assert.deepEqual(resolveBinary('/work/repo/target/debug/mcp-sidecar', env), { ok: true, path: '/work/repo/target/debug/mcp-sidecar' });
  assert.deepEqual(resolveBinary('/work/repo/target/debug', env), { ok: true, path: '/work/repo/target/debug/mcp-sidecar' });
  assert.deepEqual(resolveBinary('~/bin/mcp-sidecar', env), { ok: true, path: '/home/me/bin/mcp-sidecar' });
  assert.deepEqual(resolveBinary('${workspaceFolder}/target/debug', env), { ok: true, path: '/work/repo/target/debug/mcp-sidecar' });
  assert.deepEqual(resolveBinary('target/debug/mcp-sidecar', env), { ok: true, path: '/work/repo/target/debug/mcp-sidecar' });
});

test('binary: empty setting searches PATH; problems name the path and the fix', () => {
  const env = fakeEnv({ '/usr/local/bin/mcp-sidecar': 'exec', '/tmp/notexec': 'file', '/tmp/empty': 'dir' }, '/usr/bin:/usr/local/bin');
  assert.deepEqual(resolveBinary('', env), { ok: true, path: '/usr/local/bin/mcp-sidecar' });
  const none = resolveBinary(undefined, fakeEnv({}, '/usr/bin'));
  assert.equal(none.ok, false);
  assert.match(!none.ok ? none.problem : '', /not on PATH/);
  assert.match(!none.ok ? none.fix : '', /cargo build/);
  const missing = resolveBinary('/nope/mcp-sidecar', env);
  assert.match(!missing.ok ? missing.problem : '', /\/nope\/mcp-sidecar .*does not exist/);
  const notExec = resolveBinary('/tmp/notexec', env);
  assert.match(!notExec.ok ? notExec.fix : '', /chmod \+x/);
  const emptyDir = resolveBinary('/tmp/empty', env);
  assert.match(!emptyDir.ok ? emptyDir.problem : '', /has no mcp-sidecar/);
  const badVar = resolveBinary('${env:HOME}/x', env);
  assert.match(!badVar.ok ? badVar.problem : '', /variable/);
});

test('binary: --version must say mcp-sidecar', () => {
  assert.deepEqual(checkVersionOutput('/b', 'mcp-sidecar 0.1.0\n'), { ok: true, path: '/b' });
  const wrong = checkVersionOutput('/bin/ls', 'ls (GNU coreutils) 9.1\n');
  assert.equal(wrong.ok, false);
  assert.match(!wrong.ok ? wrong.problem : '', /is not mcp-sidecar/);
  assert.match(!checkVersionOutput('/b', '').ok ? 'bad' : '', /bad/);
});
