// "MCP Sidecar: Show Servers" (also the status bar's click): each server with its state and its
// sign-in, and start / restart / call tool / sign in / sign out / log actions.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { logChannel } from '../log';
import type { Sidecar } from '../sidecar';
import { signInCommand, signOutCommand } from './authCommands';
import { canSignIn, canSignOut, describeAuth } from './authModel';
import { STATE_ICONS, type ServerStates } from './serverStates';

interface ServerItem extends vscode.QuickPickItem {
  server?: contract.ServerSummary | contract.ServerStatusParams;
  action?: 'log' | 'restartSidecar' | 'settings';
}

const RESTART_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('debug-restart'), tooltip: 'Restart' };
const LOG_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('output'), tooltip: 'Show Log' };
const SIGN_IN_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('key'), tooltip: 'Sign In' };

/** The row as listServers has it (with its transport and sign-in), or undefined for a last known state. */
const summary = (s: contract.ServerSummary | contract.ServerStatusParams): contract.ServerSummary | undefined =>
  'transport' in s ? s : undefined;

export async function restartNamed(sidecar: Sidecar, server: string): Promise<void> {
  try {
    await sidecar.command(contract.CMD_RESTART_SERVER, { server });
    vscode.window.setStatusBarMessage(`$(debug-restart) Restarting ${server}`, 3000);
  } catch (error) {
    void vscode.window.showErrorMessage(`Restarting ${server} failed: ${(error as Error).message}`);
  }
}

export async function showServersCommand(sidecar: Sidecar, states: ServerStates): Promise<void> {
  let servers: (contract.ServerSummary | contract.ServerStatusParams)[] = states.all();
  if (sidecar.sidecarState === 'running') {
    try {
      servers = await sidecar.command<contract.ServerSummary[]>(contract.CMD_LIST_SERVERS);
    } catch {
      // keep the last known states
    }
  }
  const now = Date.now() / 1000;
  const items: ServerItem[] = servers.map((s) => {
    const row = summary(s);
    return {
      label: `${STATE_ICONS[s.state] ?? ''} ${contract.shownName(s)}`,
      description: [s.state, s.protocolVersion, s.source].filter(Boolean).join(' · '),
      detail: [s.message, describeAuth(row?.auth, now)].filter(Boolean).join(' · ') || undefined,
      server: s,
      buttons: s.state === 'needsAuth' && row && canSignIn(row) ? [SIGN_IN_BUTTON, RESTART_BUTTON, LOG_BUTTON] : [RESTART_BUTTON, LOG_BUTTON],
    };
  });
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
  if (button === SIGN_IN_BUTTON) return signInCommand(sidecar, server.name);
  const running = server.state === 'running';
  const row = summary(server);
  const signIn = row && canSignIn(row) ? [{ label: '$(key) Sign In', id: 'signIn' }] : [];
  // For a server waiting for a sign-in, signing in is the thing to do: it comes first.
  const first = server.state === 'needsAuth';
  const actions = [
    ...(first ? signIn : []),
    { label: running ? '$(debug-restart) Restart' : '$(play) Start', id: 'restart' },
    ...(running ? [{ label: '$(tools) Call Tool…', id: 'call' }] : []),
    ...(first ? [] : signIn),
    ...(row && canSignOut(row) ? [{ label: '$(sign-out) Sign Out', id: 'signOut' }] : []),
    { label: '$(output) Show Log', id: 'log' },
  ];
  const action = await vscode.window.showQuickPick(actions, { title: `${server.name}: ${server.state}`, placeHolder: server.message });
  if (action?.id === 'restart') await restartNamed(sidecar, server.name);
  else if (action?.id === 'call') await vscode.commands.executeCommand('mcpSidecar.callTool', server.name);
  else if (action?.id === 'signIn') await signInCommand(sidecar, server.name);
  else if (action?.id === 'signOut') await signOutCommand(sidecar, server.name);
  else if (action?.id === 'log') logChannel().show(true);
}
