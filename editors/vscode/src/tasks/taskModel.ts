// Tasks (a tool call a server answered with a task, docs/lsp-extensions.md): what the extension
// knows of each from `mcp-sidecar/taskStatus` and `mcp-sidecar.listTasks`, which of them a
// "Call Tool" is waiting for (its own progress shows those, and their result opens when the call
// returns), the rows of "Show Tasks", and a finished task as a document. Pure.

import type { CallToolResult, TaskInfo, TaskState } from '../contract';
import { resultMarkdown } from '../tools/resultMarkdown';

export const TASK_ICONS: Record<TaskState, string> = {
  working: '$(sync~spin)',
  input_required: '$(question)',
  completed: '$(pass-filled)',
  failed: '$(error)',
  cancelled: '$(circle-slash)',
  lost: '$(warning)',
};

export function isRunning(status: TaskState): boolean {
  return status === 'working' || status === 'input_required';
}

const keyOf = (server: string, taskId: string) => `${server}\n${taskId}`;
const callKey = (server: string, tool: string) => `${server}\n${tool}`;

/** A call of "Call Tool" in flight: the task it became, once the sidecar reports one. */
export interface CallWatch {
  readonly key: string;
  task?: string;
}

/**
 * How a call ended, for `TaskBook.callEnded`: answered (a result, an error or a cancellation the
 * person saw), or lost (the sidecar went away before answering).
 */
export type CallOutcome = 'answered' | 'lost';

/**
 * The tasks this window knows, and which of them the person waits for. A task whose first report
 * comes while a call of its server and tool is in flight belongs to that call: it ends there (the
 * call's progress and result). Any other task that ends (one that ended while no editor was
 * connected, an agent's, one whose call failed) is announced.
 */
export class TaskBook {
  private tasks = new Map<string, TaskInfo>();
  private calls: CallWatch[] = [];
  /** Tasks a call waits for, or waited for and got (or cancelled). */
  private awaited = new Set<string>();
  /** Ended tasks already announced. */
  private announced = new Set<string>();

  callStarted(server: string, tool: string): CallWatch {
    const call: CallWatch = { key: callKey(server, tool) };
    this.calls.push(call);
    return call;
  }

  callEnded(call: CallWatch, outcome: CallOutcome): void {
    this.calls = this.calls.filter((c) => c !== call);
    // A call the sidecar never answered delivered nothing: its task's end, when a sidecar reports
    // it, is announced.
    if (call.task && outcome === 'lost') this.awaited.delete(call.task);
  }

  /**
   * A `taskStatus`: kept, and whether to announce it: a task that ended while no call of this
   * window waits for it, once.
   */
  update(task: TaskInfo): { announce: boolean } {
    const key = keyOf(task.server, task.taskId);
    // A task that ended never runs again: a report older than its end changes nothing.
    const known = this.tasks.get(key);
    if (known && !isRunning(known.status) && isRunning(task.status)) return { announce: false };
    if (!known && !this.awaited.has(key)) {
      const call = this.calls.find((c) => c.key === callKey(task.server, task.tool) && !c.task);
      if (call) {
        call.task = key;
        this.awaited.add(key);
      }
    }
    this.tasks.set(key, task);
    if (isRunning(task.status) || this.awaited.has(key) || this.announced.has(key)) return { announce: false };
    this.announced.add(key);
    return { announce: true };
  }

  /** The person acts on this task (cancels it): its end is not announced. */
  expect(server: string, taskId: string): void {
    this.awaited.add(keyOf(server, taskId));
  }

  /** The sidecar's list (`listTasks`): what it knows replaces what was known here. */
  merge(list: TaskInfo[]): void {
    for (const t of list) {
      const known = this.tasks.get(keyOf(t.server, t.taskId));
      if (!(known && !isRunning(known.status) && isRunning(t.status))) this.tasks.set(keyOf(t.server, t.taskId), t);
    }
  }

  /**
   * The sidecar stopped: what it knew goes, and so does every wait (the calls got their answer
   * or died with it); a task that a later sidecar reports ending is announced.
   */
  clear(): void {
    this.tasks.clear();
    this.awaited.clear();
    for (const call of this.calls) call.task = undefined;
  }

  get(server: string, taskId: string): TaskInfo | undefined {
    return this.tasks.get(keyOf(server, taskId));
  }

  running(): TaskInfo[] {
    return [...this.tasks.values()].filter((t) => isRunning(t.status));
  }
}

/** An RFC 3339 time as the local time of day ("10:30:04"), or on another day with the date. */
export function shownTime(rfc3339: string, now = new Date()): string {
  const t = new Date(rfc3339);
  if (Number.isNaN(t.getTime())) return rfc3339;
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  const sameDay = t.toDateString() === now.toDateString();
  return sameDay ? time : `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${time}`;
}

export interface TaskRow {
  label: string;
  description: string;
  detail: string;
  task: TaskInfo;
}

/** The rows of "Show Tasks": running tasks first (as the sidecar lists them), then those that ended. */
export function taskRows(list: TaskInfo[], now = new Date()): TaskRow[] {
  const ordered = [...list.filter((t) => isRunning(t.status)), ...list.filter((t) => !isRunning(t.status))];
  return ordered.map((task) => ({
    label: `${TASK_ICONS[task.status] ?? ''} ${task.server}: ${task.tool}`,
    description: [task.status, task.statusMessage].filter(Boolean).join(' · '),
    detail: [
      `started ${shownTime(task.startedAt, now)}`,
      isRunning(task.status) ? `updated ${shownTime(task.updatedAt, now)}` : `ended ${shownTime(task.updatedAt, now)}`,
      `task ${task.taskId}`,
      task.error,
    ]
      .filter(Boolean)
      .join(' · '),
    task,
  }));
}

/** What an ended task came to, in one line: for the notification that announces it. */
export function endedMessage(task: TaskInfo): string {
  const what = `MCP task ${task.server}: ${task.tool}`;
  switch (task.status) {
    case 'completed':
      return `${what} completed${task.result?.isError ? ' (the tool reported an error)' : ''}.`;
    case 'cancelled':
      return `${what} was cancelled.`;
    case 'lost':
      return `${what} is lost: ${task.error ?? 'the server no longer knows it'}.`;
    case 'failed':
      return `${what} failed${task.error ? `: ${task.error}` : ''}.`;
    default:
      return `${what}: ${task.status}.`;
  }
}

/** A task as a Markdown document: its state and times, then its result as a tool result reads. */
export function taskMarkdown(task: TaskInfo, now = new Date()): string {
  const head = [
    `Task \`${task.taskId}\`: **${task.status}**${task.statusMessage ? ` (${task.statusMessage})` : ''}`,
    `Started ${shownTime(task.startedAt, now)}, ${isRunning(task.status) ? 'updated' : 'ended'} ${shownTime(task.updatedAt, now)}.`,
    ...(task.error ? ['', `Error: ${task.error}`] : []),
    '',
  ];
  const result: CallToolResult | undefined = task.result;
  const body = result
    ? resultMarkdown(task.server, task.tool, undefined, result)
    : [`# ${task.server}: ${task.tool}`, '', '_(no result)_', ''].join('\n');
  const [title, ...rest] = body.split('\n');
  return [title, '', ...head, ...rest.slice(1)].join('\n');
}
