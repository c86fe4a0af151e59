// Asks one argument in a quick pick whose rows are the server's completion suggestions for the
// text typed so far (mcp-sidecar.complete), taking its turn in the prompt queue like the
// sidecar's own questions.

import * as vscode from 'vscode';
import { argumentAnswer, argumentPlaceholder, argumentRows, type ArgumentRow } from './argumentModel';
import type { PromptService } from './promptService';

export interface ArgumentQuestion {
  id: string;
  title: string;
  name: string;
  description?: string;
  required: boolean;
  value?: string;
  step?: number;
  totalSteps?: number;
  canGoBack?: boolean;
  /** The suggestions for a value; none when the server cannot complete. */
  suggest?: (value: string) => Promise<string[]>;
}

export type ArgumentAnswer = { value: string } | { back: true } | null;

const DEBOUNCE_MS = 150;

export function askArgument(prompts: PromptService, q: ArgumentQuestion): Promise<ArgumentAnswer> {
  return prompts.queue.run<ArgumentAnswer>(
    q.id,
    (handle) =>
      new Promise((resolve) => {
        const pick = vscode.window.createQuickPick<ArgumentRow & vscode.QuickPickItem>();
        pick.title = q.title;
        pick.step = q.step;
        pick.totalSteps = q.totalSteps;
        pick.placeholder = argumentPlaceholder(q.name, q.description, q.required);
        pick.ignoreFocusOut = true;
        pick.buttons = q.canGoBack ? [vscode.QuickInputButtons.Back] : [];
        let suggestions: string[] = [];
        let answer: ArgumentAnswer = null;
        let timer: ReturnType<typeof setTimeout> | undefined;
        let asked = 0;
        const render = () => {
          pick.items = argumentRows(pick.value, suggestions, q.required).map((r) => ({ ...r, alwaysShow: true }));
        };
        const refresh = () => {
          if (!q.suggest) return;
          const mine = ++asked;
          const value = pick.value;
          pick.busy = true;
          q.suggest(value).then(
            (values) => {
              if (mine !== asked) return;
              suggestions = values;
              pick.busy = false;
              render();
            },
            () => {
              if (mine === asked) pick.busy = false;
            },
          );
        };
        const finish = (a: ArgumentAnswer) => {
          answer = a;
          pick.hide();
        };
        const subscriptions = [
          pick.onDidChangeValue(() => {
            render();
            clearTimeout(timer);
            timer = setTimeout(refresh, DEBOUNCE_MS);
          }),
          pick.onDidAccept(() => {
            const value = argumentAnswer(pick.activeItems[0]?.value, pick.value, q.required);
            if (value === undefined) {
              pick.placeholder = `${q.name} is required: type a value`;
              return;
            }
            finish({ value });
          }),
          pick.onDidTriggerButton((button) => {
            if (button === vscode.QuickInputButtons.Back) finish({ back: true });
          }),
          pick.onDidHide(() => {
            clearTimeout(timer);
            subscriptions.forEach((s) => s.dispose());
            pick.dispose();
            resolve(answer);
          }),
        ];
        handle.onCancel(() => finish(null));
        pick.value = q.value ?? '';
        render();
        pick.show();
        refresh();
      }),
    null,
  );
}
