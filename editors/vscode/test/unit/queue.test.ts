import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PromptQueue, type PromptHandle } from '../../src/prompts/queue';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test('prompts are shown one at a time, in order', async () => {
  const q = new PromptQueue();
  const shown: string[] = [];
  const first = deferred<string>();
  const a = q.run('a', async () => { shown.push('a'); return first.promise; }, 'dismissed');
  const b = q.run('b', async () => { shown.push('b'); return 'B'; }, 'dismissed');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(shown, ['a']);
  assert.equal(q.activeId, 'a');
  first.resolve('A');
  assert.equal(await a, 'A');
  assert.equal(await b, 'B');
  assert.deepEqual(shown, ['a', 'b']);
  assert.equal(q.size, 0);
});

test('cancelling a waiting prompt answers it as dismissed without showing it', async () => {
  const q = new PromptQueue();
  const first = deferred<string>();
  let bShown = false;
  const a = q.run('a', () => first.promise, null);
  const b = q.run('b', async () => { bShown = true; return 'B'; }, 'dismissed');
  assert.equal(q.cancel('b'), true);
  assert.equal(await b, 'dismissed');
  first.resolve('A');
  await a;
  assert.equal(bShown, false);
});

test('cancelling the prompt on screen fires its hook (the widget hides and answers)', async () => {
  const q = new PromptQueue();
  let handle!: PromptHandle;
  const a = q.run('a', (h) => {
    handle = h;
    return new Promise<string | null>((resolve) => h.onCancel(() => resolve(null)));
  }, null);
  await new Promise((r) => setImmediate(r));
  assert.equal(q.cancel('a'), true);
  assert.equal(await a, null);
  assert.equal(handle.cancelled, true);
  assert.equal(q.cancel('a'), false);
  assert.equal(q.cancel('unknown'), false);
});

test('cancelAll drops everything; a failing prompt does not block the next', async () => {
  const q = new PromptQueue();
  const failing = q.run('x', async () => { throw new Error('boom'); }, null);
  const next = q.run('y', async () => 'Y', null);
  await assert.rejects(failing, /boom/);
  assert.equal(await next, 'Y');
  const hang = q.run<string | null>('h', (h) => new Promise((resolve) => h.onCancel(() => resolve('closed'))), null);
  const waiting = q.run('w', async () => 'W', 'dropped');
  q.cancelAll();
  assert.equal(await hang, 'closed');
  assert.equal(await waiting, 'dropped');
});
