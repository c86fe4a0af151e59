// mcp-sidecar/quickPick params -> the options of a VS Code QuickPick, and the selection -> the
// contract's result (indexes into the request's items). Pure.

import type { QuickPickParams, QuickPickResult } from '../contract';
import { promptTitle } from './title';

export interface PickItemSpec {
  index: number;
  label: string;
  description?: string;
  detail?: string;
  picked: boolean;
}

export interface QuickPickSpec {
  title: string;
  step?: number;
  totalSteps?: number;
  placeholder?: string;
  canPickMany: boolean;
  items: PickItemSpec[];
  /** Items selected when the widget opens (multi-select) or focused (single). */
  initiallySelected: number[];
  ignoreFocusOut: boolean;
  showBack: boolean;
}

export function quickPickSpec(p: QuickPickParams): QuickPickSpec {
  const items = (p.items ?? []).map((item, index) => ({
    index,
    label: item.label,
    description: item.description || undefined,
    detail: item.detail || undefined,
    picked: item.picked === true,
  }));
  const canPickMany = p.canPickMany === true;
  const picked = items.filter((i) => i.picked).map((i) => i.index);
  const hasSteps = typeof p.step === 'number' && p.step > 0;
  return {
    title: promptTitle(p.title, p.server),
    step: hasSteps ? p.step : undefined,
    totalSteps: hasSteps && typeof p.totalSteps === 'number' && p.totalSteps >= (p.step ?? 0) ? p.totalSteps : undefined,
    placeholder: p.placeholder || (canPickMany ? 'Select with Space, confirm with Enter' : undefined),
    canPickMany,
    items,
    // A single pick can only start on one item: the first preselected one.
    initiallySelected: canPickMany ? picked : picked.slice(0, 1),
    ignoreFocusOut: true,
    showBack: p.canGoBack === true,
  };
}

export type QuickPickOutcome =
  | { kind: 'accept'; indexes: number[] }
  | { kind: 'back' }
  | { kind: 'dismiss' };

export function quickPickResult(spec: QuickPickSpec, outcome: QuickPickOutcome): QuickPickResult {
  switch (outcome.kind) {
    case 'accept': {
      const valid = [...new Set(outcome.indexes)]
        .filter((i) => Number.isInteger(i) && i >= 0 && i < spec.items.length)
        .sort((a, b) => a - b);
      // Enter on a single pick with nothing under the cursor is not an answer: the widget stays.
      if (!spec.canPickMany && valid.length === 0) return null;
      return { selected: spec.canPickMany ? valid : valid.slice(0, 1) };
    }
    case 'back':
      return spec.showBack ? { back: true } : null;
    default:
      return null;
  }
}
