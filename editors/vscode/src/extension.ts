// Entry point: wires the sidecar client, the prompt and draft services, the status bar and the
// commands. Each part lives in its own module.

import * as vscode from 'vscode';
import { AppViews, openAppViewCommand } from './apps/appViews';
import { needsRestart, notifyFirstSetting, SECTION } from './config';
import * as contract from './contract';
import { DraftService } from './drafts/drafts';
import { registerE2eHooks } from './e2eHooks';
import { copyGatewayConfigurationCommand, TerminalEnvironment } from './gateway/gatewayCommands';
import { logChannel } from './log';
import { AttentionTracker } from './prompts/attentionTracker';
import { PromptService } from './prompts/promptService';
import { openResourceCommand } from './resources/openResource';
import { ResourceDocuments } from './resources/resourceDocuments';
import { signInCommand, signOutCommand } from './servers/authCommands';
import { showServersCommand } from './servers/serverList';
import { ServerStates } from './servers/serverStates';
import { StatusBar } from './servers/statusBar';
import { openSamplingLogCommand, trustCommand } from './servers/trustCommands';
import { runPromptCommand } from './serverPrompts/runPrompt';
import { Sidecar } from './sidecar';
import { browseSkillsCommand } from './skills/browseSkills';
import { SkillDocuments } from './skills/skillDocuments';
import { Tasks } from './tasks/tasks';
import { callToolCommand } from './tools/callTool';
import { ResultDocuments } from './tools/resultDocuments';

let sidecar: Sidecar | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const states = new ServerStates();
  const statusBar = new StatusBar(states);
  const attention = new AttentionTracker(notifyFirstSetting);
  const prompts = new PromptService(attention);
  const drafts = new DraftService();
  const results = new ResultDocuments();
  const terminalEnv = new TerminalEnvironment(context.environmentVariableCollection);
  const client = new Sidecar({
    extensionPath: context.extensionPath,
    prompts,
    drafts,
    states,
    onState: (s) => {
      statusBar.render(s);
      // A sidecar that stopped or restarts has no views: their panels close.
      if (s !== 'running') apps.closeAll('the sidecar stopped');
      void tasks.sidecarState(s);
    },
    onServerStatus: (p) => documents.serverStatus(p),
    onResourceUpdated: (p) => documents.updated(p),
    onOpenApp: (p): contract.OpenAppResult => apps.open(p),
    onCloseApp: (p) => apps.close(p),
    onTaskStatus: (p) => tasks.status(p),
    onGateway: (info) => terminalEnv.apply(info),
  });
  sidecar = client;
  const documents = new ResourceDocuments(client);
  const apps = new AppViews(client, context.extensionUri);
  const tasks = new Tasks(client, results);
  const skills = new SkillDocuments(client);

  const command = (id: string, run: (...args: unknown[]) => unknown) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        await run(...args);
      } catch (error) {
        void vscode.window.showErrorMessage(`MCP Sidecar: ${(error as Error)?.message ?? String(error)}`);
      }
    });

  context.subscriptions.push(
    logChannel(),
    statusBar,
    attention,
    drafts,
    results,
    documents,
    apps,
    tasks,
    skills,
    client,
    command('mcpSidecar.callTool', (server) =>
      callToolCommand(client, prompts, results, tasks.book, typeof server === 'string' ? server : undefined),
    ),
    command('mcpSidecar.showTasks', () => tasks.showTasksCommand()),
    command('mcpSidecar.browseSkills', () => browseSkillsCommand(client, skills)),
    command('mcpSidecar.openResource', () => openResourceCommand(client, prompts, documents)),
    command('mcpSidecar.runPrompt', () => runPromptCommand(client, prompts, results)),
    command('mcpSidecar.copyGatewayConfiguration', () => copyGatewayConfigurationCommand(client, prompts)),
    command('mcpSidecar.openAppView', () => openAppViewCommand(client)),
    command('mcpSidecar.showServers', () => showServersCommand(client, states)),
    command('mcpSidecar.restartServer', async () => {
      // Without a server the sidecar asks which one, through mcp-sidecar/quickPick.
      const r = await client.command<{ server: string } | null>(contract.CMD_RESTART_SERVER, {});
      if (r?.server) vscode.window.setStatusBarMessage(`$(debug-restart) Restarting ${r.server}`, 3000);
    }),
    command('mcpSidecar.trustServer', (server) => trustCommand(client, true, typeof server === 'string' ? server : undefined)),
    command('mcpSidecar.untrustServer', (server) => trustCommand(client, false, typeof server === 'string' ? server : undefined)),
    command('mcpSidecar.signIn', (server) => signInCommand(client, typeof server === 'string' ? server : undefined)),
    command('mcpSidecar.signOut', (server) => signOutCommand(client, typeof server === 'string' ? server : undefined)),
    command('mcpSidecar.openSamplingLog', () => openSamplingLogCommand(client)),
    command('mcpSidecar.showLog', () => logChannel().show(true)),
    command('mcpSidecar.restartSidecar', () => client.restart()),
    command('mcpSidecar.acceptDraft', (uri) => drafts.accept(uri instanceof vscode.Uri ? uri : undefined)),
    command('mcpSidecar.rejectDraft', (uri) => drafts.reject(uri instanceof vscode.Uri ? uri : undefined)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      if (needsRestart(e) && client.launchSettingsChanged()) void client.restart();
      else client.sendSettings();
    }),
    // Restricted Mode ends: the settings say workspaceTrusted: true, so the workspace's servers can start.
    vscode.workspace.onDidGrantWorkspaceTrust(() => client.sendSettings()),
    ...registerE2eHooks(prompts, drafts),
  );
  void client.start();
}

export function deactivate(): Promise<void> | undefined {
  return sidecar?.stop();
}
