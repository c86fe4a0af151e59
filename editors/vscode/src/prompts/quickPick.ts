// Shows a QuickPickSpec with window.createQuickPick and reports what the person did.

import * as vscode from 'vscode';
import type { QuickPickOutcome, QuickPickSpec } from './quickPickModel';
import type { PromptHandle } from './queue';

interface IndexedItem extends vscode.QuickPickItem {
  index: number;
}

export function showQuickPick(spec: QuickPickSpec, handle: PromptHandle): Promise<QuickPickOutcome> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<IndexedItem>();
    pick.title = spec.title;
    pick.step = spec.step;
    pick.totalSteps = spec.totalSteps;
    pick.placeholder = spec.placeholder;
    pick.canSelectMany = spec.canPickMany;
    pick.ignoreFocusOut = spec.ignoreFocusOut;
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    const items: IndexedItem[] = spec.items.map((i) => ({
      index: i.index,
      label: i.label,
      description: i.description,
      detail: i.detail,
      picked: i.picked,
    }));
    pick.items = items;
    const initial = spec.initiallySelected.map((i) => items[i]).filter((i) => i !== undefined);
    if (spec.canPickMany) pick.selectedItems = initial;
    else if (initial.length > 0) pick.activeItems = initial;
    pick.buttons = spec.showBack ? [vscode.QuickInputButtons.Back] : [];

    let outcome: QuickPickOutcome = { kind: 'dismiss' };
    const finish = (o: QuickPickOutcome) => {
      outcome = o;
      pick.hide();
    };
    const subscriptions = [
      pick.onDidAccept(() => {
        const chosen = spec.canPickMany
          ? pick.selectedItems
          : pick.selectedItems.length > 0
            ? pick.selectedItems
            : pick.activeItems;
        // Enter on an empty filter result of a single pick: keep the widget open.
        if (!spec.canPickMany && chosen.length === 0) return;
        finish({ kind: 'accept', indexes: chosen.map((i) => i.index) });
      }),
      pick.onDidTriggerButton((button) => {
        if (button === vscode.QuickInputButtons.Back) finish({ kind: 'back' });
      }),
      pick.onDidHide(() => {
        subscriptions.forEach((s) => s.dispose());
        pick.dispose();
        resolve(outcome);
      }),
    ];
    handle.onCancel(() => finish({ kind: 'dismiss' }));
    pick.show();
  });
}
