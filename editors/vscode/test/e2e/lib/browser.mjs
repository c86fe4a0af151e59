// Debian's Chromium, headless, driven by playwright-core. As root it needs --no-sandbox; the
// background-networking flags keep it from calling out on this closed network.

import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../../../../scripts/lib/chromium.mjs';

export async function openBrowser(executablePath = process.env.CHROMIUM || '/usr/bin/chromium') {
  const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  // The clipboard ("Copy URL") is read back by the tests.
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  // Nothing leaves this machine: a page opened outside loopback (a URL elicitation's "Open") gets
  // a local stub instead, and keeps its URL for the test to check.
  await context.route(
    (url) => /^https?:$/.test(url.protocol) && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname),
    (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<title>stub</title>offline test stub' }),
  );
  return { browser, context };
}
