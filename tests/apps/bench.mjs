// A benchmark (not a test) of MCP Apps through the loopback page, in headless Chromium:
//
//   cargo build && . .cache/peers/env.sh && (cd tests/apps && npm ci)
//   MCP_SIDECAR_BIN=target/debug/mcp-sidecar node tests/apps/bench.mjs [ROUNDS]
//
// (a release build, target/release/mcp-sidecar, gives the figures that matter). One cold round
// (the page listener and the server's app listener start with the first view), then ROUNDS
// (default 15) rounds of: callTool basic/get-time -> window/showDocument -> the page opened in
// Chromium -> the app's ui/notifications/initialized answered by the sidecar (seen on the page's
// network). Reports min/median/max ms from the callTool reply to initialized, and the sidecar's
// RSS (VmRSS of /proc/<pid>/status) before any view, with every view open (ROUNDS + 1, 16 by
// default: the most the sidecar keeps), and after closing them all with mcp-sidecar.closeApp.
// Fails only when a round does not complete.

import fs from 'node:fs';
import path from 'node:path';
import { OUT, callAndShow, need, openBrowser, openView, rssKiB, startSidecar } from './lib.mjs';

const ROUNDS = Number(process.argv[2] || 15);
const bin = path.resolve(need('MCP_SIDECAR_BIN'));
fs.mkdirSync(OUT, { recursive: true });
const logFile = path.join(OUT, 'bench-sidecar.log');
fs.rmSync(logFile, { force: true });

const node = need('MCP_APP_NODE');
const sidecar = await startSidecar({
  bin,
  servers: { basic: { command: node, args: [need('MCP_APP_BASIC_JS'), '--stdio'] } },
  logFile,
  logLevel: 'warn',
});
const { lsp } = sidecar;
const pid = sidecar.child.pid;
const { browser, newContext } = await openBrowser();
const mib = (kib) => (kib / 1024).toFixed(1);

try {
  // One call without a view first, so the RSS baseline has the server's session warm.
  await lsp.command('mcp-sidecar.listTools');
  const rssBefore = rssKiB(pid);

  const opened = [];
  async function round() {
    const shown = await callAndShow(sidecar, 'basic', 'get-time', {});
    // A browser context per view: Chromium's socket pool allows 6 connections per host and each
    // open page holds one in its GET /events, so one context would measure that limit (run.mjs
    // checks it), not the sidecar.
    const ctx = await newContext();
    const { page, initialized } = await openView(ctx, shown.url);
    const init = await initialized;
    if (init.status !== 204 && init.status !== 200) throw new Error(`initialized answered HTTP ${init.status}`);
    opened.push({ page, url: shown.url });
    return { total: init.at - shown.repliedAt, toShow: shown.shownAt - shown.repliedAt };
  }
  const cold = await round();
  const times = [];
  for (let i = 0; i < ROUNDS; i++) {
    times.push(await round());
    console.error(`round ${i + 1}: ${times.at(-1).total.toFixed(1)} ms`);
  }

  const apps = await lsp.command('mcp-sidecar.listApps');
  const initializedViews = apps.filter((a) => a.initialized).length;
  const rssOpen = rssKiB(pid);

  for (const app of apps) await lsp.command('mcp-sidecar.closeApp', { view: app.view });
  const left = (await lsp.command('mcp-sidecar.listApps')).length;
  for (const { page } of opened) await page.close();
  const rssAfter = rssKiB(pid);

  const sorted = times.map((t) => t.total).sort((a, b) => a - b);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  const toShow = times.map((t) => t.toShow).sort((a, b) => a - b);
  console.log(`sidecar ${bin}`);
  console.log(`callTool reply -> app initialized, ${ROUNDS} rounds: min ${sorted[0].toFixed(1)} ms, median ${median.toFixed(1)} ms, max ${sorted.at(-1).toFixed(1)} ms (cold first round: ${cold.total.toFixed(1)} ms)`);
  console.log(`  of which callTool reply -> window/showDocument: median ${toShow[Math.floor(toShow.length / 2)].toFixed(1)} ms`);
  console.log(`RSS before any view: ${mib(rssBefore)} MiB`);
  console.log(`RSS with ${apps.length} views open (${initializedViews} initialized): ${mib(rssOpen)} MiB (+${mib(rssOpen - rssBefore)} MiB, ${((rssOpen - rssBefore) / 1024 / apps.length).toFixed(2)} MiB per open view)`);
  console.log(`RSS after closeApp of every view (${left} left): ${mib(rssAfter)} MiB (${rssAfter >= rssBefore ? '+' : ''}${mib(rssAfter - rssBefore)} MiB over the start)`);
  if (left !== 0) process.exitCode = 1;
} catch (e) {
  console.error(`bench failed: ${e.stack || e}`);
  process.exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  await sidecar.stop();
}
