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

export interface ArgumentStep {
  /** The name the answer is stored under. */
  key: string;
  /** What the person sees (a title, else the key). */
  name: string;
  description?: string;
  required: boolean;
}

/**
 * Asks each step in turn, one quick pick each with a step counter; Back goes one step back, and
 * from the first one answers 'back'. Escape: undefined. Empty optional answers are left out.
 * `suggest` gets the argument's key, the typed value and the answers so far.
 */
export async function askArguments(
  prompts: PromptService,
  opts: { id: () => string; title: string; steps: ArgumentStep[]; suggest?: (key: string, value: string, earlier: Record<string, string>) => Promise<string[]> },
): Promise<Record<string, string> | 'back' | undefined> {
  const { steps, suggest } = opts;
  const values: Record<string, string> = {};
  for (let i = 0; i < steps.length; ) {
    const step = steps[i];
    const answer = await askArgument(prompts, {
      id: opts.id(),
      title: opts.title,
      name: step.name,
      description: step.description,
      required: step.required,
      value: values[step.key],
      step: i + 1,
      totalSteps: steps.length,
      canGoBack: true,
      suggest: suggest && ((value) => suggest(step.key, value, values)),
    });
    if (!answer) return undefined;
    if ('back' in answer) {
      if (i === 0) return 'back';
      i -= 1;
      continue;
    }
    if (answer.value === '') delete values[step.key];
    else values[step.key] = answer.value;
    i += 1;
  }
  return values;
}
