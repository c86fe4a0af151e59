// The contract's question primitives (mcp-sidecar/inputBox, mcp-sidecar/quickPick) on VS Code's
// quick input, one at a time, closable by id (mcp-sidecar/cancelPrompt).

import type * as vscode from 'vscode';
import type { InputBoxParams, InputBoxResult, QuickPickParams, QuickPickResult } from '../contract';
import type { AttentionTracker } from './attentionTracker';
import { showInputBox } from './inputBox';
import { inputBoxResult, inputBoxSpec } from './inputBoxModel';
import { PromptQueue, type PromptHandle } from './queue';
import { showQuickPick } from './quickPick';
import { quickPickResult, quickPickSpec } from './quickPickModel';

export class PromptService {
  readonly queue = new PromptQueue();

  constructor(private attention: AttentionTracker) {}

  inputBox(params: InputBoxParams, token?: vscode.CancellationToken): Promise<InputBoxResult> {
    const spec = inputBoxSpec(params);
    return this.ask(params.id, token, null, async (handle) => {
      const reask = spec.validationMessage !== undefined;
      if (!(await this.mayOpen(handle, { server: params.server, title: spec.title, step: spec.step, reask }))) {
        return null;
      }
      if (handle.cancelled) return null;
      const result = inputBoxResult(spec, await showInputBox(spec, handle));
      if (result !== null) this.attention.answered(params.server);
      return result;
    });
  }

  quickPick(params: QuickPickParams, token?: vscode.CancellationToken): Promise<QuickPickResult> {
    const spec = quickPickSpec(params);
    return this.ask(params.id, token, null, async (handle) => {
      if (!(await this.mayOpen(handle, { server: params.server, title: spec.title, step: spec.step, reask: false }))) {
        return null;
      }
      if (handle.cancelled) return null;
      const result = quickPickResult(spec, await showQuickPick(spec, handle));
      if (result !== null) this.attention.answered(params.server);
      return result;
    });
  }

  /** The announcement (if any) ends early, as "Cancel", when the prompt is cancelled meanwhile. */
  private mayOpen(handle: PromptHandle, p: Parameters<AttentionTracker['mayOpen']>[0]): Promise<boolean> {
    return Promise.race([this.attention.mayOpen(p), new Promise<boolean>((resolve) => handle.onCancel(() => resolve(false)))]);
  }

  cancel(id: string): boolean {
    return this.queue.cancel(id);
  }

  private ask<T>(
    id: string,
    token: vscode.CancellationToken | undefined,
    dismissed: T,
    run: (handle: PromptHandle) => Promise<T>,
  ): Promise<T> {
    const key = id || `anonymous-${Date.now()}`;
    const sub = token?.onCancellationRequested(() => this.queue.cancel(key));
    return this.queue.run(key, run, dismissed).finally(() => sub?.dispose());
  }
}
