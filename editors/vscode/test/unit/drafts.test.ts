import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EditDraftResult } from '../../src/contract';
import { DraftBook, draftName, draftResult, emptyAnswerLine, extensionFor, problemRanges } from '../../src/drafts/draftModel';

test('draft buffers are named after the title and id, with the language\'s extension', () => {
  assert.equal(draftName({ id: 'p9', title: 'flights wants a model answer', language: 'markdown' }), 'flights wants a model answer [p9].md');
  assert.equal(draftName({ id: 'p3', title: 'a/b: c?', language: 'json' }), 'a b c [p3].json');
  assert.equal(draftName({ id: 'p4', title: '  ', language: 'weird' }), 'MCP draft [p4].txt');
  assert.equal(extensionFor('JSON'), '.json');
});

test('problems land on their 0-based line, clamped, from the first non-blank character', () => {
  const lines = ['# Request', '', '  model: x', 'last'];
  assert.deepEqual(problemRanges([{ line: 2, message: 'unknown header key' }], lines), [
    { line: 2, startCharacter: 2, endCharacter: 10, message: 'unknown header key' },
  ]);
  assert.deepEqual(problemRanges([{ line: 99, message: 'past the end' }], lines)[0].line, 3);
  assert.deepEqual(problemRanges([{ line: -4, message: 'negative' }], lines)[0].line, 0);
  assert.deepEqual(problemRanges([{ line: 1, message: 'blank line' }], lines)[0], {
    line: 1, startCharacter: 0, endCharacter: 1, message: 'blank line',
  });
  assert.deepEqual(problemRanges(undefined, lines), []);
});

test('draft results follow the contract', () => {
  assert.deepEqual(draftResult('accept', '# Request\nedited\n'), { action: 'accept', text: '# Request\nedited\n' });
  assert.deepEqual(draftResult('reject', 'ignored'), { action: 'reject' });
  assert.equal(draftResult('close', 'ignored'), null);
});

test('each draft is answered exactly once, by id or by its buffer', () => {
  const book = new DraftBook();
  const answers: EditDraftResult[] = [];
  book.add('p1', 'untitled:a.md', (r) => answers.push(r));
  book.add('p2', 'untitled:b.md', (r) => answers.push(r));
  assert.equal(book.isDraft('untitled:a.md'), true);
  assert.equal(book.idForKey('untitled:b.md'), 'p2');
  assert.equal(book.keyForId('p1'), 'untitled:a.md');
  assert.equal(book.settle('p1', 'accept', 'text'), true);
  assert.equal(book.settle('p1', 'reject'), false);
  assert.equal(book.isDraft('untitled:a.md'), false);
  assert.equal(book.settle('p2', 'close'), true);
  assert.deepEqual(answers, [{ action: 'accept', text: 'text' }, null]);
  assert.deepEqual(book.ids(), []);
});

test('an empty answer draft puts the cursor on the answer line, right under the heading', () => {
  // The sidecar's empty answer draft ("…### assistant\n\n") as the editor splits it.
  const empty = ['# Model answer for `demo`', '', 'Edit the answer below.', '', 'model: manual', 'stopReason: endTurn', '', '### assistant', '', ''];
  assert.equal(emptyAnswerLine(empty), 8);
  const answered = [...empty.slice(0, 8), '', 'echo: hi', '', ''];
  assert.equal(emptyAnswerLine(answered), undefined);
  assert.equal(emptyAnswerLine(['# Request', '### user', '', 'Which flight?']), undefined);
  assert.equal(emptyAnswerLine(['### assistant']), undefined);
});
