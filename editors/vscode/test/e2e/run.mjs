// End-to-end tests in a real VS Code (code-server) with the packaged VSIX installed, driven in
// headless Chromium. Every file in scenarios/ is one scenario: it exports `name` and
// `run(ctx)` (and may export `timeoutMs`); they run in file-name order against one workbench.
// Adding a scenario = adding a file.
//
//   node test/e2e/run.mjs            (env: CODE_SERVER, MCP_SIDECAR_BIN, VSIX, E2E_ONLY=substring, E2E_ARTIFACTS)
// MCP_SIDECAR_BIN is the demo servers' command; the extension runs the sidecar the VSIX carries.
// Prints one line per scenario and "e2e: N passed, N failed[, N skipped]"; exits non-zero on a
// failure. A scenario may throw lib/skip.mjs's Skip when the sidecar lacks what it needs.

import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openBrowser } from './lib/browser.mjs';
import { freePort, installExtension, prepareProfile, startCodeServer } from './lib/codeServer.mjs';
import { closeQuickInput, hookAnswer, quickInput, statusBarTexts, waitFor } from './lib/workbench.mjs';
import { makeWorkspace } from './lib/workspace.mjs';
import { hostTarget, vsixPath } from '../../scripts/target.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// The key for the extension's test-only hook (src/e2eHooks.ts): it runs the contract request that
// a scenario wrote with ctx.request() (the file's path reaches the extension in the environment).
const E2E_KEYS = [{ key: 'ctrl+alt+shift+r', command: 'mcpSidecar.e2e.request' }];
const extDir = resolve(here, '../..');
const repo = resolve(extDir, '../..');
const cache = join(repo, '.cache', 'vscode');
const artifacts = process.env.E2E_ARTIFACTS || join(cache, 'artifacts');
const codeServer = process.env.CODE_SERVER;
const sidecar = process.env.MCP_SIDECAR_BIN || join(repo, 'target', 'debug', 'mcp-sidecar');
// The platform-specific VSIX (npm run package), with the sidecar inside: no binaryPath is set.
const vsix = process.env.VSIX || vsixPath(hostTarget());
// The test-only language model (test/lm-provider), for mcp-sidecar/languageModel.
const testLmVsix = process.env.TEST_LM_VSIX || join(extDir, 'test', 'lm-provider', 'dist', 'mcp-sidecar-test-lm.vsix');
const only = process.env.E2E_ONLY || '';
const SCENARIO_TIMEOUT_MS = Number(process.env.E2E_SCENARIO_TIMEOUT_MS || 90000);

function log(line) {
  process.stdout.write(`[e2e] ${line}\n`);
}

for (const [what, path] of [['CODE_SERVER', codeServer], ['the sidecar', sidecar], ['the VSIX', vsix]]) {
  if (!path || !existsSync(path)) {
    log(`${what} not found (${path}); run test/install.sh, cargo build and npm run package first`);
    process.stdout.write('e2e: 0 passed, 1 failed\n');
    process.exit(1);
  }
}

const scenarioFiles = readdirSync(join(here, 'scenarios'))
  .filter((f) => f.endsWith('.mjs'))
  .sort();
const scenarios = [];
for (const file of scenarioFiles) {
  const mod = await import(pathToFileURL(join(here, 'scenarios', file)).href);
  if (!only || file.includes(only) || mod.name.includes(only)) scenarios.push({ file, ...mod });
}

mkdirSync(artifacts, { recursive: true });
const runDir = join(cache, 'e2e-run');
const started = Date.now();
const workspace = makeWorkspace(join(runDir, 'workspace'), sidecar);
const profile = prepareProfile(join(runDir, 'profile'), {
  userSettings: workspace.userSettings,
  machineSettings: workspace.machineSettings,
  keybindings: E2E_KEYS,
});
installExtension(codeServer, profile, vsix);
if (existsSync(testLmVsix)) installExtension(codeServer, profile, testLmVsix);
else log(`no test language model (${testLmVsix}): language-model scenarios will fail`);
log(`profile ready, VSIX installed (${((Date.now() - started) / 1000).toFixed(1)} s)`);

const requestFile = join(runDir, 'e2e-request.json');
// The sidecar's own files stay in the run: its sampling audit log ($XDG_STATE_HOME) and no
// personal mcp.json ($XDG_CONFIG_HOME). The test model records each request it gets.
const stateHome = join(runDir, 'state');
const configHome = join(runDir, 'config');
const testLmLog = join(runDir, 'test-lm-requests.jsonl');
for (const dir of [stateHome, configHome]) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}
rmSync(testLmLog, { force: true });
const port = await freePort();
const serverLog = join(artifacts, 'code-server.log');
writeFileSync(serverLog, '');
let server;
let browser;
const results = [];
try {
  server = await startCodeServer(codeServer, profile, {
    port,
    logFile: serverLog,
    env: { MCP_SIDECAR_VSCODE_E2E: requestFile, MCP_SIDECAR_TEST_LM_LOG: testLmLog, XDG_STATE_HOME: stateHome, XDG_CONFIG_HOME: configHome },
  });
  const opened = await openBrowser();
  browser = opened.browser;
  const page = await opened.context.newPage();
  page.setDefaultTimeout(20000);
  await page.goto(`${server.url}/?workspace=${encodeURIComponent(workspace.file)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  await serversUp(page);
  log(`workbench up, both servers running (${((Date.now() - started) / 1000).toFixed(1)} s)`);

  const ctx = {
    page,
    workspace,
    profile,
    artifacts,
    sidecar,
    repo,
    // For a scenario that needs a code-server of its own (another profile or workspace).
    browserContext: opened.context,
    codeServer,
    vsix,
    runDir,
    outputLogOf: (userData) => readOutputLog(userData),
    // A short pause first: quick inputs and toasts fade in.
    screenshot: async (name) => {
      await page.waitForTimeout(250);
      await page.screenshot({ path: join(artifacts, `${name}.png`) });
    },
    outputLog: () => readOutputLog(profile.userData),
    /** The sidecar's sampling audit log (sampling.jsonl), one object per exchange. */
    samplingAudit: () => readJsonLines(join(stateHome, 'mcp-sidecar', 'sampling.jsonl')),
    /** What the test language model (test/lm-provider) was asked, one object per request. */
    testLmRequests: () => readJsonLines(testLmLog),
    /**
     * Feeds one contract request to the extension's handlers, as if the sidecar sent it
     * ({method, params, cancelAfterMs?}), and returns a function that waits for its answer.
     */
    request: async (request) => {
      const before = readOutputLog(profile.userData).length;
      writeFileSync(requestFile, JSON.stringify(request));
      await page.keyboard.press('Control+Alt+Shift+R');
      return (opts) => hookAnswer(() => readOutputLog(profile.userData).slice(before), request.params.id, opts);
    },
    /** Sets (or with undefined, removes) a User setting through VS Code (the extension's test hook). */
    setUserSetting: async (key, value) => {
      const id = `e2e-setting-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      const answer = await (await ctx.request({ method: 'updateSetting', params: { id, key, value: value ?? null } }))();
      if (answer !== 'updated') throw new Error(`updating the User setting ${key}: ${JSON.stringify(answer)}`);
    },
    log,
  };
  for (const s of scenarios) {
    const t0 = Date.now();
    try {
      await closeQuickInput(page);
      let timer;
      await Promise.race([
        s.run(ctx),
        new Promise((_, reject) => {
          const ms = s.timeoutMs ?? SCENARIO_TIMEOUT_MS;
          timer = setTimeout(() => reject(new Error(`scenario timed out after ${ms} ms`)), ms);
        }),
      ]).finally(() => clearTimeout(timer));
      results.push({ name: s.name, ok: true, ms: Date.now() - t0 });
      log(`ok   ${s.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (error) {
      if (error?.skip) {
        results.push({ name: s.name, ok: true, skipped: true, ms: Date.now() - t0, reason: error.message });
        log(`skip ${s.name}: ${error.message}`);
        continue;
      }
      results.push({ name: s.name, ok: false, ms: Date.now() - t0, error: String(error?.stack ?? error) });
      log(`FAIL ${s.name}: ${error?.message ?? error}`);
      const shot = `failure-${s.file.replace(/\.mjs$/, '')}`;
      await ctx.screenshot(shot).catch(() => {});
      log(`     screenshot: ${join(artifacts, shot)}.png`);
      // A failed scenario may leave a modal "save changes?" dialog (a draft it closed); it would
      // block every scenario after it.
      await ctx.page.getByRole('button', { name: "Don't Save" }).click({ timeout: 2000 }).catch(() => {});
    }
  }
} catch (error) {
  results.push({ name: 'setup', ok: false, error: String(error?.stack ?? error) });
  log(`FAIL setup: ${error?.stack ?? error}`);
  const pages = browser?.contexts()[0]?.pages() ?? [];
  if (pages[0]) await pages[0].screenshot({ path: join(artifacts, 'failure-setup.png') }).catch(() => {});
} finally {
  await browser?.close().catch(() => {});
  await server?.stop();
  copyOutputLog(profile.userData);
}

const skipped = results.filter((r) => r.skipped).length;
const passed = results.filter((r) => r.ok && !r.skipped).length;
const failed = results.filter((r) => !r.ok).length;
writeFileSync(join(artifacts, 'e2e-results.json'), JSON.stringify({ seconds: (Date.now() - started) / 1000, results }, null, 2));
log(`artifacts in ${artifacts} (${((Date.now() - started) / 1000).toFixed(1)} s in all)`);
process.stdout.write(`e2e: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);

/**
 * Waits for both servers to run. A sidecar that asks before starting a workspace-defined server
 * ("From …/.vscode/mcp.json: Trust the MCP server "legacy"?", or "… Trust the 2 MCP servers it
 * defines?" for several in one file; remembered in $XDG_STATE_HOME, which is fresh for
 * every run) is answered Trust, as the person would.
 */
async function serversUp(page) {
  await waitFor('both servers running (MCP 2/2)', async () => {
    if ((await statusBarTexts(page)).some((t) => /MCP 2\/2/.test(t))) return true;
    const q = await quickInput(page);
    const trust = q && /: Trust the (MCP server ".+"|\d+ MCP servers)/.exec(q.title);
    if (trust && q.rows[0]?.label.startsWith('Trust')) {
      log(`trusting the workspace server ${trust[1]} (${q.rows[0].label})`);
      await page.keyboard.press('Enter');
      await page.waitForTimeout(300);
    }
    return null;
  }, { timeout: 60000, interval: 250 });
}

function readJsonLines(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** The files of the extension's output channel ("MCP Sidecar": the sidecar's log and ours). */
function outputLogFiles(userData) {
  const found = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('MCP Sidecar.log')) found.push(p);
    }
  };
  try {
    walk(join(userData, 'logs'));
  } catch {
    // no logs yet
  }
  return found.sort();
}

function readOutputLog(userData) {
  return outputLogFiles(userData).map((p) => readFileSync(p, 'utf8')).join('\n');
}

/** Keeps the output channel next to the screenshots. */
function copyOutputLog(userData) {
  outputLogFiles(userData).forEach((p, i) => copyFileSync(p, join(artifacts, `mcp-sidecar-output-${i + 1}.log`)));
}
