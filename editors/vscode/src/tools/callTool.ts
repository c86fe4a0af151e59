// "MCP Sidecar: Call Tool": pick a server and a tool, type the arguments, see the result.
// The steps use the same prompt primitives as the sidecar's questions (step counter, Back).

import * as vscode from 'vscode';
import * as contract from '../contract';
import type { PromptService } from '../prompts/promptService';
import type { Sidecar } from '../sidecar';
import { argumentSkeleton, argumentsHelp, needsArguments, parseArguments } from './argumentsModel';
import type { ResultDocuments } from './resultDocuments';
import { resultMarkdown } from './resultMarkdown';

const TITLE = 'MCP Sidecar: Call Tool';
let nextId = 1;
const promptId = () => `calltool-${nextId++}`;

type Stage = 'server' | 'tool' | 'arguments';

export async function callToolCommand(
  sidecar: Sidecar,
  prompts: PromptService,
  results: ResultDocuments,
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
  const stepOf = (stage: Stage) => (askServer ? 1 : 0) + (stage === 'server' ? 1 : stage === 'tool' ? 2 : 3) - 1;
  const tools = new Map<string, contract.ToolSummary[]>();

  let stage: Stage = askServer ? 'server' : 'tool';
  let server = servers[0].name;
  let tool: contract.ToolSummary | undefined;
  let argsText: string | undefined;
  let validationMessage: string | undefined;
  for (;;) {
    const totalSteps = (askServer ? 1 : 0) + 1 + (tool && !needsArguments(tool.inputSchema) ? 0 : 1);
    if (stage === 'server') {
      const r = await prompts.quickPick({
        id: promptId(),
        title: TITLE,
        placeholder: 'Which server?',
        items: servers.map((s) => ({
          label: s.name,
          description: [s.serverInfo?.name, s.protocolVersion].filter(Boolean).join(' · '),
          detail: `${s.toolCount} tool${s.toolCount === 1 ? '' : 's'}`,
          picked: s.name === server,
        })),
        step: stepOf('server'),
        totalSteps,
      });
      if (!r || !('selected' in r) || r.selected.length === 0) return;
      const picked = servers[r.selected[0]].name;
      if (picked !== server) tool = undefined;
      server = picked;
      stage = 'tool';
    } else if (stage === 'tool') {
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
        placeholder: 'Which tool?',
        items: list.map((t) => ({
          label: t.name,
          description: t.title && t.title !== t.name ? t.title : undefined,
          detail: t.description,
          picked: t.name === tool?.name,
        })),
        step: stepOf('tool'),
        totalSteps,
        canGoBack: askServer,
      });
      if (!r) return;
      if ('back' in r) {
        stage = 'server';
        continue;
      }
      const chosen = list[r.selected[0]];
      if (chosen.name !== tool?.name) argsText = undefined;
      tool = chosen;
      if (!needsArguments(tool.inputSchema)) break;
      stage = 'arguments';
    } else {
      const schema = tool?.inputSchema;
      const r = await prompts.inputBox({
        id: promptId(),
        title: `${TITLE} (${server}: ${tool?.name})`,
        prompt: argumentsHelp(schema),
        placeholder: argumentSkeleton(schema),
        value: argsText ?? argumentSkeleton(schema),
        validationMessage,
        step: stepOf('arguments'),
        totalSteps,
        canGoBack: true,
      });
      if (!r) return;
      if ('back' in r) {
        validationMessage = undefined;
        stage = 'tool';
        continue;
      }
      if (!('value' in r)) return;
      argsText = r.value;
      const parsed = parseArguments(r.value, schema);
      if (parsed.ok) break;
      validationMessage = parsed.message;
    }
  }
  if (!tool) return;
  const args = tool && needsArguments(tool.inputSchema) ? parseArguments(argsText ?? '{}', tool.inputSchema) : undefined;
  await runTool(sidecar, results, server, tool.name, args?.ok ? args.value : undefined);
}

export async function runTool(
  sidecar: Sidecar,
  results: ResultDocuments,
  server: string,
  tool: string,
  args: Record<string, unknown> | undefined,
): Promise<void> {
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
    if (e?.data?.kind === 'cancelled' || /cancel/i.test(e?.message ?? '')) return;
    void vscode.window.showErrorMessage(`${server}: ${tool} failed: ${e?.message ?? String(error)}`);
  }
}
