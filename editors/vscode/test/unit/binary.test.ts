import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bundledBinaryPath, checkVersionOutput, resolveBinary, type BinaryEnv } from '../../src/binary';

function fakeEnv(
  files: Record<string, 'exec' | 'file' | 'dir'>,
  searchPath = '',
  more: Partial<BinaryEnv> = {},
): BinaryEnv {
  return {
    home: '/home/me',
    searchPath,
    isFile: (p) => files[p] === 'exec' || files[p] === 'file',
    isDirectory: (p) => files[p] === 'dir',
    isExecutable: (p) => files[p] === 'exec',
    ...more,
  };
}

const EXT = '/home/me/.vscode/extensions/mcp-sidecar.mcp-sidecar-0.1.0-linux-x64';
const BUNDLED = `${EXT}/server/mcp-sidecar`;

test('binary: a setting may be a file, a folder, ~ or ${userHome}', () => {
  const env = fakeEnv({
    '/work/repo/target/debug': 'dir',
    '/work/repo/target/debug/mcp-sidecar': 'exec',
    '/home/me/bin/mcp-sidecar': 'exec',
  });
  const setting = (path: string) => ({ ok: true, path, from: 'setting' });
  assert.deepEqual(resolveBinary('/work/repo/target/debug/mcp-sidecar', env), setting('/work/repo/target/debug/mcp-sidecar'));
  assert.deepEqual(resolveBinary('/work/repo/target/debug', env), setting('/work/repo/target/debug/mcp-sidecar'));
  assert.deepEqual(resolveBinary('~/bin/mcp-sidecar', env), setting('/home/me/bin/mcp-sidecar'));
  assert.deepEqual(resolveBinary('${userHome}/bin/mcp-sidecar', env), setting('/home/me/bin/mcp-sidecar'));
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
  assert.deepEqual(resolveBinary('', onPath), { ok: true, path: '/opt/bin/mcp-sidecar', from: 'PATH' });
  const onlyRelative = resolveBinary('', fakeEnv({ 'bin/mcp-sidecar': 'exec', 'mcp-sidecar': 'exec' }, '.:bin'));
  assert.equal(onlyRelative.ok, false);
});

test('binary: empty setting searches PATH; problems name the path and the fix', () => {
  const env = fakeEnv({ '/usr/local/bin/mcp-sidecar': 'exec', '/tmp/notexec': 'file', '/tmp/empty': 'dir' }, '/usr/bin:/usr/local/bin');
  assert.deepEqual(resolveBinary('', env), { ok: true, path: '/usr/local/bin/mcp-sidecar', from: 'PATH' });
  const none = resolveBinary(undefined, fakeEnv({}, '/usr/bin'));
  assert.equal(none.ok, false);
  assert.match(!none.ok ? none.problem : '', /not on PATH/);
  assert.match(!none.ok ? none.problem : '', /carries no sidecar/);
  assert.match(!none.ok ? none.fix : '', /cargo build/);
  assert.match(!none.ok ? none.fix : '', /VSIX built for your platform/);
  const missing = resolveBinary('/nope/mcp-sidecar', env);
  assert.match(!missing.ok ? missing.problem : '', /\/nope\/mcp-sidecar .*does not exist/);
  const notExec = resolveBinary('/tmp/notexec', env);
  assert.match(!notExec.ok ? notExec.fix : '', /chmod \+x/);
  const emptyDir = resolveBinary('/tmp/empty', env);
  assert.match(!emptyDir.ok ? emptyDir.problem : '', /has no mcp-sidecar/);
});

test('binary: the order is binaryPath, then the bundled binary, then PATH', () => {
  const files = { [BUNDLED]: 'exec', '/usr/local/bin/mcp-sidecar': 'exec', '/opt/mine/mcp-sidecar': 'exec' } as const;
  const env = fakeEnv(files, '/usr/local/bin', { extensionPath: EXT, platform: 'linux' });
  // The setting overrides the bundled binary.
  assert.deepEqual(resolveBinary('/opt/mine/mcp-sidecar', env), { ok: true, path: '/opt/mine/mcp-sidecar', from: 'setting' });
  // A wrong setting is reported, never silently replaced by the bundled binary.
  const wrong = resolveBinary('/opt/other/mcp-sidecar', env);
  assert.equal(wrong.ok, false);
  assert.match(!wrong.ok ? wrong.problem : '', /\/opt\/other\/mcp-sidecar .*does not exist/);
  // Empty (or blank): the bundled binary before PATH.
  assert.deepEqual(resolveBinary('', env), { ok: true, path: BUNDLED, from: 'bundled' });
  assert.deepEqual(resolveBinary('  ', env), { ok: true, path: BUNDLED, from: 'bundled' });
  // Without a bundled binary (a VSIX for no platform, or a development checkout): PATH.
  const unbundled = fakeEnv({ '/usr/local/bin/mcp-sidecar': 'exec' }, '/usr/local/bin', { extensionPath: EXT, platform: 'linux' });
  assert.deepEqual(resolveBinary('', unbundled), { ok: true, path: '/usr/local/bin/mcp-sidecar', from: 'PATH' });
});

test('binary: a bundled binary must be executable; else PATH, else a problem naming it', () => {
  const notExec = { [BUNDLED]: 'file' } as const;
  const onPath = fakeEnv({ ...notExec, '/usr/bin/mcp-sidecar': 'exec' }, '/usr/bin', { extensionPath: EXT, platform: 'linux' });
  assert.deepEqual(resolveBinary('', onPath), { ok: true, path: '/usr/bin/mcp-sidecar', from: 'PATH' });
  const nowhere = resolveBinary('', fakeEnv(notExec, '/usr/bin', { extensionPath: EXT, platform: 'linux' }));
  assert.equal(nowhere.ok, false);
  assert.match(!nowhere.ok ? nowhere.problem : '', new RegExp(`the bundled ${BUNDLED} is not executable`));
});

test('binary: on Windows the bundled binary and PATH entries are mcp-sidecar.exe', () => {
  const ext = 'C:\\Users\\me\\.vscode\\extensions\\mcp-sidecar.mcp-sidecar-0.1.0-win32-x64';
  const bundled = bundledBinaryPath(ext, 'win32');
  assert.match(bundled, /server[\\/]mcp-sidecar\.exe$/);
  assert.deepEqual(resolveBinary('', fakeEnv({ [bundled]: 'exec' }, '', { extensionPath: ext, platform: 'win32' })), {
    ok: true,
    path: bundled,
    from: 'bundled',
  });
  // A folder setting names mcp-sidecar.exe inside it.
  const folder = fakeEnv({ '/opt/sc': 'dir', '/opt/sc/mcp-sidecar.exe': 'exec', '/opt/sc/mcp-sidecar': 'exec' }, '', { platform: 'win32' });
  assert.deepEqual(resolveBinary('/opt/sc', folder), { ok: true, path: '/opt/sc/mcp-sidecar.exe', from: 'setting' });
  assert.equal(bundledBinaryPath('/ext', 'linux'), '/ext/server/mcp-sidecar');
});

test('binary: --version must say mcp-sidecar', () => {
  assert.deepEqual(checkVersionOutput({ path: '/b', from: 'bundled' }, 'mcp-sidecar 0.1.0\n'), { ok: true, path: '/b', from: 'bundled' });
  const wrong = checkVersionOutput({ path: '/bin/ls', from: 'setting' }, 'ls (GNU coreutils) 9.1\n');
  assert.equal(wrong.ok, false);
  assert.match(!wrong.ok ? wrong.problem : '', /is not mcp-sidecar/);
  assert.match(!checkVersionOutput({ path: '/b', from: 'PATH' }, '').ok ? 'bad' : '', /bad/);
});
