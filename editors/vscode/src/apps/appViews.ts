// A server's view (MCP Apps, docs/apps.md) in a webview panel beside the editor: opened by the
// sidecar's mcp-sidecar/openApp, closed by mcp-sidecar/closeApp or by the person (then the
// sidecar is told, mcp-sidecar.closeApp). The page (appModel.webviewHtml) runs dist/host.js, the
// AppBridge bundle, and dist/appView.js, which frames the app; every message of the app goes to
// the sidecar (mcp-sidecar.appRequest), which decides what a view may do.

import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import * as contract from '../contract';
import { note } from '../log';
import type { Sidecar } from '../sidecar';
import { appAnswer, appPickItem, failedAnswer, fromView, themeOf, webviewCsp, webviewHtml, withCsp, type ToView } from './appModel';

const VIEW_TYPE = 'mcpSidecar.appView';
/** How long the app gets for ui/resource-teardown (the bridge waits at most 3 s) before the panel goes. */
const TEARDOWN_MS = 4000;
/** A panel covered this soon after it opened was covered by its tool's result. */
const COVERED_MS = 3000;

interface OpenView {
  panel: vscode.WebviewPanel;
  /** The sidecar closed the view (closeApp, or it stopped): the panel's end is not reported back. */
  closedBySidecar: boolean;
}

export class AppViews implements vscode.Disposable {
  private views = new Map<string, OpenView>();
  private dist: vscode.Uri;

  constructor(
    private sidecar: Sidecar,
    extensionUri: vscode.Uri,
  ) {
    this.dist = vscode.Uri.joinPath(extensionUri, 'dist');
  }

  /** `mcp-sidecar/openApp`: a panel for the view, or the view's panel shown again. */
  open(params: contract.OpenAppParams): contract.OpenAppResult {
    const existing = this.views.get(params.view);
    if (existing) {
      existing.panel.reveal(undefined, true);
      return { opened: true };
    }
    if (!existsSync(vscode.Uri.joinPath(this.dist, 'host.js').fsPath)) {
      note(`openApp ${params.view}: this build of the extension has no dist/host.js; the view is not opened`);
      return { opened: false };
    }
    const panel = vscode.window.createWebviewPanel(
      VIEW_TYPE,
      params.title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [this.dist], retainContextWhenHidden: true },
    );
    const entry: OpenView = { panel, closedBySidecar: false };
    this.views.set(params.view, entry);
    const webview = panel.webview;
    const script = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.dist, name)).toString();
    webview.html = webviewHtml(webviewCsp(params.csp, webview.cspSource), [script('host.js'), script('appView.js')]);
    const post = (message: ToView) => void webview.postMessage(message);
    const theme = themeOf(
      [vscode.ColorThemeKind.Light, vscode.ColorThemeKind.HighContrastLight].includes(vscode.window.activeColorTheme.kind),
    );
    // In an empty window the panel takes the active group, where the tool's result may open a
    // moment later (the sidecar answers callTool and opens the view at once): covered as it
    // opens, it moves beside (once). ResultDocuments does the same when the panel came first.
    const opened = Date.now();
    let moved = false;
    const subscriptions = [
      panel.onDidChangeViewState(() => {
        if (panel.visible || moved || Date.now() - opened > COVERED_MS) return;
        moved = true;
        panel.reveal(vscode.ViewColumn.Beside, true);
      }),
      webview.onDidReceiveMessage(async (raw: unknown) => {
        const message = fromView(raw);
        if (!message) return;
        switch (message.type) {
          case 'ready':
            post({
              type: 'open',
              html: withCsp(params.html, params.csp),
              data: {
                server: params.server,
                tool: params.tool,
                arguments: params.arguments ?? {},
                result: params.result ?? {},
                hostContext: { ...params.hostContext, theme },
              },
            });
            break;
          case 'request':
            post({ type: 'answer', id: message.id, answer: await this.appRequest(params.view, message.message) });
            break;
          case 'notify':
            void this.appRequest(params.view, message.message);
            break;
          case 'tornDown':
            panel.dispose();
            break;
        }
      }),
      panel.onDidDispose(() => {
        subscriptions.forEach((s) => s.dispose());
        if (this.views.get(params.view) === entry) this.views.delete(params.view);
        if (!entry.closedBySidecar) {
          this.sidecar
            .command(contract.CMD_CLOSE_APP, { view: params.view } satisfies contract.ViewArgs)
            .catch((error) => note(`closeApp ${params.view}: ${String((error as Error)?.message ?? error)}`));
        }
      }),
    ];
    return { opened: true };
  }

  /** `mcp-sidecar/closeApp`: the app is told (ui/resource-teardown), then its panel closes. */
  close(params: contract.CloseAppParams): void {
    const entry = this.views.get(params.view);
    if (!entry) {
      note(`closeApp ${params.view}: no such view open here`);
      return;
    }
    this.teardown(entry, params.reason ?? 'the view was closed');
  }

  /** The sidecar stopped: its views are gone. */
  closeAll(reason: string): void {
    for (const entry of this.views.values()) this.teardown(entry, reason);
  }

  dispose(): void {
    for (const entry of this.views.values()) {
      entry.closedBySidecar = true;
      entry.panel.dispose();
    }
    this.views.clear();
  }

  private teardown(entry: OpenView, reason: string): void {
    entry.closedBySidecar = true;
    void entry.panel.webview.postMessage({ type: 'teardown', reason } satisfies ToView);
    const timer = setTimeout(() => entry.panel.dispose(), TEARDOWN_MS);
    entry.panel.onDidDispose(() => clearTimeout(timer));
  }

  private async appRequest(view: string, message: contract.JsonRpcMessage) {
    try {
      return appAnswer(await this.sidecar.command<unknown>(contract.CMD_APP_REQUEST, { view, message } satisfies contract.AppRequestArgs));
    } catch (error) {
      return failedAnswer(error);
    }
  }
}

/** Whether the active group shows an app view (a tool's result then opens beside it, not over it). */
export function appViewIsActive(): boolean {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputWebview && input.viewType.endsWith(VIEW_TYPE);
}

/** "MCP Sidecar: Open App View…": pick an open view; the sidecar opens it again. */
export async function openAppViewCommand(sidecar: Sidecar): Promise<void> {
  const apps = await sidecar.command<contract.AppSummary[]>(contract.CMD_LIST_APPS);
  if (apps.length === 0) {
    void vscode.window.showInformationMessage('No app view is open. A tool with a view opens one when you call it (MCP Sidecar: Call Tool).');
    return;
  }
  const pick = await vscode.window.showQuickPick(
    apps.map((app, index) => ({ ...appPickItem(app), index })),
    { title: 'MCP Sidecar: Open App View', placeHolder: 'Which view?' },
  );
  if (!pick) return;
  const r = await sidecar.command<contract.OpenAppResult>(contract.CMD_OPEN_APP, { view: apps[pick.index].view } satisfies contract.ViewArgs);
  if (!r?.opened) void vscode.window.showWarningMessage(`${apps[pick.index].title}: the view did not open.`);
}
