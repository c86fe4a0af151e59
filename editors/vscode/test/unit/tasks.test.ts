import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TaskInfo } from '../../src/contract';
import { endedMessage, shownTime, TaskBook, taskMarkdown, taskRows } from '../../src/tasks/taskModel';

const task = (over: Partial<TaskInfo> = {}): TaskInfo => ({
  server: 'reports',
  taskId: 't1',
  tool: 'slow_report',
  status: 'working',
  startedAt: '2026-12-05T10:30:00Z',
  updatedAt: '2026-12-05T10:30:02Z',
  ...over,
});

test("a task a call waits for ends in that call: not announced; one nobody waits for is, once", () => {
  const book = new TaskBook();
  const call = book.callStarted('reports', 'slow_report');
  assert.deepEqual(book.update(task()), { announce: false });
  assert.equal(book.running().length, 1);
  assert.deepEqual(book.update(task({ status: 'completed', result: { content: [] } })), { announce: false });
  book.callEnded(call, 'answered');
  assert.equal(book.running().length, 0);

  // A task of another tool, or one first heard of with no call in flight: announced when it ends.
  assert.deepEqual(book.update(task({ taskId: 't2', status: 'completed' })), { announce: true });
  assert.deepEqual(book.update(task({ taskId: 't2', status: 'completed' })), { announce: false }, 'once');
  const other = book.callStarted('reports', 'other_tool');
  book.update(task({ taskId: 't3' }));
  assert.deepEqual(book.update(task({ taskId: 't3', status: 'failed', error: 'boom' })), { announce: true });
  book.callEnded(other, 'answered');
});

test('the task of a call the sidecar never answered (it went away) is announced when it ends', () => {
  const book = new TaskBook();
  const call = book.callStarted('reports', 'slow_report');
  book.update(task());
  book.callEnded(call, 'lost');
  assert.deepEqual(book.update(task({ status: 'completed' })), { announce: true });
});

test('a task the person cancels from the list is not announced; the list merges in', () => {
  const book = new TaskBook();
  book.merge([task(), task({ taskId: 't9', status: 'completed' })]);
  assert.deepEqual(book.running().map((t) => t.taskId), ['t1']);
  book.expect('reports', 't1');
  assert.deepEqual(book.update(task({ status: 'cancelled' })), { announce: false });
  // Known from the list, its end reported afterwards: announced (nobody waited for it).
  assert.deepEqual(book.update(task({ taskId: 't9', status: 'completed' })), { announce: true });
});

test('rows: running first, with status, message and times; ended tasks say when and why', () => {
  const now = new Date('2026-12-05T12:00:00Z');
  const rows = taskRows([task({ taskId: 'e', status: 'lost', error: 'the server no longer knows it' }), task({ statusMessage: 'halfway' })], now);
  assert.equal(rows[0].task.taskId, 't1');
  assert.equal(rows[0].label, '$(sync~spin) reports: slow_report');
  assert.equal(rows[0].description, 'working · halfway');
  assert.match(rows[0].detail, new RegExp(`^started ${shownTime('2026-12-05T10:30:00Z', now)} · updated .* · task t1$`));
  assert.match(rows[1].detail, /ended .* · task e · the server no longer knows it$/);
  assert.equal(rows[1].label, '$(warning) reports: slow_report');
});

test('times: the time of day today, with the date on another day', () => {
  const now = new Date(2026, 11, 5, 12, 0, 0);
  assert.equal(shownTime(new Date(2026, 11, 5, 9, 5, 7).toISOString(), now), '09:05:07');
  assert.equal(shownTime(new Date(2026, 11, 4, 9, 5, 7).toISOString(), now), '2026-12-04 09:05:07');
  assert.equal(shownTime('not a time', now), 'not a time');
});

test('an ended task as a message and as a document with its result', () => {
  assert.equal(endedMessage(task({ status: 'completed' })), 'MCP task reports: slow_report completed.');
  assert.equal(endedMessage(task({ status: 'failed', error: 'disk full' })), 'MCP task reports: slow_report failed: disk full.');
  assert.match(endedMessage(task({ status: 'lost' })), /is lost: the server no longer knows it/);
  const md = taskMarkdown(task({ status: 'completed', result: { content: [{ type: 'text', text: 'done' }], structuredContent: { pages: 3 } } }));
  assert.match(md, /^# reports: slow_report\n\nTask `t1`: \*\*completed\*\*\n/);
  assert.match(md, /## Result\n\ndone\n/);
  assert.match(md, /"pages": 3/);
  assert.match(taskMarkdown(task({ status: 'failed', error: 'disk full' })), /Error: disk full[\s\S]*_\(no result\)_/);
});

test('a report older than a task\'s end (a cancel\'s answer, a list) does not bring it back', () => {
  const book = new TaskBook();
  book.expect('reports', 't1');
  book.update(task({ status: 'cancelled' }));
  assert.deepEqual(book.update(task({ status: 'working' })), { announce: false });
  book.merge([task({ status: 'working' })]);
  assert.equal(book.get('reports', 't1')?.status, 'cancelled');
  assert.equal(book.running().length, 0);
});

test('after the sidecar stopped, a task a call waited for is announced when a new sidecar reports its end', () => {
  const book = new TaskBook();
  const call = book.callStarted('reports', 'slow_report');
  book.update(task());
  book.clear();
  // The dying sidecar answered the call (cancelled): the person did not see the task end.
  book.callEnded(call, 'answered');
  assert.equal(book.running().length, 0);
  assert.deepEqual(book.update(task({ status: 'completed' })), { announce: true });
});
