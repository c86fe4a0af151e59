// "MCP Sidecar: Show Servers" (also the status bar's click): each server with its state, and
// start / restart / call tool / log actions.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { logChannel } from '../log';
import type { Sidecar } from '../sidecar';
import { STATE_ICONS, type ServerStates } from './serverStates';

interface ServerItem extends vscode.QuickPickItem {
  server?: contract.ServerStatusParams;
  action?: 'log' | 'restartSidecar' | 'settings';
}

const RESTART_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('debug-restart'), tooltip: 'Restart' };
const LOG_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('output'), tooltip: 'Show Log' };

export async function restartNamed(sidecar: Sidecar, server: string): Promise<void> {
  try {
    await sidecar.command(contract.CMD_RESTART_SERVER, { server });
    vscode.window.setStatusBarMessage(`$(debug-restart) Restarting ${server}`, 3000);
  } catch (error) {
    void vscode.window.showErrorMessage(`Restarting ${server} failed: ${(error as Error).message}`);
  }
}

export async function showServersCommand(sidecar: Sidecar, states: ServerStates): Promise<void> {
  let servers = states.all();
  if (sidecar.sidecarState === 'running') {
    try {
      servers = await sidecar.command<contract.ServerSummary[]>(contract.CMD_LIST_SERVERS);
    } catch {
      // keep the last known states
    }
  }
  const items: ServerItem[] = servers.map((s) => ({
    label: `${STATE_ICONS[s.state] ?? ''} ${s.name}`,
    description: [s.state, s.protocolVersion, s.source].filter(Boolean).join(' · '),
    detail: s.message,
    server: s,
    buttons: [RESTART_BUTTON, LOG_BUTTON],
  }));
  items.push(
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: '$(output) Show Log', action: 'log' },
    { label: '$(debug-restart) Restart Sidecar', description: `sidecar: ${sidecar.sidecarState}`, action: 'restartSidecar' },
    { label: '$(settings-gear) Configure Servers', action: 'settings' },
  );
  const pick = vscode.window.createQuickPick<ServerItem>();
  pick.title = 'MCP Servers';
  pick.placeholder = servers.length ? 'Pick a server for its actions' : 'No MCP servers configured';
  pick.items = items;
  const chosen = await new Promise<{ item?: ServerItem; button?: vscode.QuickInputButton }>((resolve) => {
    pick.onDidAccept(() => resolve({ item: pick.selectedItems[0] }));
    pick.onDidTriggerItemButton((e) => resolve({ item: e.item, button: e.button }));
    pick.onDidHide(() => resolve({}));
    pick.show();
  });
  pick.dispose();
  const { item, button } = chosen;
  if (!item) return;
  if (item.action === 'log' || button === LOG_BUTTON) return logChannel().show(true);
  if (item.action === 'restartSidecar') return sidecar.restart();
  if (item.action === 'settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'mcpSidecar.servers');
    return;
  }
  const server = item.server;
  if (!server) return;
  if (button === RESTART_BUTTON) return restartNamed(sidecar, server.name);
  const running = server.state === 'running';
  const actions = [
    { label: running ? '$(debug-restart) Restart' : '$(play) Start', id: 'restart' },
    ...(running ? [{ label: '$(tools) Call Tool…', id: 'call' }] : []),
    { label: '$(output) Show Log', id: 'log' },
  ];
  const action = await vscode.window.showQuickPick(actions, { title: `${server.name}: ${server.state}`, placeHolder: server.message });
  if (action?.id === 'restart') await restartNamed(sidecar, server.name);
  else if (action?.id === 'call') await vscode.commands.executeCommand('mcpSidecar.callTool', server.name);
  else if (action?.id === 'log') logChannel().show(true);
}
