// "MCP Sidecar: Run Prompt": pick one of the running servers' prompts, give its arguments (with
// the server's completion suggestions, ref/prompt, the earlier answers as context), and the
// messages (prompts/get) open as a Markdown document; "Insert at Cursor" puts their text into
// the editor that was active when the command started.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { askArguments } from '../prompts/argumentInput';
import type { PromptService } from '../prompts/promptService';
import { completer } from '../resources/completer';
import { RESOURCE_SCHEME } from '../resources/resourceDocuments';
import type { Sidecar } from '../sidecar';
import { RESULT_SCHEME, type ResultDocuments } from '../tools/resultDocuments';
import { promptMarkdown, promptRows, promptText } from './promptModel';

const TITLE = 'MCP Sidecar: Run Prompt';
export const INSERT = 'Insert at Cursor';
let nextId = 1;
const promptId = () => `runprompt-${nextId++}`;

export async function runPromptCommand(sidecar: Sidecar, prompts: PromptService, results: ResultDocuments): Promise<void> {
  const target = insertTarget(vscode.window.activeTextEditor);
  const list = await sidecar.command<contract.PromptSummary[]>(contract.CMD_LIST_PROMPTS);
  if (!list || list.length === 0) {
    void vscode.window.showInformationMessage('No running MCP server offers prompts.');
    return;
  }
  const rows = promptRows(list);
  let chosen = 0;
  for (;;) {
    const r = await prompts.quickPick({
      id: promptId(),
      title: TITLE,
      placeholder: 'Which prompt? (server · arguments, ? = optional)',
      items: rows.map((row, i) => ({ ...row, picked: i === chosen })),
    });
    if (!r || !('selected' in r) || r.selected.length === 0) return;
    chosen = r.selected[0];
    const prompt = list[chosen];
    const args = await askArguments(prompts, {
      id: promptId,
      title: `${prompt.server}: ${contract.shownName(prompt)}`,
      steps: (prompt.arguments ?? [])
        .filter((a) => typeof a?.name === 'string')
        .map((a) => ({ key: a.name, name: a.title || a.name, description: a.description, required: a.required === true })),
      suggest: completer(sidecar, prompt.server, { type: 'ref/prompt', name: prompt.name }),
    });
    if (args === 'back') continue;
    if (args === undefined) return;
    await getPrompt(sidecar, results, prompt, args, target);
    return;
  }
}

async function getPrompt(
  sidecar: Sidecar,
  results: ResultDocuments,
  prompt: contract.PromptSummary,
  args: Record<string, string>,
  target: InsertTarget | undefined,
): Promise<void> {
  const { server, name } = prompt;
  let result: contract.GetPromptResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `${server}: prompt ${name}`, cancellable: true },
      (_progress, token) =>
        sidecar.command<contract.GetPromptResult>(contract.CMD_GET_PROMPT, { server, name, arguments: args } satisfies contract.GetPromptArgs, token),
    );
  } catch (error) {
    const e = error as { message?: string; data?: { kind?: string } };
    if (e?.data?.kind === 'refused') {
      vscode.window.setStatusBarMessage(`$(circle-slash) ${server}: ${name}: ${e.message}`, 5000);
      return;
    }
    if (e?.data?.kind === 'cancelled') return;
    void vscode.window.showErrorMessage(`${server}: prompt ${name} failed: ${e?.message ?? String(error)}`);
    return;
  }
  await results.show(server, name, promptMarkdown(server, name, args, result ?? {}));
  const text = promptText(result ?? {});
  if (!text) return;
  const count = result?.messages?.length ?? 0;
  const choice = await vscode.window.showInformationMessage(`${server}: ${name}: ${count} message${count === 1 ? '' : 's'}`, INSERT);
  if (choice === INSERT) await insertAtCursor(text, target);
}

interface InsertTarget {
  document: vscode.TextDocument;
  selection: vscode.Selection;
  viewColumn: vscode.ViewColumn | undefined;
}

/** The editor to insert into: one on a file or an untitled document, not a read-only view. */
function insertTarget(editor: vscode.TextEditor | undefined): InsertTarget | undefined {
  if (!editor || [RESOURCE_SCHEME, RESULT_SCHEME, 'output'].includes(editor.document.uri.scheme)) return undefined;
  return { document: editor.document, selection: editor.selection, viewColumn: editor.viewColumn };
}

async function insertAtCursor(text: string, saved: InsertTarget | undefined): Promise<void> {
  const target = saved && !saved.document.isClosed ? saved : insertTarget(vscode.window.activeTextEditor);
  if (!target) {
    void vscode.window.showWarningMessage('Open the file to insert the prompt into, then run Run Prompt from it.');
    return;
  }
  const editor = await vscode.window.showTextDocument(target.document, { viewColumn: target.viewColumn, selection: target.selection });
  const done = await editor.edit((b) => b.replace(editor.selection, text));
  if (!done) void vscode.window.showWarningMessage(`Could not insert into ${target.document.uri.toString()} (read-only?).`);
}
