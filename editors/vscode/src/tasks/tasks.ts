// Tasks in the window: `mcp-sidecar/taskStatus` kept (TaskBook), a status bar item counting the
// running ones, a notification with "Show Result" when a task ends that no "Call Tool" waits for
// (one that ended while the sidecar restarted, an agent's), and "MCP Sidecar: Show Tasks": the
// running and ended tasks in a quick pick, with Cancel for a running one (mcp-sidecar.cancelTask)
// and Show Result for one that ended (a read-only document).

import * as vscode from 'vscode';
import * as contract from '../contract';
import { note } from '../log';
import type { SidecarState } from '../servers/serverStates';
import type { Sidecar } from '../sidecar';
import type { ResultDocuments } from '../tools/resultDocuments';
import { endedMessage, isRunning, TaskBook, taskMarkdown, taskRows } from './taskModel';

const SHOW_RESULT = 'Show Result';
const SHOW_TASKS = 'Show Tasks';

export class Tasks implements vscode.Disposable {
  readonly book = new TaskBook();
  private item = vscode.window.createStatusBarItem('mcpSidecar.tasks', vscode.StatusBarAlignment.Left, 9);
  private lastState: SidecarState | undefined;

  constructor(
    private sidecar: Sidecar,
    private results: ResultDocuments,
  ) {
    this.item.name = 'MCP Sidecar Tasks';
    this.item.command = 'mcpSidecar.showTasks';
    this.render();
  }

  /** `mcp-sidecar/taskStatus`. */
  status(task: contract.TaskInfo): void {
    const { announce } = this.book.update(task);
    note(`task ${task.server} ${task.tool} ${task.taskId}: ${task.status}${task.statusMessage ? ` (${task.statusMessage})` : ''}`);
    this.render();
    if (announce) void this.announce(task);
  }

  /** The sidecar runs (again): the tasks it still polls count in the status bar. */
  async sidecarState(state: SidecarState): Promise<void> {
    if (state === this.lastState) return;
    this.lastState = state;
    if (state !== 'running') {
      this.book.clear();
      this.render();
      return;
    }
    try {
      this.book.merge(await this.sidecar.command<contract.TaskInfo[]>(contract.CMD_LIST_TASKS));
      this.render();
    } catch (error) {
      note(`listTasks failed: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  private render(): void {
    const running = this.book.running();
    if (running.length === 0) {
      this.item.hide();
      return;
    }
    this.item.text = `$(sync~spin) ${running.length} MCP task${running.length === 1 ? '' : 's'}`;
    this.item.tooltip = running
      .map((t) => `${t.server}: ${t.tool} — ${t.status}${t.statusMessage ? ` (${t.statusMessage})` : ''}`)
      .join('\n');
    this.item.show();
  }

  private async announce(task: contract.TaskInfo): Promise<void> {
    const message = endedMessage(task);
    const show = task.status === 'completed' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    const choice = await show(message, SHOW_RESULT, SHOW_TASKS);
    if (choice === SHOW_RESULT) await this.showResult(this.book.get(task.server, task.taskId) ?? task);
    else if (choice === SHOW_TASKS) await this.showTasksCommand();
  }

  /** A task as a read-only document: its state, its result. */
  async showResult(task: contract.TaskInfo): Promise<void> {
    await this.results.show(task.server, `${task.tool}-task`, taskMarkdown(task));
  }

  /** "MCP Sidecar: Show Tasks". */
  async showTasksCommand(): Promise<void> {
    const list = await this.sidecar.command<contract.TaskInfo[]>(contract.CMD_LIST_TASKS);
    this.book.merge(list ?? []);
    this.render();
    if (!list?.length) {
      void vscode.window.showInformationMessage('No MCP tasks: a tool call a server runs as a task shows here.');
      return;
    }
    const picked = await vscode.window.showQuickPick(taskRows(list), {
      title: 'MCP Tasks',
      placeHolder: 'Pick a task: cancel a running one, see the result of one that ended',
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (!picked) return;
    const task = picked.task;
    const actions = isRunning(task.status)
      ? [{ label: '$(close) Cancel Task', id: 'cancel' }]
      : [{ label: '$(go-to-file) Show Result', id: 'result' }];
    const action = await vscode.window.showQuickPick(actions, {
      title: `${task.server}: ${task.tool} (${task.status})`,
      placeHolder: task.statusMessage ?? task.error ?? `task ${task.taskId}`,
    });
    if (action?.id === 'cancel') await this.cancel(task);
    else if (action?.id === 'result') await this.showResult(task);
  }

  private async cancel(task: contract.TaskInfo): Promise<void> {
    // The person ends it: its end is not announced again.
    this.book.expect(task.server, task.taskId);
    try {
      const now = await this.sidecar.command<contract.TaskInfo>(contract.CMD_CANCEL_TASK, {
        server: task.server,
        taskId: task.taskId,
      } satisfies contract.TaskArgs);
      if (now) this.status(now);
      vscode.window.setStatusBarMessage(`$(circle-slash) Cancelling the task ${task.server}: ${task.tool}`, 3000);
    } catch (error) {
      void vscode.window.showErrorMessage(`Cancelling the task ${task.server}: ${task.tool} failed: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
