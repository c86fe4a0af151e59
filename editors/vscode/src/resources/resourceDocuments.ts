// Resources as read-only documents under their own scheme (`mcp-sidecar-resource:`; VS Code's
// own MCP support owns `mcp-resource:`): a text resource is a document in the language of its
// mimeType, an image opens in a webview, other binary content is offered for saving. A resource is subscribed while its document (or image) is open, when its
// server can subscribe, and `mcp-sidecar/resourceUpdated` reads it again.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { note } from '../log';
import type { Sidecar } from '../sidecar';
import { blobBytes, documentPath, resourceView, saveName, type ResourceView } from './resourceModel';

export const RESOURCE_SCHEME = 'mcp-sidecar-resource';

const keyOf = (server: string, uri: string) => `${server}\n${uri}`;

export class ResourceDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Text just read for a document about to open, so that opening does not read it twice. */
  private fresh = new Map<string, string>();
  /** Subscribed resources (server and URI). */
  private subscribed = new Set<string>();
  /** Subscriptions a server lost by stopping, renewed when it runs again. */
  private lost = new Set<string>();
  private images = new Map<string, vscode.WebviewPanel>();
  /** The mimeType a resource was listed with, for a read whose items name none. */
  private listedMime = new Map<string, string | undefined>();
  private disposables: vscode.Disposable[];

  constructor(private sidecar: Sidecar) {
    this.disposables = [
      vscode.workspace.registerTextDocumentContentProvider(RESOURCE_SCHEME, this),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of e.closed) {
          if (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === RESOURCE_SCHEME) this.maybeUnsubscribe(tab.input.uri);
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.uri.scheme === RESOURCE_SCHEME) this.maybeUnsubscribe(doc.uri);
      }),
    ];
  }

  /**
   * A resource's document: `mcp-sidecar-resource:/<server>/<last segment>?server=…&uri=…` (the
   * tab shows the last segment; the query says what to read, also after a window reload).
   */
  static documentUri(server: string, uri: string): vscode.Uri {
    return vscode.Uri.from({ scheme: RESOURCE_SCHEME, path: documentPath(server, uri), query: new URLSearchParams({ server, uri }).toString() });
  }

  static parse(doc: vscode.Uri): contract.ResourceArgs | undefined {
    const q = new URLSearchParams(doc.query);
    const server = q.get('server');
    const uri = q.get('uri');
    return server && uri ? { server, uri } : undefined;
  }

  async provideTextDocumentContent(doc: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const fresh = this.fresh.get(doc.toString());
    if (fresh !== undefined) {
      this.fresh.delete(doc.toString());
      return fresh;
    }
    const r = ResourceDocuments.parse(doc);
    if (!r) return `Not a resource document: ${doc.toString()}`;
    try {
      const view = resourceView((await this.read(r, token)).contents, this.listedMime.get(keyOf(r.server, r.uri)));
      return textOf(view, r.uri);
    } catch (error) {
      return `Reading ${r.uri} from ${r.server} failed: ${messageOf(error)}`;
    }
  }

  /** Reads a resource and shows it as its content asks. */
  async open(server: string, uri: string, listedMimeType?: string): Promise<void> {
    this.listedMime.set(keyOf(server, uri), listedMimeType);
    note(`resource ${server} ${uri}: reading`);
    let result: contract.ReadResourceResult;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `${server}: reading ${uri}`, cancellable: true },
        (_progress, token) => this.read({ server, uri }, token),
      );
    } catch (error) {
      const e = error as { data?: { kind?: string } };
      if (e?.data?.kind === 'cancelled') return;
      void vscode.window.showErrorMessage(`Reading ${uri} from ${server} failed: ${messageOf(error)}`);
      return;
    }
    const view = resourceView(result?.contents, listedMimeType);
    note(`resource ${server} ${uri}: ${view.kind}${view.kind === 'text' ? ` (${view.language})` : ''}`);
    switch (view.kind) {
      case 'text': {
        const docUri = ResourceDocuments.documentUri(server, uri);
        this.fresh.set(docUri.toString(), view.text);
        // A document already open keeps its old text unless told it changed.
        if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === docUri.toString())) this.changed.fire(docUri);
        let doc = await vscode.workspace.openTextDocument(docUri);
        this.fresh.delete(docUri.toString());
        if (doc.languageId !== view.language) doc = await vscode.languages.setTextDocumentLanguage(doc, view.language);
        await vscode.window.showTextDocument(doc, { preview: false });
        await this.subscribe(server, uri);
        return;
      }
      case 'image':
        this.showImage(server, uri, view);
        await this.subscribe(server, uri);
        return;
      case 'binary':
        await this.offerSave(uri, view);
        return;
      case 'empty':
        void vscode.window.showInformationMessage(`${server}: ${uri} has no content.`);
    }
  }

  /**
   * A server that stops loses its subscriptions; when it runs again (a restart of it or of the
   * sidecar), the resources still shown are subscribed again and read again.
   */
  serverStatus(p: contract.ServerStatusParams): void {
    const mine = (set: Set<string>) => [...set].filter((k) => k.startsWith(`${p.name}\n`));
    if (p.state !== 'running') {
      for (const key of mine(this.subscribed)) {
        this.subscribed.delete(key);
        this.lost.add(key);
      }
      return;
    }
    for (const key of mine(this.lost)) {
      this.lost.delete(key);
      const uri = key.slice(p.name.length + 1);
      if (!this.isShown(p.name, uri)) continue;
      void this.subscribe(p.name, uri);
      this.updated({ server: p.name, uri });
    }
  }

  private isShown(server: string, uri: string): boolean {
    const target = ResourceDocuments.documentUri(server, uri).toString();
    const tab = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === target));
    return tab || this.images.has(keyOf(server, uri));
  }

  /** `mcp-sidecar/resourceUpdated`: the open document (or image) reads the resource again. */
  updated(p: contract.ResourceUpdatedParams): void {
    const key = keyOf(p.server, p.uri);
    const docUri = ResourceDocuments.documentUri(p.server, p.uri);
    const open = vscode.workspace.textDocuments.some((d) => d.uri.toString() === docUri.toString());
    if (open) {
      note(`resource ${p.server} ${p.uri} updated: reading it again`);
      this.changed.fire(docUri);
    }
    const panel = this.images.get(key);
    if (panel) {
      void this.read(p).then(
        (result) => {
          const view = resourceView(result.contents, this.listedMime.get(key));
          if (view.kind === 'image') panel.webview.html = imageHtml(p.uri, view);
        },
        (error) => note(`reading the updated ${p.uri} of ${p.server}: ${messageOf(error)}`),
      );
    }
    if (!open && !panel) note(`resource ${p.server} ${p.uri} updated, but no document shows it`);
  }

  private read(r: contract.ResourceArgs, token?: vscode.CancellationToken): Promise<contract.ReadResourceResult> {
    return this.sidecar.command<contract.ReadResourceResult>(contract.CMD_READ_RESOURCE, r satisfies contract.ResourceArgs, token);
  }

  private async subscribe(server: string, uri: string): Promise<void> {
    const key = keyOf(server, uri);
    if (this.subscribed.has(key)) return;
    this.subscribed.add(key);
    try {
      await this.sidecar.command(contract.CMD_SUBSCRIBE_RESOURCE, { server, uri } satisfies contract.ResourceArgs);
      note(`resource ${server} ${uri}: subscribed while its document is open`);
    } catch (error) {
      this.subscribed.delete(key);
      // A server without subscriptions (refused) simply is not followed.
      note(`resource ${server} ${uri}: not subscribed (${messageOf(error)})`);
    }
  }

  private maybeUnsubscribe(docUri: vscode.Uri): void {
    const r = ResourceDocuments.parse(docUri);
    if (!r || this.isShown(r.server, r.uri)) return;
    this.lost.delete(keyOf(r.server, r.uri));
    if (this.subscribed.has(keyOf(r.server, r.uri))) void this.unsubscribe(r.server, r.uri);
  }

  private async unsubscribe(server: string, uri: string): Promise<void> {
    if (!this.subscribed.delete(keyOf(server, uri))) return;
    try {
      await this.sidecar.command(contract.CMD_UNSUBSCRIBE_RESOURCE, { server, uri } satisfies contract.ResourceArgs);
      note(`resource ${server} ${uri}: unsubscribed (its document closed)`);
    } catch (error) {
      note(`resource ${server} ${uri}: unsubscribing failed (${messageOf(error)})`);
    }
  }

  /**
   * An image in a webview: its bytes as a data: URI under a CSP that allows nothing else (no
   * scripts, no network), so no temporary file is written and nothing is left behind.
   */
  private showImage(server: string, uri: string, view: Extract<ResourceView, { kind: 'image' }>): void {
    const key = keyOf(server, uri);
    let panel = this.images.get(key);
    if (!panel) {
      panel = vscode.window.createWebviewPanel('mcpSidecar.resourceImage', `${server}: ${documentPath(server, uri).split('/').pop()}`, vscode.ViewColumn.Active, {
        enableScripts: false,
      });
      this.images.set(key, panel);
      panel.onDidDispose(() => {
        this.images.delete(key);
        void this.unsubscribe(server, uri);
      });
    }
    panel.webview.html = imageHtml(uri, view);
    panel.reveal();
  }

  private async offerSave(uri: string, view: Extract<ResourceView, { kind: 'binary' }>): Promise<void> {
    const bytes = blobBytes(view.data);
    const choice = await vscode.window.showInformationMessage(
      `${uri} is binary (${view.mimeType ?? 'no mimeType'}, ${bytes} bytes).`,
      'Save As…',
    );
    if (choice !== 'Save As…') return;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      defaultUri: folder ? vscode.Uri.joinPath(folder, saveName(uri, view.mimeType)) : undefined,
      saveLabel: 'Save',
      title: `Save ${uri}`,
    });
    if (!target) return;
    await vscode.workspace.fs.writeFile(target, Buffer.from(view.data, 'base64'));
    vscode.window.setStatusBarMessage(`$(save) Saved ${bytes} bytes to ${target.fsPath || target.toString()}`, 5000);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    for (const p of this.images.values()) p.dispose();
    this.changed.dispose();
  }
}

/** The text a document shows for a view read again (an update may change its kind). */
function textOf(view: ResourceView, uri: string): string {
  switch (view.kind) {
    case 'text':
      return view.text;
    case 'empty':
      return '';
    default:
      return `[${uri} is now binary (${view.mimeType ?? 'no mimeType'}, ${blobBytes(view.data)} bytes): open it again to see or save it]`;
  }
}

function imageHtml(uri: string, view: Extract<ResourceView, { kind: 'image' }>): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const data = view.data.replace(/[^A-Za-z0-9+/=]/g, '');
  return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline';">
<title>${esc(uri)}</title><style>body{display:flex;flex-direction:column;align-items:center;gap:8px}img{max-width:100%;image-rendering:auto}</style></head>
<body><img alt="${esc(uri)}" src="data:${esc(view.mimeType)};base64,${data}"><code>${esc(uri)} · ${esc(view.mimeType)} · ${blobBytes(view.data)} bytes</code></body></html>`;
}

function messageOf(error: unknown): string {
  return (error as Error)?.message ?? String(error);
}
