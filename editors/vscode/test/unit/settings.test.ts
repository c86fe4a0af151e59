import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

test('capabilities: serverScopes and openApp are declared beside the UI primitives', () => {
  assert.deepEqual(editorCapabilities(false), {
    inputBox: true,
    quickPick: true,
    editDraft: true,
    clipboard: true,
    languageModel: false,
    serverScopes: true,
    openApp: true,
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
  for (const key of ['sampling.provider', 'sampling.policy', 'elicitation.policy', 'elicitation.rateLimit', 'elicitation.idleLimit', 'gateway.enabled', 'gateway.questions']) {
    assert.equal(props[`mcpSidecar.${key}`].scope, 'application', key);
  }
  const untrusted = manifest.capabilities?.untrustedWorkspaces;
  assert.equal(untrusted?.supported, 'limited');
  assert.equal(typeof untrusted?.description, 'string');
  const restricted = untrusted?.restrictedConfigurations ?? [];
  assert.ok(restricted.includes('mcpSidecar.servers'), JSON.stringify(restricted));
  for (const key of restricted) assert.ok(props[key], `${key} is a contributed setting`);
});

test("gateway.enabled: sent only when the person set it, a workspace's value ignored", () => {
  const base = { servers: undefined, workspaceTrusted: true };
  assert.equal(sidecarSettings(base).gateway, undefined);
  assert.deepEqual(sidecarSettings({ ...base, gatewayEnabled: { globalValue: false } }).gateway, { enabled: false });
  assert.deepEqual(sidecarSettings({ ...base, gatewayEnabled: { globalValue: true, workspaceValue: false } }).gateway, { enabled: true });
  assert.equal(sidecarSettings({ ...base, gatewayEnabled: { workspaceValue: false, workspaceFolderValue: false } }).gateway, undefined);
  assert.deepEqual(sidecarSettings({ ...base, gatewayQuestions: { globalValue: 'agent', workspaceValue: 'editor' } }).gateway, { questions: 'agent' });
  assert.equal(sidecarSettings({ ...base, gatewayQuestions: { workspaceValue: 'agent' } }).gateway, undefined);
});
