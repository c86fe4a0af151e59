// MCP Apps servers for the app view scenarios: a real server (its script from the peers install,
// run by MCP_APP_NODE) added to the User settings for a scenario, Call Tool of its tool with a
// view, and the app's frame found inside the webview's nested frames.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { peer } from './peers.mjs';
import { Skip } from './skip.mjs';
import { answer, pick, quickInput, runCommand, waitEditorText, waitFor, waitQuickInput, waitStatusBar } from './workbench.mjs';

/**
 * Runs `fn` with the server of `$<jsVar>` (and `extraArgs` after `--stdio`) added as `server`;
 * skips when the peers lack it.
 */
export async function withAppServer(ctx, server, jsVar, fn, extraArgs = []) {
  const js = peer(ctx.repo, jsVar);
  if (!js || !existsSync(js)) throw new Skip(`no ${jsVar} (run scripts/install-peers.sh)`);
  const node = peer(ctx.repo, 'MCP_APP_NODE') || process.execPath;
  const servers = ctx.workspace.userSettings['mcpSidecar.servers'];
  await ctx.setUserSetting('mcpSidecar.servers', { ...servers, [server]: { command: node, args: [js, '--stdio', ...extraArgs] } });
  try {
    await waitStatusBar(ctx.page, /MCP 3\/3/, { timeout: 30000 });
    await fn();
  } finally {
    await focusWorkbench(ctx.page);
    await ctx.setUserSetting('mcpSidecar.servers', servers);
    await waitStatusBar(ctx.page, /MCP 2\/2/, { timeout: 30000 }).catch(() => {});
  }
}

/**
 * Call Tool of a tool that has a view: checks that its row says so, hands the tool step's rows to
 * `checkTools`, answers the sidecar's argument prompts (`answers`: an argument's name → the text
 * typed; any other argument keeps its prefilled default), submits, and returns the result
 * document's text.
 */
export async function callToolWithView(ctx, server, tool, { answers = {}, checkTools } = {}) {
  const { page } = ctx;
  await runCommand(page, 'MCP Sidecar: Call Tool');
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/2)');
  await pick(page, server);
  const tools = await waitQuickInput(page, `MCP Sidecar: Call Tool (${server}) (2/2)`);
  const row = tools.rows.find((r) => r.label === tool);
  assert.ok(row, `${tool} is offered: ${JSON.stringify(tools.rows)}`);
  assert.match(row.aria, /has a view/, `the row says the tool has a view: ${row.aria}`);
  checkTools?.(tools.rows);
  await ctx.screenshot(`app-view-${server}-tool-pick`);
  await pick(page, tool);
  // One input box per argument (its prompt starts with the argument's name), then a review with
  // "Call <tool>"; no arguments: a review may still come first, depending on the sidecar.
  const asked = `${server}: arguments for ${tool}`;
  const go = `Call ${tool}`;
  let answered = null; // the step last answered: not answered twice while the next one comes
  return waitFor(`the result of ${tool}, after its arguments and ${go}`, async () => {
    const q = await quickInput(page);
    if (q?.rows.some((r) => r.label === go)) {
      await pick(page, go);
    } else if (q?.title.startsWith(`${asked} (`) && `${q.title}|${q.message}` !== answered) {
      const name = Object.keys(answers).find((n) => q.message.startsWith(`${n} `) || q.message === n);
      answered = `${q.title}|${q.message}`;
      if (name === undefined) await page.keyboard.press('Enter');
      else await answer(page, answers[name]);
    }
    return waitEditorText(page, new RegExp(`# ${server}: ${tool}`), { timeout: 500 }).catch(() => null);
  }, { timeout: 30000 });
}

/** The panel's tab. */
export function panelTab(page, title) {
  return page.locator('.tabs-container .tab', { hasText: title });
}

/** The frame of the app: the one holding `selector` (inside the webview's frames). */
export async function appFrame(page, selector) {
  for (const frame of page.frames()) {
    if (await frame.$(selector).catch(() => null)) return frame;
  }
  return null;
}

/** Waits for the panel `title` and its app's frame (the one holding `selector`). */
export async function waitAppFrame(page, title, selector) {
  await waitFor(`a tab "${title}"`, async () => (await panelTab(page, title).count()) > 0, { timeout: 20000 });
  return waitFor(`the app of "${title}" (${selector})`, () => appFrame(page, selector), { timeout: 30000 });
}

/** Closes the panel `title` by its tab's close button. */
export async function closePanel(page, title) {
  await panelTab(page, title).first().hover();
  await panelTab(page, title).first().locator('.tab-actions .action-label').click();
  await waitFor(`the panel "${title}" to close`, async () => (await panelTab(page, title).count()) === 0);
}

/**
 * Takes the keyboard focus back from a webview (an app that was clicked keeps the keys, so the
 * workbench's key bindings would not run): a click on the side bar's title.
 */
export async function focusWorkbench(page) {
  await page.locator('.part.sidebar .composite.title').first().click();
}
