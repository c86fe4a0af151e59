import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyStopSequences, chooseModel, createMessageResult, modelOptions, toChatTurns, type ModelInfo } from '../../src/lm/samplingModel';

const models: ModelInfo[] = [
  { id: 'gpt-4o-mini', name: 'GPT-4o mini', family: 'gpt-4o-mini', vendor: 'copilot' },
  { id: 'claude-sonnet-4', name: 'Claude Sonnet 4', family: 'claude-sonnet', vendor: 'copilot' },
  { id: 'echo-1', name: 'Echo', family: 'echo', vendor: 'test' },
];

test('an explicit model id wins, then hints in order, then the first model', () => {
  assert.equal(chooseModel(models, 'echo-1'), 2);
  assert.equal(chooseModel(models, 'Claude Sonnet 4'), 1);
  assert.equal(chooseModel(models, undefined, [{ name: 'claude' }, { name: 'gpt' }]), 1);
  assert.equal(chooseModel(models, undefined, [{ name: 'nomatch' }, { name: 'ECHO' }]), 2);
  assert.equal(chooseModel(models, 'missing', [{ name: 'sonnet' }]), 1);
  assert.equal(chooseModel(models, undefined, [{}, { name: '' }]), 0);
  assert.equal(chooseModel(models), 0);
  assert.equal(chooseModel([], 'echo-1'), -1);
});

test('sampling params become chat turns; non-text blocks become references', () => {
  const turns = toChatTurns({
    systemPrompt: 'Be brief.',
    messages: [
      { role: 'user', content: { type: 'text', text: 'Which flight?' } },
      { role: 'assistant', content: [{ type: 'text', text: 'Let me see.' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }] },
    ],
    maxTokens: 400,
  });
  assert.deepEqual(turns[0], { role: 'user', text: 'System instructions:\nBe brief.' });
  assert.deepEqual(turns[1], { role: 'user', text: 'Which flight?' });
  assert.equal(turns[2].role, 'assistant');
  assert.match(turns[2].text, /^Let me see\.\n\[image image\/png omitted/);
});

test('options, stop sequences and the result shape', () => {
  assert.deepEqual(modelOptions({ messages: [], maxTokens: 400, temperature: 0.2, stopSequences: ['END'] }), {
    max_tokens: 400, temperature: 0.2, stop: ['END'],
  });
  assert.deepEqual(modelOptions({ messages: [] }), {});
  assert.deepEqual(applyStopSequences('abc END def STOP', ['STOP', 'END']), { text: 'abc ', stopped: true });
  assert.deepEqual(applyStopSequences('abc', undefined), { text: 'abc', stopped: false });
  assert.deepEqual(createMessageResult('hi', 'echo-1', false), {
    role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'echo-1', stopReason: 'endTurn',
  });
  assert.equal(createMessageResult('hi', 'm', true).stopReason, 'stopSequence');
});
