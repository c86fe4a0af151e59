import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXCHANGE_GAP_MS, isFirstOfExchange, shouldAnnounce, type PromptFacts } from '../../src/prompts/attention';

const base: PromptFacts = { server: 'travel', reask: false, now: 100_000, windowFocused: true };

test('announce only a server\'s first prompt while the person types (whenTyping)', () => {
  assert.equal(shouldAnnounce('whenTyping', { ...base, lastTypedAt: 99_000 }), true);
  assert.equal(shouldAnnounce('whenTyping', { ...base, lastTypedAt: 10_000 }), false);
  assert.equal(shouldAnnounce('whenTyping', base), false);
  assert.equal(shouldAnnounce('whenTyping', { ...base, windowFocused: false }), true);
});

test('the sidecar\'s own questions, later steps and re-asks open at once', () => {
  const typing = { ...base, lastTypedAt: 99_500 };
  assert.equal(shouldAnnounce('always', { ...typing, server: undefined }), false);
  assert.equal(shouldAnnounce('always', { ...typing, step: 2 }), false);
  assert.equal(shouldAnnounce('always', { ...typing, reask: true }), false);
  assert.equal(shouldAnnounce('always', { ...typing, lastAnsweredAt: 99_000 }), false);
  assert.equal(shouldAnnounce('always', { ...base, lastAnsweredAt: 100_000 - EXCHANGE_GAP_MS - 1 }), true);
  assert.equal(shouldAnnounce('off', { ...typing, windowFocused: false }), false);
});

test('answering a prompt after typing (e.g. the Call Tool picks) is not "typing elsewhere"', () => {
  assert.equal(shouldAnnounce('whenTyping', { ...base, lastTypedAt: 99_000, lastAnyAnsweredAt: 99_500 }), false);
  assert.equal(shouldAnnounce('whenTyping', { ...base, lastTypedAt: 99_500, lastAnyAnsweredAt: 99_000 }), true);
  assert.equal(shouldAnnounce('always', { ...base, lastAnyAnsweredAt: 99_500 }), true);
});

test('first of an exchange', () => {
  assert.equal(isFirstOfExchange({ ...base, step: 1 }), true);
  assert.equal(isFirstOfExchange({ ...base, step: 3 }), false);
});
