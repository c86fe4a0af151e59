// The facts behind "announce first": when the person last typed in an editor, whether the
// window has focus, when each server's last question was answered; and the notification itself.

import * as vscode from 'vscode';
import { shouldAnnounce, type NotifyFirst } from './attention';

export class AttentionTracker implements vscode.Disposable {
  private lastTypedAt: number | undefined;
  private answeredAt = new Map<string, number>();
  private lastAnyAnsweredAt: number | undefined;
  private subscription: vscode.Disposable;

  constructor(private mode: () => NotifyFirst) {
    this.subscription = vscode.workspace.onDidChangeTextDocument((e) => {
      const scheme = e.document.uri.scheme;
      // Typing is a change to a document shown in an editor: a settings write through VS Code's
      // API (code-server keeps User/settings.json as a file: document) is not the person typing.
      const shown = vscode.window.visibleTextEditors.some((editor) => editor.document === e.document);
      if (e.contentChanges.length > 0 && (scheme === 'file' || scheme === 'untitled') && shown) {
        this.lastTypedAt = Date.now();
      }
    });
  }

  /** Resolves true when the prompt may open now: at once, or after "Respond". */
  async mayOpen(p: { server?: string; title: string; step?: number; reask: boolean }): Promise<boolean> {
    const announce = shouldAnnounce(this.mode(), {
      server: p.server,
      step: p.step,
      reask: p.reask,
      now: Date.now(),
      lastTypedAt: this.lastTypedAt,
      windowFocused: vscode.window.state.focused,
      lastAnsweredAt: p.server ? this.answeredAt.get(p.server) : undefined,
      lastAnyAnsweredAt: this.lastAnyAnsweredAt,
    });
    if (!announce) return true;
    const choice = await vscode.window.showInformationMessage(
      `${p.server} needs input: ${p.title}`,
      'Respond',
      'Cancel',
    );
    return choice === 'Respond';
  }

  answered(server: string | undefined): void {
    this.lastAnyAnsweredAt = Date.now();
    if (server) this.answeredAt.set(server, this.lastAnyAnsweredAt);
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
