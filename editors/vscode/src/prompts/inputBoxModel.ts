// mcp-sidecar/inputBox params -> the options of a VS Code InputBox, and the widget's outcome ->
// the contract's result. Pure: no VS Code here, so it is unit-tested without an editor.

import type { InputBoxParams, InputBoxResult } from '../contract';
import { promptTitle } from './title';

export interface InputBoxSpec {
  title: string;
  step?: number;
  totalSteps?: number;
  prompt?: string;
  placeholder?: string;
  value: string;
  password: boolean;
  /** Shown while the text is still the one the sidecar rejected. */
  validationMessage?: string;
  ignoreFocusOut: boolean;
  showBack: boolean;
  showSkip: boolean;
}

export function inputBoxSpec(p: InputBoxParams): InputBoxSpec {
  const hasSteps = typeof p.step === 'number' && p.step > 0;
  return {
    title: promptTitle(p.title, p.server),
    step: hasSteps ? p.step : undefined,
    totalSteps: hasSteps && typeof p.totalSteps === 'number' && p.totalSteps >= (p.step ?? 0) ? p.totalSteps : undefined,
    prompt: p.prompt || undefined,
    placeholder: p.placeholder || undefined,
    value: p.value ?? '',
    password: p.password === true,
    validationMessage: p.validationMessage || undefined,
    // A server's question must survive a click elsewhere (copying a value from a file, say).
    ignoreFocusOut: true,
    showBack: p.canGoBack === true,
    showSkip: p.canSkip === true,
  };
}

/** The message to show for the current text: the sidecar's, until the person changes the text. */
export function currentValidation(spec: InputBoxSpec, text: string): string | undefined {
  return spec.validationMessage !== undefined && text === spec.value ? spec.validationMessage : undefined;
}

export type InputBoxOutcome =
  | { kind: 'accept'; value: string }
  | { kind: 'back' }
  | { kind: 'skip' }
  | { kind: 'dismiss' };

export function inputBoxResult(spec: InputBoxSpec, outcome: InputBoxOutcome): InputBoxResult {
  switch (outcome.kind) {
    case 'accept':
      return { value: outcome.value };
    case 'back':
      return spec.showBack ? { back: true } : null;
    case 'skip':
      return spec.showSkip ? { skip: true } : null;
    default:
      return null;
  }
}
