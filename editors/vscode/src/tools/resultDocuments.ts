// Tool results as read-only Markdown documents (a virtual document scheme).

import * as vscode from 'vscode';
import { appViewIsActive } from '../apps/appViews';

export const RESULT_SCHEME = 'mcp-sidecar-result';

export class ResultDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private texts = new Map<string, string>();
  private counter = 0;
  private changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private registration = vscode.workspace.registerTextDocumentContentProvider(RESULT_SCHEME, this);

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  async show(server: string, tool: string, markdown: string): Promise<vscode.TextEditor> {
    this.counter += 1;
    const safe = (s: string) => s.replace(/[^\w.-]+/g, '_');
    const uri = vscode.Uri.from({ scheme: RESULT_SCHEME, path: `/${safe(server)}/${safe(tool)}-${this.counter}.md` });
    this.texts.set(uri.toString(), markdown);
    const doc = await vscode.workspace.openTextDocument(uri);
    const md = doc.languageId === 'markdown' ? doc : await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    // The tool's view may have opened in the active group first (an empty window): not over it.
    return vscode.window.showTextDocument(md, { preview: false, viewColumn: appViewIsActive() ? vscode.ViewColumn.Beside : undefined });
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
