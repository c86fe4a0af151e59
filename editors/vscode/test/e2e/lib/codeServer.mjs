// A throw-away code-server: a fresh profile (user data, extensions, settings), the packaged VSIX
// installed with --install-extension, the server on a free loopback port, stopped with its children.

import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdirSync, rmSync, writeFileSync, openSync } from 'node:fs';
import { join } from 'node:path';

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export function prepareProfile(dir, { userSettings, machineSettings, keybindings = [] }) {
  rmSync(dir, { recursive: true, force: true });
  const userData = join(dir, 'user-data');
  const extensions = join(dir, 'extensions');
  mkdirSync(join(userData, 'User'), { recursive: true });
  mkdirSync(join(userData, 'Machine'), { recursive: true });
  mkdirSync(extensions, { recursive: true });
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify(userSettings, null, 2));
  writeFileSync(join(userData, 'User', 'keybindings.json'), JSON.stringify(keybindings, null, 2));
  // code-server is a remote window: machine-scoped settings (the binary path) live here.
  writeFileSync(join(userData, 'Machine', 'settings.json'), JSON.stringify(machineSettings, null, 2));
  return { userData, extensions, machineSettingsFile: join(userData, 'Machine', 'settings.json') };
}

export function installExtension(codeServer, profile, vsix) {
  execFileSync(codeServer, ['--user-data-dir', profile.userData, '--extensions-dir', profile.extensions, '--install-extension', vsix, '--force'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120000,
  });
}

/** `workspaceTrust: true` leaves VS Code's workspace trust on (the default run turns it off). */
export async function startCodeServer(codeServer, profile, { port, logFile, env, workspaceTrust = false }) {
  const out = openSync(logFile, 'a');
  const child = spawn(
    codeServer,
    [
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
      '--disable-getting-started-override',
      '--user-data-dir', profile.userData,
      '--extensions-dir', profile.extensions,
    ],
    { detached: true, stdio: ['ignore', out, out], env: { ...process.env, ...env } },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with code ${child.exitCode}; see ${logFile}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`code-server did not answer on ${url} within 60 s; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        return;
      }
      const until = Date.now() + 5000;
      while (child.exitCode === null && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      try {
        if (child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    },
  };
}
