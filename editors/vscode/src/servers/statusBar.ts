// The status bar item: the servers' states at a glance; a click opens the server list (or signs
// in to the server that needs it).

import * as vscode from 'vscode';
import { statusBarView, type ServerStates, type SidecarState } from './serverStates';

export class StatusBar implements vscode.Disposable {
  private item = vscode.window.createStatusBarItem('mcpSidecar.status', vscode.StatusBarAlignment.Left, 10);

  constructor(private states: ServerStates) {
    this.item.name = 'MCP Sidecar';
    this.render('starting');
    this.item.show();
  }

  render(sidecar: SidecarState): void {
    const view = statusBarView(sidecar, this.states.all());
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = { title: 'MCP Sidecar', command: view.command.id, arguments: view.command.args };
    this.item.backgroundColor =
      view.severity === 'error'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : view.severity === 'warning'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
