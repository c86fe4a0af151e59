import assert from 'node:assert/strict';
import { test } from 'node:test';
import { currentValidation, inputBoxResult, inputBoxSpec } from '../../src/prompts/inputBoxModel';
import { quickPickResult, quickPickSpec } from '../../src/prompts/quickPickModel';
import { promptTitle } from '../../src/prompts/title';

test('inputBox: the contract example maps to the widget options', () => {
  const spec = inputBoxSpec({
    id: 'p7', server: 'travel', title: 'travel: Confirm your trip', prompt: 'Email', placeholder: 'name@example.com',
    value: 'me@', password: false, validationMessage: 'Not an email address', step: 2, totalSteps: 9,
    canGoBack: true, canSkip: false,
  });
  assert.deepEqual(spec, {
    title: 'travel: Confirm your trip', step: 2, totalSteps: 9, prompt: 'Email', placeholder: 'name@example.com',
    value: 'me@', password: false, validationMessage: 'Not an email address', ignoreFocusOut: true,
    showBack: true, showSkip: false,
  });
});

test('inputBox: minimal params get defaults (empty value, no buttons, no steps)', () => {
  const spec = inputBoxSpec({ id: 'p1', title: 'Name' });
  assert.equal(spec.value, '');
  assert.equal(spec.password, false);
  assert.equal(spec.step, undefined);
  assert.equal(spec.totalSteps, undefined);
  assert.equal(spec.showBack, false);
  assert.equal(spec.showSkip, false);
  assert.equal(spec.ignoreFocusOut, true);
});

test('inputBox: password, skip, and a step count without a step is dropped', () => {
  const spec = inputBoxSpec({ id: 'p', title: 't', password: true, canSkip: true, totalSteps: 3 });
  assert.equal(spec.password, true);
  assert.equal(spec.showSkip, true);
  assert.equal(spec.totalSteps, undefined);
  assert.equal(inputBoxSpec({ id: 'p', title: 't', step: 5, totalSteps: 3 }).totalSteps, undefined);
});

test('inputBox: the validation message shows until the text changes', () => {
  const spec = inputBoxSpec({ id: 'p', title: 't', value: 'me@', validationMessage: 'Not an email address' });
  assert.equal(currentValidation(spec, 'me@'), 'Not an email address');
  assert.equal(currentValidation(spec, 'me@x'), undefined);
  assert.equal(currentValidation(inputBoxSpec({ id: 'p', title: 't' }), ''), undefined);
});

test('inputBox: outcomes become contract results; back/skip only when offered', () => {
  const spec = inputBoxSpec({ id: 'p', title: 't', canGoBack: true, canSkip: true });
  assert.deepEqual(inputBoxResult(spec, { kind: 'accept', value: 'x' }), { value: 'x' });
  assert.deepEqual(inputBoxResult(spec, { kind: 'accept', value: '' }), { value: '' });
  assert.deepEqual(inputBoxResult(spec, { kind: 'back' }), { back: true });
  assert.deepEqual(inputBoxResult(spec, { kind: 'skip' }), { skip: true });
  assert.equal(inputBoxResult(spec, { kind: 'dismiss' }), null);
  const plain = inputBoxSpec({ id: 'p', title: 't' });
  assert.equal(inputBoxResult(plain, { kind: 'back' }), null);
  assert.equal(inputBoxResult(plain, { kind: 'skip' }), null);
});

test('titles name the server that asks', () => {
  assert.equal(promptTitle('travel: Cabin', 'travel'), 'travel: Cabin');
  assert.equal(promptTitle('Cabin', 'travel'), 'travel: Cabin');
  assert.equal(promptTitle('Restart which MCP server?', undefined), 'Restart which MCP server?');
  assert.equal(promptTitle('', 'travel'), 'travel');
});

test('quickPick: the contract example maps to the widget options', () => {
  const spec = quickPickSpec({
    id: 'p8', server: 'travel', title: 'travel: Cabin', placeholder: 'Pick one',
    items: [{ label: 'Economy', description: 'economy', detail: 'cheapest', picked: true }, { label: 'Business' }],
    canPickMany: false, step: 6, totalSteps: 9, canGoBack: true,
  });
  assert.equal(spec.title, 'travel: Cabin');
  assert.equal(spec.step, 6);
  assert.equal(spec.totalSteps, 9);
  assert.equal(spec.placeholder, 'Pick one');
  assert.equal(spec.canPickMany, false);
  assert.equal(spec.showBack, true);
  assert.deepEqual(spec.items, [
    { index: 0, label: 'Economy', description: 'economy', detail: 'cheapest', picked: true },
    { index: 1, label: 'Business', description: undefined, detail: undefined, picked: false },
  ]);
  assert.deepEqual(spec.initiallySelected, [0]);
});

test('quickPick: multi-select preselects every picked item; single keeps the first', () => {
  const items = [{ label: 'a', picked: true }, { label: 'b' }, { label: 'c', picked: true }];
  assert.deepEqual(quickPickSpec({ id: 'p', title: 't', items, canPickMany: true }).initiallySelected, [0, 2]);
  assert.deepEqual(quickPickSpec({ id: 'p', title: 't', items }).initiallySelected, [0]);
  assert.match(quickPickSpec({ id: 'p', title: 't', items, canPickMany: true }).placeholder ?? '', /Space/);
});

test('quickPick: selections become sorted, unique, in-range indexes', () => {
  const many = quickPickSpec({ id: 'p', title: 't', items: [{ label: 'a' }, { label: 'b' }, { label: 'c' }], canPickMany: true });
  assert.deepEqual(quickPickResult(many, { kind: 'accept', indexes: [2, 0, 2, 7, -1] }), { selected: [0, 2] });
  assert.deepEqual(quickPickResult(many, { kind: 'accept', indexes: [] }), { selected: [] });
  const one = quickPickSpec({ id: 'p', title: 't', items: [{ label: 'a' }, { label: 'b' }], canGoBack: true });
  assert.deepEqual(quickPickResult(one, { kind: 'accept', indexes: [1] }), { selected: [1] });
  assert.equal(quickPickResult(one, { kind: 'accept', indexes: [] }), null);
  assert.deepEqual(quickPickResult(one, { kind: 'back' }), { back: true });
  assert.equal(quickPickResult(one, { kind: 'dismiss' }), null);
  const noBack = quickPickSpec({ id: 'p', title: 't', items: [{ label: 'a' }] });
  assert.equal(quickPickResult(noBack, { kind: 'back' }), null);
});
