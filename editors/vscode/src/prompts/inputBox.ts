// Shows an InputBoxSpec with window.createInputBox and reports what the person did.

import * as vscode from 'vscode';
import { currentValidation, type InputBoxOutcome, type InputBoxSpec } from './inputBoxModel';
import type { PromptHandle } from './queue';

export const SKIP_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('debug-step-over'),
  tooltip: 'Skip (leave this field out)',
};

export function showInputBox(spec: InputBoxSpec, handle: PromptHandle): Promise<InputBoxOutcome> {
  return new Promise((resolve) => {
    const box = vscode.window.createInputBox();
    box.title = spec.title;
    box.step = spec.step;
    box.totalSteps = spec.totalSteps;
    box.prompt = spec.prompt;
    box.placeholder = spec.placeholder;
    box.value = spec.value;
    box.password = spec.password;
    box.ignoreFocusOut = spec.ignoreFocusOut;
    box.validationMessage = currentValidation(spec, spec.value);
    const buttons: vscode.QuickInputButton[] = [];
    if (spec.showBack) buttons.push(vscode.QuickInputButtons.Back);
    if (spec.showSkip) buttons.push(SKIP_BUTTON);
    box.buttons = buttons;

    let outcome: InputBoxOutcome = { kind: 'dismiss' };
    const finish = (o: InputBoxOutcome) => {
      outcome = o;
      box.hide();
    };
    const subscriptions = [
      box.onDidChangeValue((text) => {
        box.validationMessage = currentValidation(spec, text);
      }),
      box.onDidAccept(() => finish({ kind: 'accept', value: box.value })),
      box.onDidTriggerButton((button) => {
        if (button === vscode.QuickInputButtons.Back) finish({ kind: 'back' });
        else if (button === SKIP_BUTTON) finish({ kind: 'skip' });
      }),
      box.onDidHide(() => {
        subscriptions.forEach((s) => s.dispose());
        box.dispose();
        resolve(outcome);
      }),
    ];
    handle.onCancel(() => finish({ kind: 'dismiss' }));
    box.show();
  });
}
