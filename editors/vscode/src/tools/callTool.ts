// "MCP Sidecar: Call Tool": pick a server and a tool; the sidecar then asks for the tool's
// arguments itself (its step prompts, or a JSON draft) and the result opens as a document. The
// two picks use the same prompt primitives as the sidecar's questions (step counter, Back).

import * as vscode from 'vscode';
import * as contract from '../contract';
import type { PromptService } from '../prompts/promptService';
import type { Sidecar } from '../sidecar';
import type { CallOutcome, CallWatch } from '../tasks/taskModel';
import type { ResultDocuments } from './resultDocuments';
import { resultMarkdown } from './resultMarkdown';
import { toolPickItem } from './toolPickItem';

const TITLE = 'MCP Sidecar: Call Tool';

/** What learns of the calls in flight: a task one of them becomes is waited for here (TaskBook). */
export interface CallWatcher {
  callStarted(server: string, tool: string): CallWatch;
  callEnded(call: CallWatch, outcome: CallOutcome): void;
}
let nextId = 1;
const promptId = () => `calltool-${nextId++}`;

export async function callToolCommand(
  sidecar: Sidecar,
  prompts: PromptService,
  results: ResultDocuments,
  watcher: CallWatcher,
  presetServer?: string,
): Promise<void> {
  const servers = (await sidecar.command<contract.ServerSummary[]>(contract.CMD_LIST_SERVERS)).filter(
    (s) => s.state === 'running' && (!presetServer || s.name === presetServer),
  );
  if (servers.length === 0) {
    const choice = await vscode.window.showWarningMessage('No MCP server is running.', 'Show Servers');
    if (choice) await vscode.commands.executeCommand('mcpSidecar.showServers');
    return;
  }
  const askServer = servers.length > 1;
  const totalSteps = askServer ? 2 : 1;
  const tools = new Map<string, contract.ToolSummary[]>();
  let server = servers[0].name;
  let tool: string | undefined;
  let stage: 'server' | 'tool' = askServer ? 'server' : 'tool';
  while (!tool) {
    if (stage === 'server') {
      const r = await prompts.quickPick({
        id: promptId(),
        title: TITLE,
        placeholder: 'Which server?',
        items: servers.map((s) => ({
          label: contract.shownName(s),
          description: [s.serverInfo?.name, s.protocolVersion].filter(Boolean).join(' · '),
          detail: `${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}`,
          picked: s.name === server,
        })),
        step: 1,
        totalSteps,
      });
      if (!r || !('selected' in r) || r.selected.length === 0) return;
      server = servers[r.selected[0]].name;
      stage = 'tool';
      continue;
    }
    if (!tools.has(server)) tools.set(server, await sidecar.command<contract.ToolSummary[]>(contract.CMD_LIST_TOOLS, { server }));
    const list = tools.get(server) ?? [];
    if (list.length === 0) {
      void vscode.window.showInformationMessage(`${server} offers no tools.`);
      if (!askServer) return;
      stage = 'server';
      continue;
    }
    const r = await prompts.quickPick({
      id: promptId(),
      title: `${TITLE} (${server})`,
      placeholder: 'Which tool? (the server\'s questions about its arguments follow)',
      items: list.map(toolPickItem),
      step: totalSteps,
      totalSteps,
      canGoBack: askServer,
    });
    if (!r) return;
    if ('back' in r) stage = 'server';
    else tool = list[r.selected[0]]?.name;
  }
  // No `arguments`: the sidecar asks for them with the tool's inputSchema.
  await runTool(sidecar, results, watcher, server, tool, undefined);
}

/**
 * Runs the call under a cancellable notification (Cancel sends $/cancelRequest; for a task the
 * sidecar then sends tasks/cancel) showing the server's progress, a task's status among it.
 */
export async function runTool(
  sidecar: Sidecar,
  results: ResultDocuments,
  watcher: CallWatcher,
  server: string,
  tool: string,
  args: Record<string, unknown> | undefined,
): Promise<void> {
  const call = watcher.callStarted(server, tool);
  let outcome: CallOutcome = 'answered';
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `${server}: ${tool}`, cancellable: true },
      (progress, token) =>
        sidecar.command<contract.CallToolResult>(
          contract.CMD_CALL_TOOL,
          { server, tool, arguments: args } satisfies contract.CallToolArgs,
          token,
          (update) => {
            if (update.kind !== 'end' && update.message) progress.report({ message: update.message });
          },
        ),
    );
    await results.show(server, tool, resultMarkdown(server, tool, args, result ?? {}));
  } catch (error) {
    const e = error as { message?: string; data?: { kind?: string } };
    // The sidecar went away mid-call (vscode-jsonrpc's PendingResponseRejected, ConnectionInactive):
    // a task the call became goes on, and its end is announced when a sidecar reports it.
    const code = (error as { code?: number })?.code;
    if (code === -32097 || code === -32096) {
      outcome = 'lost';
      void vscode.window.showWarningMessage(`${server}: ${tool}: the sidecar stopped before the call ended.`);
      return;
    }
    // A refusal (declined arguments, a rejected sampling request) says so in the status bar, in
    // the sidecar's words; checked first, as its reason may mention a cancellation.
    if (e?.data?.kind === 'refused') {
      vscode.window.setStatusBarMessage(`$(circle-slash) ${server}: ${tool}: ${e.message}`, 5000);
      return;
    }
    if (e?.data?.kind === 'cancelled' || /cancel/i.test(e?.message ?? '')) return;
    void vscode.window.showErrorMessage(`${server}: ${tool} failed: ${e?.message ?? String(error)}`);
  } finally {
    watcher.callEnded(call, outcome);
  }
}
