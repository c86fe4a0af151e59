import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkVersionOutput, resolveBinary, type BinaryEnv } from '../../src/binary';
import { editorCapabilities } from '../../src/capabilities';
import { serversWithScopes, sidecarArgs, sidecarSettings, userValue, type ExtensionSettings } from '../../src/settings';

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
  const bare = sidecarSettings({ servers: { globalValue: { demo: { command: 'x' } } }, workspaceTrusted: true });
  assert.deepEqual(bare, { servers: { demo: { command: 'x' } }, serverScopes: { demo: 'user' }, workspaceTrusted: true });
  const s = sidecarSettings({
    servers: {
      globalValue: { demo: { command: 'x' }, strict: { command: 'y', elicitation: { policy: 'decline' } } },
      workspaceValue: { odd: 'not an object' },
    },
    samplingProvider: { globalValue: 'editor' },
    samplingPolicy: { globalValue: 'never' },
    elicitationPolicy: { globalValue: 'acceptDefaults' },
    elicitationRateLimit: { globalValue: '5/min' },
    workspaceTrusted: true,
  });
  assert.deepEqual(s, {
    servers: {
      demo: { command: 'x', elicitation: { policy: 'acceptDefaults' }, sampling: { policy: 'never' } },
      strict: { command: 'y', elicitation: { policy: 'decline' }, sampling: { policy: 'never' } },
      odd: 'not an object',
    },
    serverScopes: { demo: 'user', strict: 'user', odd: 'workspace' },
    workspaceTrusted: true,
    sampling: { provider: 'editor' },
    elicitation: { rateLimit: '5/min' },
  });
  assert.equal(userValue({ globalValue: 'a', workspaceValue: 'b', workspaceFolderValue: 'c' }), 'a');
  assert.equal(userValue({ workspaceValue: 'b', workspaceFolderValue: 'c' }), undefined);
  assert.equal(userValue(undefined), undefined);
  assert.deepEqual(sidecarArgs('debug'), ['lsp', '--log-level', 'debug']);
  assert.deepEqual(sidecarArgs('bogus'), ['lsp', '--log-level', 'info']);
});

const POLICY_KEYS = ['samplingProvider', 'samplingPolicy', 'elicitationPolicy', 'elicitationRateLimit', 'elicitationIdleLimit'] as const;

test('policies and limits: a workspace value of each is ignored, the user value is used', () => {
  const workspaceOnly = { workspaceValue: 'auto', workspaceFolderValue: 'auto' };
  const servers = { globalValue: { mine: { command: 'x' } }, workspaceValue: { theirs: { command: 'y' } } };
  for (const key of POLICY_KEYS) {
    const s = sidecarSettings({ servers, [key]: workspaceOnly, workspaceTrusted: true } as ExtensionSettings);
    assert.deepEqual(
      s,
      { servers: { mine: { command: 'x' }, theirs: { command: 'y' } }, serverScopes: { mine: 'user', theirs: 'workspace' }, workspaceTrusted: true },
      `a workspace value of ${key} is ignored`,
    );
  }
  // All at once, with the person's own values beside the workspace's: the person's win everywhere.
  const both = (globalValue: string) => ({ globalValue, workspaceValue: 'auto', workspaceFolderValue: 'auto' });
  const s = sidecarSettings({
    servers,
    samplingProvider: both('manual'),
    samplingPolicy: both('ask'),
    elicitationPolicy: both('decline'),
    elicitationRateLimit: both('3/min'),
    elicitationIdleLimit: both('5m'),
    workspaceTrusted: true,
  });
  assert.deepEqual(s.servers, {
    mine: { command: 'x', elicitation: { policy: 'decline' }, sampling: { policy: 'ask' } },
    theirs: { command: 'y', elicitation: { policy: 'decline' }, sampling: { policy: 'ask' } },
  });
  assert.deepEqual(s.sampling, { provider: 'manual' });
  assert.deepEqual(s.elicitation, { rateLimit: '3/min', idleLimit: '5m' });
  assert.ok(!JSON.stringify(s).includes('auto'), JSON.stringify(s));
});

test('workspaceTrusted rides in every settings object', () => {
  assert.equal(sidecarSettings({ servers: undefined, workspaceTrusted: false }).workspaceTrusted, false);
  assert.equal(sidecarSettings({ servers: undefined, workspaceTrusted: true }).workspaceTrusted, true);
  assert.deepEqual(sidecarSettings({ servers: { workspaceValue: { w: { command: 'y' } } }, workspaceTrusted: false }), {
    servers: { w: { command: 'y' } },
    serverScopes: { w: 'workspace' },
    workspaceTrusted: false,
  });
});

test('capabilities: serverScopes is declared beside the UI primitives', () => {
  assert.deepEqual(editorCapabilities(false), {
    inputBox: true,
    quickPick: true,
    editDraft: true,
    clipboard: true,
    languageModel: false,
    serverScopes: true,
  });
  assert.equal(editorCapabilities(true).languageModel, true);
});

interface Manifest {
  capabilities?: { untrustedWorkspaces?: { supported?: unknown; description?: unknown; restrictedConfigurations?: string[] } };
  contributes: { configuration: { properties: Record<string, { scope?: string }> } };
}

test('package.json: the binary and the policies are not workspace settings; Restricted Mode is declared', () => {
  // The unit bundle runs from out/unit; the manifest is two folders up.
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as Manifest;
  const props = manifest.contributes.configuration.properties;
  assert.equal(props['mcpSidecar.binaryPath'].scope, 'machine');
  for (const key of ['sampling.provider', 'sampling.policy', 'elicitation.policy', 'elicitation.rateLimit', 'elicitation.idleLimit']) {
    assert.equal(props[`mcpSidecar.${key}`].scope, 'application', key);
  }
  const untrusted = manifest.capabilities?.untrustedWorkspaces;
  assert.equal(untrusted?.supported, 'limited');
  assert.equal(typeof untrusted?.description, 'string');
  const restricted = untrusted?.restrictedConfigurations ?? [];
  assert.ok(restricted.includes('mcpSidecar.servers'), JSON.stringify(restricted));
  for (const key of restricted) assert.ok(props[key], `${key} is a contributed setting`);
});

function fakeEnv(files: Record<string, 'exec' | 'file' | 'dir'>, searchPath = ''): BinaryEnv {
  return {
    home: '/home/me',
    searchPath,
    isFile: (p) => files[p] === 'exec' || files[p] === 'file',
    isDirectory: (p) => files[p] === 'dir',
    isExecutable: (p) => files[p] === 'exec',
  };
}

test('binary: a setting may be a file, a folder, ~ or ${userHome}', () => {
  const env = fakeEnv({
    '/work/repo/target/debug': 'dir',
    '/work/repo/target/debug/mcp-sidecar': 'exec',
    '/home/me/bin/mcp-sidecar': 'exec',
  });
  assert.deepEqual(resolveBinary('/work/repo/target/debug/mcp-sidecar', env), { ok: true, path: '/work/repo/target/debug/mcp-sidecar' });
  assert.deepEqual(resolveBinary('/work/repo/target/debug', env), { ok: true, path: '/work/repo/target/debug/mcp-sidecar' });
  assert.deepEqual(resolveBinary('~/bin/mcp-sidecar', env), { ok: true, path: '/home/me/bin/mcp-sidecar' });
  assert.deepEqual(resolveBinary('${userHome}/bin/mcp-sidecar', env), { ok: true, path: '/home/me/bin/mcp-sidecar' });
});

test('binary: nothing is resolved inside the workspace (no relative paths, no ${workspaceFolder})', () => {
  // Even with these files in the working directory or a folder, the settings are refused.
  const env = fakeEnv({ 'target/debug/mcp-sidecar': 'exec', 'mcp-sidecar': 'exec', './mcp-sidecar': 'exec' });
  for (const setting of ['target/debug/mcp-sidecar', 'mcp-sidecar', './mcp-sidecar', '../x/mcp-sidecar', '~other/mcp-sidecar']) {
    const r = resolveBinary(setting, env);
    assert.equal(r.ok, false, setting);
    assert.match(!r.ok ? r.problem : '', /is a relative path; it is not resolved inside the workspace/, setting);
    assert.match(!r.ok ? r.fix : '', /absolute path/, setting);
  }
  for (const setting of ['${workspaceFolder}/target/debug', '${workspaceFolder:alpha}/mcp-sidecar', '${env:HOME}/x']) {
    const r = resolveBinary(setting, env);
    assert.equal(r.ok, false, setting);
    assert.match(!r.ok ? r.problem : '', /uses a variable other than \$\{userHome\}/, setting);
    assert.match(!r.ok ? r.fix : '', /absolute path/, setting);
  }
  // PATH: relative entries are skipped (they would be looked up in the sidecar's working
  // directory, a workspace folder).
  const onPath = fakeEnv({ 'bin/mcp-sidecar': 'exec', 'mcp-sidecar': 'exec', '/opt/bin/mcp-sidecar': 'exec' }, '.:bin::/opt/bin');
  assert.deepEqual(resolveBinary('', onPath), { ok: true, path: '/opt/bin/mcp-sidecar' });
  const onlyRelative = resolveBinary('', fakeEnv({ 'bin/mcp-sidecar': 'exec', 'mcp-sidecar': 'exec' }, '.:bin'));
  assert.equal(onlyRelative.ok, false);
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
});

test('binary: --version must say mcp-sidecar', () => {
  assert.deepEqual(checkVersionOutput('/b', 'mcp-sidecar 0.1.0\n'), { ok: true, path: '/b' });
  const wrong = checkVersionOutput('/bin/ls', 'ls (GNU coreutils) 9.1\n');
  assert.equal(wrong.ok, false);
  assert.match(!wrong.ok ? wrong.problem : '', /is not mcp-sidecar/);
  assert.match(!checkVersionOutput('/b', '').ok ? 'bad' : '', /bad/);
});
