// OAuth sign-in (issue 13) against the repository's OAuth-protected fixture (the Python SDK's own
// authorization server, auto-approving): an http server added to the User settings answers 401,
// the sidecar asks "<server> needs you to sign in at <host>" → Sign in; the URL consent: Copy URL
// puts the authorization URL on the clipboard (shown again as "Copy URL (copied)"), Open sends it
// to the browser (window/showDocument external); the test then does the browser's part by
// fetching the authorization URL and its redirect to the sidecar's loopback listener, which
// closes the "waiting for the sign-in" prompt; the server runs and a tool call carries the grant
// (whoami). Show Servers shows the sign-in (issuer host, expiry; no token); its Sign Out revokes
// the grant at the fixture and the status bar says the server needs sign-in; clicking it runs
// Sign In, straight to the consent prompt, and Cancel leaves it so; so does Escape after the
// palette's Sign In to Server, which offers only that server.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { completeInBrowser, startOAuthServer } from '../lib/oauthFixture.mjs';
import { Skip } from '../lib/skip.mjs';
import {
  clickStatusBar,
  closeQuickInput,
  notifications,
  pick,
  quickInput,
  runCommand,
  statusBarTexts,
  waitEditorText,
  waitFor,
  waitQuickInput,
  waitQuickInputClosed,
  waitStatusBar,
} from '../lib/workbench.mjs';

export const name = 'OAuth sign-in: the prompt, Copy URL, Open and the browser step, a tool call, Sign Out, the status bar';
export const timeoutMs = 150000;

const SERVER = 'secure';

export async function run(ctx) {
  const { page, workspace, repo, artifacts, screenshot, setUserSetting, outputLog, log } = ctx;
  const fixture = await startOAuthServer(repo, { logFile: join(artifacts, 'oauth-fixture.log') });
  const before = outputLog().length;
  // Nothing leaves the machine, and the browser's part is the test's: the page VS Code opens for
  // the authorization URL (directly, or through code-server's port proxy) gets a stub.
  const opened = [];
  const stub = (route) => {
    opened.push(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>stub</title>sign-in stub' });
  };
  const isAuthorize = (url) => url.pathname.endsWith('/authorize');
  await page.context().route(isAuthorize, stub);
  const servers = workspace.userSettings['mcpSidecar.servers'];
  try {
    await setUserSetting('mcpSidecar.servers', { ...servers, [SERVER]: { type: 'http', url: fixture.url } });

    // 1. The 401: "Sign in" / "Not now".
    const asked = await waitFor('the sign-in question', async () => {
      const q = await quickInput(page);
      if (q?.title.includes('needs you to sign in')) return q;
      if (/signing in \(OAuth\) from the editor is not available yet/.test(outputLog().slice(before))) throw new Skip('this sidecar cannot sign in yet');
      return null;
    }, { timeout: 30000, interval: 200 }).catch(async (error) => {
      log(`  notifications: ${JSON.stringify(await notifications(page))}`);
      throw error;
    });
    assert.equal(asked.title, `${SERVER} needs you to sign in at ${fixture.host}`);
    assert.deepEqual(asked.rows.map((r) => r.label), ['Sign in', 'Not now']);
    assert.match(asked.rows[0].aria, /asks before it opens the sign-in page in the browser/);
    await screenshot('oauth-sign-in-question');
    await pick(page, 'Sign in');

    // 2. The URL consent: Copy URL, then Open.
    const consentTitle = `${SERVER}: sign in at ${fixture.host}`;
    const consent = await waitQuickInput(page, consentTitle);
    const openLabel = `Open ${fixture.host} in the browser`;
    assert.deepEqual(consent.rows.map((r) => r.label), [openLabel, 'Copy URL', 'Paste the address you were redirected to', 'Cancel']);
    await screenshot('oauth-consent');
    await pick(page, 'Copy URL');
    const url = await waitFor('the authorization URL on the clipboard', async () => {
      const text = await page.evaluate(() => navigator.clipboard.readText()).catch(() => '');
      return text.startsWith(`${fixture.issuer}/authorize?`) ? text : null;
    });
    const params = new URL(url).searchParams;
    assert.equal(params.get('response_type'), 'code');
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.match(params.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const again = await waitFor('the consent prompt again, Copy URL (copied)', async () => {
      const q = await quickInput(page);
      return q?.title === consentTitle && q.rows.some((r) => r.label === 'Copy URL (copied)') ? q : null;
    });
    assert.ok(again.rows.some((r) => r.aria.includes(url.slice(0, 150))), 'Open shows the authorization URL (cut to a line)');
    const tabOpened = page.context().waitForEvent('page', { timeout: 15000 }).catch(() => null);
    await pick(page, openLabel);

    // 3. Waiting for the browser; the browser's part; the listener closes the prompt.
    const waiting = await waitQuickInput(page, `${SERVER}: waiting for the sign-in at ${fixture.host}`);
    assert.deepEqual(waiting.rows.map((r) => r.label), ['Paste the address you were redirected to', 'Cancel sign-in']);
    // The browser's tab is closed again, as the person would: the workbench keeps the keyboard.
    await (await tabOpened)?.close();
    await waitFor('the browser to get the authorization URL', async () => (opened.length ? true : null), { timeout: 15000 }).catch(() => {
      // VS Code may ask before opening an untrusted link; the sign-in does not depend on it.
      log(`  no tab opened for the authorization URL (${opened.length})`);
    });
    if (opened.length) {
      // code-server sends a loopback URL through its port proxy (/proxy/PORT/authorize?...).
      const query = (u) => JSON.stringify([...new URL(u).searchParams].sort());
      assert.equal(query(opened[0]), query(url), `the browser got the authorization URL (${opened[0]})`);
      log(`  the browser was sent to ${opened[0].replace(/\?.*/, '?…')}`);
    }
    const browser = await completeInBrowser(url);
    assert.equal(browser.callbackStatus, 200, `the sidecar's listener answered the redirect: ${browser.callbackPage}`);
    await waitQuickInputClosed(page, { timeout: 10000 });
    await waitStatusBar(page, /MCP 3\/3/, { timeout: 30000 });
    await screenshot('oauth-signed-in');

    // A tool call carries the grant.
    await runCommand(page, 'MCP Sidecar: Call Tool');
    await waitQuickInput(page, '(1/2)');
    await pick(page, SERVER);
    await waitQuickInput(page, `MCP Sidecar: Call Tool (${SERVER})`);
    await pick(page, 'whoami');
    const result = await waitEditorText(page, /"account"/);
    assert.match(result, new RegExp(`# ${SERVER}: whoami`));
    assert.match(result, /"account": "user"/);

    // Show Servers: the sign-in, never a token.
    await runCommand(page, 'MCP Sidecar: Show Servers');
    const list = await waitQuickInput(page, 'MCP Servers');
    const row = list.rows.find((r) => r.label === SERVER);
    assert.ok(row, `${SERVER} is listed (got ${list.rows.map((r) => r.label)})`);
    await screenshot('oauth-show-servers');
    log(`  Show Servers: "${row.aria}"`);
    assert.match(row.aria, new RegExp(`signed in at ${escape(fixture.authority)}`));
    assert.match(row.aria, /expires in \d/);
    const tokens = (await (await fetch(`${fixture.issuer}/test/events`)).json()).tokens;
    for (const token of [...tokens.access, ...tokens.refresh]) {
      assert.ok(!list.rows.some((r) => r.aria.includes(token)), 'no token in the server list');
      assert.ok(!outputLog().includes(token), 'no token in the output channel');
    }
    await pick(page, SERVER);
    const actions = await waitQuickInput(page, `${SERVER}: running`);
    assert.ok(actions.rows.some((r) => r.label === 'Sign Out'), `Sign Out is offered (got ${actions.rows.map((r) => r.label)})`);
    assert.ok(!actions.rows.some((r) => r.label === 'Sign In'), 'no Sign In while signed in');
    await pick(page, 'Sign Out');
    await waitStatusBar(page, /Signed out of secure \(the grant was revoked\)/);
    const text = await waitStatusBar(page, /MCP: secure needs sign-in/, { timeout: 15000 });
    log(`  status bar: "${text}"`);
    const revokes = (await fixture.events()).filter((e) => e.event === 'revoke' && e.via === 'endpoint');
    assert.ok(revokes.length > 0, 'the fixture recorded the revocation');
    await screenshot('oauth-needs-sign-in');

    // The status bar's click is Sign In: straight to the consent, no "Sign in / Not now".
    await clickStatusBar(page, /MCP: secure needs sign-in/);
    await waitQuickInput(page, consentTitle);
    await pick(page, 'Cancel');
    await waitStatusBar(page, /Sign-in to secure cancelled/);
    assert.ok((await statusBarTexts(page)).some((t) => /MCP: secure needs sign-in/.test(t)), 'still needs sign-in');

    // The palette's Sign In asks which server: only the http one that needs it. (The first
    // "cancelled" message goes first, after its 5 s, so the second one is this sign-in's.)
    await waitFor('the status bar message to go', async () => !(await statusBarTexts(page)).some((t) => /cancelled/.test(t)) || null, { timeout: 10000 });
    await runCommand(page, 'MCP Sidecar: Sign In to Server');
    const which = await waitQuickInput(page, 'Sign in to which MCP server?');
    assert.deepEqual(which.rows.map((r) => r.label), [SERVER], 'demo and legacy (stdio) are not offered');
    assert.match(which.rows[0].aria, /needsAuth/);
    await pick(page, SERVER);
    await waitQuickInput(page, consentTitle);
    await page.keyboard.press('Escape');
    await waitStatusBar(page, /Sign-in to secure cancelled/);
    assert.ok(!(await notifications(page)).some((n) => n.severity === 'error'), 'a cancelled sign-in is no error');
  } finally {
    await closeQuickInput(page);
    await page.context().unroute(isAuthorize, stub);
    await setUserSetting('mcpSidecar.servers', servers).catch((e) => log(`  restoring the servers: ${e.message}`));
    await fixture.stop();
  }
  await waitStatusBar(page, /MCP 2\/2/, { timeout: 30000 });
}

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
