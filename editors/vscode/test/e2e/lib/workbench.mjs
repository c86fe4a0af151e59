// Driving VS Code's workbench in the page the way a person does: the Command Palette, quick
// inputs answered by typing and pressing keys, the editor's text, the status bar.

const QI = '.quick-input-widget';

export async function waitFor(what, fn, { timeout = 20000, interval = 100 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${String(last?.message ?? JSON.stringify(last))})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** What the quick input shows now, or null when it is hidden. */
export function quickInput(page) {
  return page.evaluate((sel) => {
    const w = document.querySelector(sel);
    if (!w || getComputedStyle(w).display === 'none') return null;
    const input = w.querySelector('.quick-input-box input');
    const rows = [...w.querySelectorAll('.quick-input-list .monaco-list-row')];
    const text = (el) => (el?.textContent ?? '').replace(/\u00a0/g, ' ').trim();
    return {
      title: text(w.querySelector('.quick-input-title')),
      value: input?.value ?? '',
      placeholder: input?.getAttribute('placeholder') ?? '',
      message: text(w.querySelector('.quick-input-message')),
      hasBack: !!w.querySelector('.quick-input-left-action-bar .codicon-quick-input-back'),
      rightButtons: [...w.querySelectorAll('.quick-input-right-action-bar .action-label')].map((a) => a.getAttribute('aria-label') ?? ''),
      rows: rows.map((r) => ({
        label: text(r.querySelector('.quick-input-list-label .label-name, .monaco-icon-label .label-name') ?? r.querySelector('.monaco-icon-label')),
        aria: r.getAttribute('aria-label') ?? '',
        focused: r.classList.contains('focused'),
        checked:
          r.getAttribute('aria-checked') === 'true' ||
          !!r.querySelector('input[type=checkbox]:checked, .monaco-checkbox.checked, .monaco-custom-toggle.checked'),
      })),
      password: input?.type === 'password',
    };
  }, QI);
}

/** Waits until the quick input is open and its title matches. */
export function waitQuickInput(page, title, opts) {
  return waitFor(`a quick input titled ${title}`, async () => {
    const q = await quickInput(page);
    if (!q) return null;
    const ok = title instanceof RegExp ? title.test(q.title) : q.title.includes(title);
    return ok ? q : null;
  }, opts);
}

export function waitQuickInputClosed(page, opts) {
  return waitFor('the quick input to close', async () => ((await quickInput(page)) === null ? true : null), opts);
}

/** Escape until no quick input is open. */
export async function closeQuickInput(page) {
  for (let i = 0; i < 3 && (await quickInput(page)); i++) {
    await page.keyboard.press('Escape');
    await page.waitForTimeout(150);
  }
}

/** Runs a command from the Command Palette by its full title. */
export async function runCommand(page, title) {
  // A window still settling can take the focus from the palette (closing it) or drop typed keys:
  // open it and set its text again until the command is listed, a few times, then say what it showed.
  let shown = null;
  for (let attempt = 1; ; attempt++) {
    await closeQuickInput(page);
    await page.keyboard.press('F1');
    const listed = await waitFor(`"${title}" in the Command Palette`, async () => {
      const q = await quickInput(page);
      shown = q && { value: q.value, rows: q.rows.slice(0, 5).map((r) => r.aria) };
      if (!q?.value.startsWith('>')) return null;
      if (q.value !== `>${title}`) {
        await page.fill(`${QI} .quick-input-box input`, `>${title}`);
        return null;
      }
      return q.rows.some((r) => r.aria.startsWith(title)) ? q : null;
    }, { timeout: 8000, interval: 150 }).catch((error) => {
      if (attempt >= 3) throw new Error(`${error.message}; the palette showed ${JSON.stringify(shown)}`);
      return null;
    });
    if (listed) break;
  }
  // A recently used command that also matches the typed words is listed first ("Trust Server"
  // matches "Revoke Trust for Server"): move the focus to the command itself.
  await waitFor(`"${title}" focused in the Command Palette`, async () => {
    const q = await quickInput(page);
    if (q?.rows.find((r) => r.focused)?.aria.startsWith(title)) return true;
    await page.keyboard.press('ArrowDown');
    return null;
  });
  await page.keyboard.press('Enter');
}

/** Types a filter into an open quick pick and accepts the row whose label is `label`. */
export async function pick(page, label) {
  await page.keyboard.type(label);
  await waitFor(`"${label}" to be the first row`, async () => {
    const q = await quickInput(page);
    return q?.rows[0]?.label === label ? q : null;
  });
  await page.keyboard.press('Enter');
}

/** Replaces the text of an open input box and presses Enter. */
export async function answer(page, text) {
  await page.keyboard.press('Control+A');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/** Clicks the quick input's Back button. */
export async function back(page) {
  await page.locator(`${QI} .quick-input-left-action-bar .codicon-quick-input-back`).click();
}

/** The visible lines of the active editor (Monaco renders non-breaking spaces). */
export function editorText(page) {
  return page.evaluate(() => {
    const editor = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    if (!editor) return '';
    const lines = [...editor.querySelectorAll('.view-line')]
      .map((l) => ({ top: parseFloat(l.style.top) || 0, text: (l.textContent ?? '').replace(/\u00a0/g, ' ') }))
      .sort((a, b) => a.top - b.top);
    return lines.map((l) => l.text).join('\n');
  });
}

export function activeTabTitle(page) {
  return page.evaluate(() => document.querySelector('.editor-group-container.active .tab.active')?.getAttribute('aria-label') ?? '');
}

export function waitEditorText(page, pattern, opts) {
  return waitFor(`the editor to show ${pattern}`, async () => {
    const text = await editorText(page);
    return pattern.test(text) ? text : null;
  }, opts);
}

export function statusBarTexts(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.statusbar-item')].map((e) => (e.textContent ?? '').replace(/\u00a0/g, ' ').trim()).filter(Boolean),
  );
}

export function waitStatusBar(page, pattern, opts) {
  return waitFor(`the status bar to show ${pattern}`, async () => (await statusBarTexts(page)).find((t) => pattern.test(t)) ?? null, opts);
}

/** Clicks the status bar item whose text matches `pattern` (what a click on it runs). */
export async function clickStatusBar(page, pattern) {
  await page.locator('.statusbar-item a', { hasText: pattern }).first().click();
}

/** The notification toasts on screen: severity, message, source and button labels. */
export function notifications(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.notifications-toasts .notification-toast')].map((t) => {
      const text = (el) => (el?.textContent ?? '').replace(/\u00a0/g, ' ').trim();
      const icon = t.querySelector('.notification-list-item-icon')?.className ?? '';
      return {
        severity: /error/.test(icon) ? 'error' : /warning/.test(icon) ? 'warning' : 'info',
        message: text(t.querySelector('.notification-list-item-message')),
        source: text(t.querySelector('.notification-list-item-source')),
        buttons: [...t.querySelectorAll('.notification-list-item-buttons-container .monaco-button')].map(text),
      };
    }),
  );
}

export async function clearNotifications(page) {
  await page.evaluate(() => {
    for (const b of document.querySelectorAll('.notifications-toasts .codicon-notifications-clear')) b.click();
  });
}

export async function closeAllEditors(page) {
  await closeQuickInput(page);
  await runCommand(page, 'View: Close All Editors');
  await page.waitForTimeout(300);
}

/** Waits for a line `e2e <id> -> <json>` in the output channel and returns the parsed answer. */
export async function hookAnswer(outputLog, id, opts) {
  const prefix = `e2e ${id} -> `;
  return waitFor(`the answer to ${id}`, async () => {
    const line = outputLog().split('\n').reverse().find((l) => l.includes(prefix));
    return line ? { answer: JSON.parse(line.slice(line.indexOf(prefix) + prefix.length)) } : null;
  }, { timeout: 20000, interval: 200, ...opts }).then((r) => r.answer);
}

/** Clicks a button of the quick input's title bar by its tooltip (aria-label). */
export async function clickTitleButton(page, label) {
  await page.locator(`.quick-input-widget .quick-input-titlebar .action-label[aria-label^="${label}"]`).click();
}

/**
 * The active editor's visible text as the document's lines: lines that word wrap split over
 * several rows are joined again (a row without a line number continues the line above, its
 * repeated indentation dropped). Each entry is {number, text}, number being the 1-based line
 * number.
 */
export function editorLines(page) {
  return page.evaluate(() => {
    const editor = document.querySelector('.editor-group-container.active .monaco-editor');
    if (!editor) return [];
    const clean = (s) => (s ?? '').replace(/\u00a0/g, ' ');
    const numbers = new Map();
    for (const n of editor.querySelectorAll('.margin-view-overlays .line-numbers')) {
      const row = n.closest('.margin-view-overlays > div') ?? n;
      const number = Number.parseInt((n.textContent ?? '').trim(), 10);
      if (Number.isFinite(number)) numbers.set(Math.round(parseFloat(row.style.top) || 0), number);
    }
    const rows = [...editor.querySelectorAll('.view-lines .view-line')]
      .map((l) => ({ top: Math.round(parseFloat(l.style.top) || 0), text: clean(l.textContent) }))
      .sort((a, b) => a.top - b.top);
    const lines = [];
    for (const row of rows) {
      const number = numbers.get(row.top);
      if (number !== undefined || lines.length === 0) {
        lines.push({ number: number ?? 0, text: row.text });
        continue;
      }
      // A continuation row repeats the line's indentation (wrappingIndent "same").
      const line = lines[lines.length - 1];
      const indent = /^ */.exec(line.text)[0].length;
      line.text += row.text.replace(new RegExp(`^ {0,${indent}}`), '');
    }
    return lines;
  });
}

/** Waits until the active tab's title matches `pattern` and returns it. */
export function waitActiveTab(page, pattern, opts) {
  return waitFor(`the active tab to match ${pattern}`, async () => {
    const title = await activeTabTitle(page);
    return pattern.test(title) ? title : null;
  }, opts);
}

/** Clicks an action of the active editor's title bar by its tooltip (aria-label). */
export async function clickEditorAction(page, label) {
  await page.locator(`.editor-group-container.active .editor-actions .action-label[aria-label^="${label}"]`).click();
}
