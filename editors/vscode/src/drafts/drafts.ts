// mcp-sidecar/editDraft: an untitled buffer with Accept / Reject in the editor title (and as
// commands), problems as diagnostics; closing it answers null.

import * as vscode from 'vscode';
import type { EditDraftParams, EditDraftResult } from '../contract';
import { DraftBook, draftName, emptyAnswerLine, problemRanges } from './draftModel';

export const DRAFT_CONTEXT_KEY = 'mcpSidecar.draftActive';

export class DraftService implements vscode.Disposable {
  private book = new DraftBook();
  private diagnostics = vscode.languages.createDiagnosticCollection('mcp-sidecar-drafts');
  private subscriptions: vscode.Disposable[] = [];

  constructor() {
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.updateContext()),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          const uri = tabUri(tab);
          if (uri && this.book.isDraft(uri.toString()) && !isShownInAnyTab(uri)) this.closed(uri);
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (this.book.isDraft(doc.uri.toString())) this.closed(doc.uri);
      }),
    );
  }

  async editDraft(params: EditDraftParams, token?: vscode.CancellationToken): Promise<EditDraftResult> {
    const uri = vscode.Uri.from({ scheme: 'untitled', path: draftName(params) });
    const doc = await vscode.workspace.openTextDocument(uri);
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(0, 0, doc.lineCount, 0), params.text);
    await vscode.workspace.applyEdit(edit);
    let shown = doc;
    if (params.language && doc.languageId !== params.language) {
      shown = await vscode.languages.setTextDocumentLanguage(doc, params.language).then(
        (d) => d,
        () => doc,
      );
    }
    const result = new Promise<EditDraftResult>((resolve) => this.book.add(params.id, uri.toString(), resolve));
    this.showProblems(shown, params);
    // An empty answer draft: the cursor waits on the answer's line, ready for typing.
    const answerLine = params.kind === 'samplingResponse' ? emptyAnswerLine(shown.getText().split(/\r?\n/)) : undefined;
    const selection = answerLine === undefined ? undefined : new vscode.Range(answerLine, 0, answerLine, 0);
    await vscode.window.showTextDocument(shown, { preview: false, selection });
    this.updateContext();
    const sub = token?.onCancellationRequested(() => this.cancel(params.id));
    return result.finally(() => sub?.dispose());
  }

  /** Accept from the editor title or the command: the buffer's text goes back. */
  async accept(target?: vscode.Uri): Promise<void> {
    const doc = this.targetDocument(target);
    if (!doc) return;
    const id = this.book.idForKey(doc.uri.toString());
    if (id && this.book.settle(id, 'accept', doc.getText())) await this.discard(doc.uri);
  }

  async reject(target?: vscode.Uri): Promise<void> {
    const doc = this.targetDocument(target);
    if (!doc) return;
    const id = this.book.idForKey(doc.uri.toString());
    if (id && this.book.settle(id, 'reject')) await this.discard(doc.uri);
  }

  /** mcp-sidecar/cancelPrompt for a draft: close it; the request answers null. */
  cancel(id: string): boolean {
    const key = this.book.keyForId(id);
    if (!key || !this.book.settle(id, 'close')) return false;
    void this.discard(vscode.Uri.parse(key));
    return true;
  }

  cancelAll(): void {
    for (const id of this.book.ids()) this.cancel(id);
  }

  dispose(): void {
    this.cancelAll();
    this.diagnostics.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }

  private closed(uri: vscode.Uri): void {
    const id = this.book.idForKey(uri.toString());
    if (id) this.book.settle(id, 'close');
    this.diagnostics.delete(uri);
    this.updateContext();
  }

  private showProblems(doc: vscode.TextDocument, params: EditDraftParams): void {
    const lines = doc.getText().split(/\r?\n/);
    const diagnostics = problemRanges(params.problems, lines).map((p) => {
      const d = new vscode.Diagnostic(
        new vscode.Range(p.line, p.startCharacter, p.line, p.endCharacter),
        p.message,
        vscode.DiagnosticSeverity.Error,
      );
      d.source = params.server ?? 'mcp-sidecar';
      return d;
    });
    this.diagnostics.set(doc.uri, diagnostics);
  }

  private targetDocument(target?: vscode.Uri): vscode.TextDocument | undefined {
    if (target instanceof vscode.Uri) {
      return vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
    }
    const active = vscode.window.activeTextEditor?.document;
    return active && this.book.isDraft(active.uri.toString()) ? active : undefined;
  }

  /** Closes the draft's editors without the "save changes?" question, and drops its problems. */
  private async discard(uri: vscode.Uri): Promise<void> {
    this.diagnostics.delete(uri);
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (doc && !doc.isClosed) {
      for (let i = 0; i < 4 && isShownInAnyTab(uri); i++) {
        await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: false });
        await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
      }
    }
    this.updateContext();
  }

  private updateContext(): void {
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    void vscode.commands.executeCommand('setContext', DRAFT_CONTEXT_KEY, !!active && this.book.isDraft(active));
  }
}

function tabUri(tab: vscode.Tab): vscode.Uri | undefined {
  return tab.input instanceof vscode.TabInputText ? tab.input.uri : undefined;
}

function isShownInAnyTab(uri: vscode.Uri): boolean {
  const key = uri.toString();
  return vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => tabUri(t)?.toString() === key));
}
