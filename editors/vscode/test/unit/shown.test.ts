import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mayOpenExternal, shownName } from '../../src/contract';
import { resourceRows } from '../../src/resources/resourceModel';
import { promptRows } from '../../src/serverPrompts/promptModel';

test('only web addresses are opened outside the editor', () => {
  for (const uri of ['https://example.com/login?x=1', 'http://127.0.0.1:4711/callback']) {
    assert.equal(mayOpenExternal(uri), true, uri);
  }
  for (const uri of [
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'file:///home/me/.ssh/id_ed25519',
    'vscode://vscode.git/clone?url=https://evil.example/x',
    'vscode-insiders://x',
    'command:workbench.action.terminal.new',
    'data:text/html,<script>1</script>',
    'not a url',
    '',
  ]) {
    assert.equal(mayOpenExternal(uri), false, uri);
  }
});

test("a row's cleaned label is shown, its exact name kept", () => {
  const bidi = 'pay\u202efdp.exe';
  assert.equal(shownName({ name: bidi, label: 'pay⟨U+202E⟩fdp.exe' }), 'pay⟨U+202E⟩fdp.exe');
  assert.equal(shownName({ name: 'plain' }), 'plain');
  const [prompt] = promptRows([{ server: 's', name: bidi, label: 'pay⟨U+202E⟩fdp.exe' }]);
  assert.equal(prompt.label, 'pay⟨U+202E⟩fdp.exe');
  const [resource] = resourceRows([{ server: 's', uri: 'x://1', name: bidi, label: 'pay⟨U+202E⟩fdp.exe' }], []);
  assert.equal(resource.label, 'pay⟨U+202E⟩fdp.exe');
});

test("a server's cleaned label is kept with its state and shown in the status bar", async () => {
  const { ServerStates, statusBarView } = await import('../../src/servers/serverStates');
  const states = new ServerStates();
  const name = 'evil\u202e\u001b[2J';
  states.update({ name, label: 'evil⟨U+202E⟩', state: 'needsAuth' });
  const [kept] = states.all();
  assert.equal(kept.name, name, 'the exact name is the key');
  const view = statusBarView('running', states.all());
  assert.equal(view.text, '$(key) MCP: evil⟨U+202E⟩ needs sign-in');
  assert.ok(!view.tooltip.includes('\u202e'), view.tooltip);
  assert.deepEqual(view.command.args, [name], 'the exact name is sent back');
});
