// The sidecar process as a language client: finds and checks the binary, starts it with the
// settings, answers its requests with the editor's UI, restarts it, and sends it commands.

import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  CancellationToken,
  ExecuteCommandRequest,
  LanguageClient,
  LogMessageNotification,
  MessageType,
  ResponseError,
  RevealOutputChannelOn,
  State,
  WorkDoneProgress,
  type LanguageClientOptions,
  type ServerOptions,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { findSidecar } from './binaryCheck';
import { editorCapabilities, SidecarCapabilities } from './capabilities';
import { binaryPathSetting, logLevelSetting, readSidecarSettings } from './config';
import * as contract from './contract';
import type { DraftService } from './drafts/drafts';
import { answerWithLanguageModel, hasLanguageModel } from './lm/languageModel';
import { logChannel, note } from './log';
import type { PromptService } from './prompts/promptService';
import type { ServerStates, SidecarState } from './servers/serverStates';
import { sidecarArgs, type SidecarSettings } from './settings';

/** Automatic restarts allowed within CRASH_WINDOW_MS before giving up. */
const MAX_RESTARTS = 3;
const CRASH_WINDOW_MS = 3 * 60 * 1000;

export type ProgressUpdate = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export interface SidecarParts {
  /** `context.extensionPath`: a platform-specific VSIX carries the sidecar in its `server/`. */
  extensionPath: string;
  prompts: PromptService;
  drafts: DraftService;
  states: ServerStates;
  onState: (state: SidecarState) => void;
  /** A server's state changed (`mcp-sidecar/serverStatus`). */
  onServerStatus: (params: contract.ServerStatusParams) => void;
  /** A subscribed resource changed (`mcp-sidecar/resourceUpdated`). */
  onResourceUpdated: (params: contract.ResourceUpdatedParams) => void;
  /** Host a server's view (`mcp-sidecar/openApp`). */
  onOpenApp: (params: contract.OpenAppParams) => contract.OpenAppResult;
  /** The sidecar closed a view (`mcp-sidecar/closeApp`). */
  onCloseApp: (params: contract.CloseAppParams) => void;
  /** A task changed (`mcp-sidecar/taskStatus`). */
  onTaskStatus: (params: contract.TaskInfo) => void;
  /** The gateway's address after each start of it, `undefined` while there is none. */
  onGateway: (info: contract.GatewayInfo | undefined) => void;
}

export class Sidecar implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private state: SidecarState = 'stopped';
  private starting: Promise<void> | undefined;
  private stopping = false;
  private crashes: number[] = [];
  private inFlight = 0;
  private declaredLanguageModel = false;
  /** The settings the sidecar has (JSON), to send only changes. */
  private sentSettings: string | undefined;
  /** binaryPath and log.level of the last start (JSON): a change event alone does not restart. */
  private launchSettings: string | undefined;
  private modelWatch: vscode.Disposable;
  private modelTimer: ReturnType<typeof setTimeout> | undefined;
  private binary: string | undefined;

  constructor(private parts: SidecarParts) {
    // `languageModel` is declared in `initialize` only; when models come or go later (a provider
    // extension activating), restart the idle sidecar so the declaration is right.
    this.modelWatch = vscode.lm.onDidChangeChatModels(() => {
      clearTimeout(this.modelTimer);
      this.modelTimer = setTimeout(() => void this.recheckModels(), 1000);
    });
  }

  get sidecarState(): SidecarState {
    return this.state;
  }

  /** The binary of the last start (what agents' configurations launch as `mcp-sidecar gateway`). */
  get binaryPath(): string | undefined {
    return this.binary;
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.cancelPrompts();
    if (client) {
      this.stopping = true;
      try {
        await client.stop(5000);
      } catch (error) {
        note(`stopping the sidecar: ${String(error)}`);
      } finally {
        this.stopping = false;
      }
    }
    this.parts.states.clear();
    this.parts.onGateway(undefined);
    this.setState('stopped');
  }

  async restart(): Promise<void> {
    await this.starting;
    await this.stop();
    this.crashes = [];
    await this.start();
  }

  /**
   * Whether binaryPath or log.level differ from the last start. VS Code reports restricted
   * settings as changed when the workspace becomes trusted, with the same values.
   */
  launchSettingsChanged(): boolean {
    return launchSettings() !== this.launchSettings;
  }

  /** Runs one of the sidecar's `mcp-sidecar.*` commands. */
  async command<T>(
    command: string,
    arg: object = {},
    token?: vscode.CancellationToken,
    onProgress?: (update: ProgressUpdate) => void,
  ): Promise<T> {
    await this.starting;
    const client = this.client;
    if (!client || this.state !== 'running') {
      throw new Error('MCP Sidecar is not running (see "MCP Sidecar: Show Log", then "MCP Sidecar: Restart Sidecar")');
    }
    const workDoneToken = onProgress ? `mcp-sidecar-vscode-${Date.now()}-${Math.random().toString(36).slice(2)}` : undefined;
    const progress = workDoneToken && onProgress ? client.onProgress(WorkDoneProgress.type, workDoneToken, onProgress) : undefined;
    this.inFlight += 1;
    try {
      return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg], workDoneToken }, token)) as T;
    } finally {
      this.inFlight -= 1;
      progress?.dispose();
    }
  }

  private async recheckModels(): Promise<void> {
    if (this.state !== 'running' || this.starting) return;
    const available = await withTimeout(hasLanguageModel(), 3000, this.declaredLanguageModel);
    if (available === this.declaredLanguageModel) return;
    if (this.inFlight > 0 || this.parts.prompts.queue.size > 0) {
      note(`language models ${available ? 'appeared' : 'went away'}; the sidecar is busy, so this applies at its next start`);
      return;
    }
    note(`language models ${available ? 'appeared' : 'went away'}; restarting the sidecar to declare languageModel: ${available}`);
    await this.restart();
  }

  /**
   * Sends the current settings to the running sidecar when they differ from what it has. A
   * change while it starts is sent once it runs (its initializationOptions may predate it).
   */
  sendSettings(): void {
    if (!this.client || this.state !== 'running') return;
    const settings = readSidecarSettings();
    const json = JSON.stringify(settings);
    if (json === this.sentSettings) return;
    this.sentSettings = json;
    void this.client.sendNotification(DidChangeConfigurationNotification.type, { settings });
    note(`settings sent to the sidecar: ${describeSettings(settings)}`);
    // The sidecar reports nothing more of a server taken out of the settings: forget it here.
    if (this.parts.states.forgetRemovedSettingsServers(Object.keys(settings.servers))) this.parts.onState(this.state);
  }

  async refreshServers(): Promise<void> {
    try {
      this.parts.states.replaceAll(await this.command<contract.ServerSummary[]>(contract.CMD_LIST_SERVERS));
      this.parts.onState(this.state);
    } catch (error) {
      note(`listServers failed: ${String(error)}`);
    }
  }

  dispose(): void {
    clearTimeout(this.modelTimer);
    this.modelWatch.dispose();
    void this.stop();
  }

  private setState(state: SidecarState): void {
    this.state = state;
    this.parts.onState(state);
  }

  private cancelPrompts(): void {
    this.parts.prompts.queue.cancelAll();
    this.parts.drafts.cancelAll();
  }

  private async doStart(): Promise<void> {
    if (this.client) return;
    this.setState('starting');
    this.launchSettings = launchSettings();
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
    const found = await findSidecar(binaryPathSetting(), this.parts.extensionPath);
    if (!found.ok) {
      this.setState('failed');
      note(`cannot start: ${found.problem}. ${found.fix}`);
      void this.showProblem(`cannot start: ${found.problem}.`, found.fix);
      return;
    }
    this.binary = found.path;
    const languageModel = await withTimeout(hasLanguageModel(), 3000, false);
    this.declaredLanguageModel = languageModel;
    const server: ServerOptions = {
      command: found.path,
      // No `transport`: TransportKind.stdio would append `--stdio`, which mcp-sidecar rejects.
      args: sidecarArgs(logLevelSetting()),
      options: { cwd: folder ?? os.homedir() },
    };
    const options: LanguageClientOptions = {
      outputChannel: logChannel(),
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => {
        const settings = readSidecarSettings();
        this.sentSettings = JSON.stringify(settings);
        note(`settings at the sidecar's start: ${describeSettings(settings)}`);
        return settings;
      },
      // No retry and no message here: start() fails and says so once, below.
      initializationFailedHandler: () => false,
      middleware: {
        window: {
          // Only web addresses open outside the editor, whatever the sidecar asks.
          showDocument: async (params, next) => {
            if (params.external && !contract.mayOpenExternal(params.uri)) {
              note('refused to open an address that is not http or https outside the editor');
              return { success: false };
            }
            const shown = await next(params, CancellationToken.None);
            return shown instanceof ResponseError ? { success: false } : shown;
          },
        },
      },
      errorHandler: {
        error: (_error, _message, count) => ({ action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true }),
        closed: () => this.onClosed(),
      },
    };
    const client = new LanguageClient('mcpSidecar', 'MCP Sidecar', server, options);
    client.registerFeature(new SidecarCapabilities(editorCapabilities(languageModel)));
    this.registerHandlers(client);
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) {
        this.setState('running');
        void this.refreshServers();
      } else if (e.newState === State.Starting) {
        this.setState('starting');
      }
    });
    this.client = client;
    note(`starting ${found.path} ${sidecarArgs(logLevelSetting()).join(' ')} (binary from ${found.from}, languageModel: ${languageModel})`);
    try {
      await client.start();
      this.setState('running');
      this.sendSettings(); // settings that changed while it started
    } catch (error) {
      this.client = undefined;
      this.setState('failed');
      note(`the sidecar did not start: ${String(error)}`);
      void this.showProblem(`the sidecar at ${found.path} did not start: ${String((error as Error)?.message ?? error)}.`, 'See the log.');
    }
  }

  private onClosed(): { action: CloseAction; handled: boolean } {
    this.cancelPrompts();
    this.parts.onGateway(undefined);
    if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < CRASH_WINDOW_MS);
    this.crashes.push(now);
    if (this.crashes.length <= MAX_RESTARTS) {
      note(`the sidecar exited; restarting (${this.crashes.length} of ${MAX_RESTARTS})`);
      this.setState('starting');
      return { action: CloseAction.Restart, handled: true };
    }
    this.setState('failed');
    void this.showProblem(
      `the sidecar exited ${this.crashes.length} times in ${CRASH_WINDOW_MS / 60000} minutes and was not restarted.`,
      'See the log; then run "MCP Sidecar: Restart Sidecar".',
    );
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private registerHandlers(client: LanguageClient): void {
    const { prompts, drafts, states } = this.parts;
    client.onRequest(contract.INPUT_BOX, (p: contract.InputBoxParams, token) => prompts.inputBox(p, token));
    client.onRequest(contract.QUICK_PICK, (p: contract.QuickPickParams, token) => prompts.quickPick(p, token));
    client.onRequest(contract.EDIT_DRAFT, (p: contract.EditDraftParams, token) => drafts.editDraft(p, token));
    client.onRequest(contract.LANGUAGE_MODEL, (p: contract.LanguageModelParams, token) => answerWithLanguageModel(p, token));
    client.onNotification(contract.CANCEL_PROMPT, (p: contract.CancelPromptParams) => {
      if (!prompts.cancel(p.id) && !drafts.cancel(p.id)) note(`cancelPrompt ${p.id}: no such prompt open`);
    });
    client.onNotification(contract.CLIPBOARD, (p: contract.ClipboardParams) => {
      void vscode.env.clipboard.writeText(p.text).then(() => vscode.window.setStatusBarMessage('$(copy) Copied to the clipboard', 3000));
    });
    client.onNotification(contract.SERVER_STATUS, (p: contract.ServerStatusParams) => {
      states.update(p);
      this.parts.onState(this.state);
      this.parts.onServerStatus(p);
    });
    client.onNotification(contract.RESOURCE_UPDATED, (p: contract.ResourceUpdatedParams) => this.parts.onResourceUpdated(p));
    client.onRequest(contract.OPEN_APP, (p: contract.OpenAppParams) => this.parts.onOpenApp(p));
    client.onNotification(contract.CLOSE_APP, (p: contract.CloseAppParams) => this.parts.onCloseApp(p));
    client.onNotification(contract.TASK_STATUS, (p: contract.TaskInfo) => this.parts.onTaskStatus(p));
    // window/logMessage: written to the output channel exactly as vscode-languageclient does
    // (this handler replaces its own); the gateway's lines "gateway: serving agents at <url>"
    // and "gateway: off (…)" also say when its address is there or gone.
    client.onNotification(LogMessageNotification.type, (m) => {
      switch (m.type) {
        case MessageType.Error:
          client.error(m.message, undefined, false);
          break;
        case MessageType.Warning:
          client.warn(m.message, undefined, false);
          break;
        case MessageType.Info:
          client.info(m.message, undefined, false);
          break;
        case MessageType.Debug:
          client.debug(m.message, undefined, false);
          break;
        default:
          client.outputChannel.appendLine(m.message);
      }
      if (m.message.startsWith('gateway: serving agents at ')) void this.refreshGateway();
      else if (m.message.startsWith('gateway: off')) this.parts.onGateway(undefined);
    });
  }

  /** Asks for the gateway's address (it just started) and passes it on. */
  private async refreshGateway(): Promise<void> {
    try {
      this.parts.onGateway(await this.command<contract.GatewayInfo>(contract.CMD_GATEWAY_INFO));
    } catch (error) {
      note(`gatewayInfo failed: ${String((error as Error)?.message ?? error)}`);
      this.parts.onGateway(undefined);
    }
  }

  private async showProblem(problem: string, fix: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(`MCP Sidecar ${problem} ${fix}`, 'Open Settings', 'Show Log');
    if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'mcpSidecar.binaryPath');
    else if (choice === 'Show Log') logChannel().show(true);
  }
}

function launchSettings(): string {
  return JSON.stringify([binaryPathSetting(), logLevelSetting()]);
}

/** For the log: counts and choices, no server definitions (they may hold secrets). */
function describeSettings(settings: SidecarSettings): string {
  const servers = Object.keys(settings.servers).length;
  return `${servers} servers, sampling provider ${settings.sampling?.provider ?? '(not set)'}, workspace trusted: ${settings.workspaceTrusted}`;
}

function withTimeout<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}
