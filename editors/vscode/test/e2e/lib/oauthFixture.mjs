// The OAuth-protected MCP server of the repository's fixtures (fixtures/python/oauth_server.py,
// the Python SDK's own authorization server, auto-approving /authorize), started on a free
// loopback port; and the browser's part of a sign-in, done as a browser would.

import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { peer } from './peers.mjs';
import { Skip } from './skip.mjs';

/**
 * Starts the fixture (extra command-line `args`, e.g. ['--token-lifetime', '60']) and waits for
 * its ready line. Throws Skip when the fixture or the Python peers are not there.
 */
export async function startOAuthServer(repo, { args = [], logFile } = {}) {
  const script = join(repo, 'fixtures', 'python', 'oauth_server.py');
  if (!existsSync(script)) throw new Skip(`no ${script} (the OAuth fixture)`);
  // The venv python with the `mcp` SDK.
  const python = peer(repo, 'MCP_PYTHON');
  if (!python || !existsSync(python)) throw new Skip('no MCP_PYTHON (run scripts/install-peers.sh)');
  const child = spawn(python, [script, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = [];
  child.stderr.on('data', (d) => stderr.push(d));
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OAuth fixture did not get ready in 30 s: ${Buffer.concat(stderr)}`)), 30000);
    child.once('exit', (code) => reject(new Error(`the OAuth fixture exited with ${code}: ${Buffer.concat(stderr)}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        if (msg.event !== 'ready') return;
        clearTimeout(timer);
        resolve(msg);
      } catch {
        // not a JSON line
      }
    });
  });
  const origin = new URL(ready.issuer).origin;
  return {
    url: ready.url,
    issuer: ready.issuer,
    /** The authorization server's host as the sidecar's prompts name it ("127.0.0.1"). */
    host: new URL(ready.issuer).hostname,
    /** Its host and port ("127.0.0.1:PORT"), as Show Servers names the issuer. */
    authority: new URL(ready.issuer).host,
    /** The fixture's record of registrations, authorizations, tokens, refreshes and revocations. */
    events: async () => (await (await fetch(`${origin}/test/events`)).json()).events,
    stderr: () => Buffer.concat(stderr).toString(),
    /** Ends the fixture; its stderr (one `[oauth] {event}` line each, never a token) goes to logFile. */
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => {
        child.once('exit', r);
        setTimeout(r, 5000);
      });
      if (child.exitCode === null) child.kill('SIGKILL');
      if (logFile) writeFileSync(logFile, Buffer.concat(stderr));
    },
  };
}

/**
 * The browser's part: GET the authorization URL without following redirects (the fixture
 * approves at once: 302 to the loopback redirect URI with code, state and iss), then GET that
 * redirect, which reaches the sidecar's listener. Returns both answers' statuses and the redirect.
 */
export async function completeInBrowser(authorizationUrl) {
  const authorize = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = authorize.headers.get('location');
  if (authorize.status !== 302 || !location) throw new Error(`the authorization URL answered ${authorize.status}, not a redirect`);
  const callback = await fetch(location, { redirect: 'manual' });
  return { authorizeStatus: authorize.status, redirect: location, callbackStatus: callback.status, callbackPage: await callback.text() };
}
