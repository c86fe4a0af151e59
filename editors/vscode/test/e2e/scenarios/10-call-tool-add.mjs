// Call Tool on the demo server's `add`: the three-step flow (server, tool, arguments) with its
// step counter and Back, an invalid answer re-asked with a validation message, the result shown.
import assert from 'node:assert/strict';
import { answer, back, pick, runCommand, waitEditorText, waitFor, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'Call Tool: demo add, with Back and a re-asked invalid answer';

export async function run({ page, screenshot }) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  const servers = await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/3)');
  assert.deepEqual(servers.rows.map((r) => r.label), ['demo', 'legacy']);
  assert.equal(servers.hasBack, false);
  await pick(page, 'demo');

  const tools = await waitQuickInput(page, 'MCP Sidecar: Call Tool (demo) (2/3)');
  assert.ok(tools.hasBack, 'step 2 has a Back button');
  assert.ok(tools.rows.some((r) => r.label === 'add'), 'add is offered');
  await screenshot('quick-pick-step-2-of-3-with-back');

  // Back to the server step, then forward again.
  await back(page);
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/3)');
  await pick(page, 'demo');
  await waitQuickInput(page, '(2/3)');
  await pick(page, 'add');

  const args = await waitQuickInput(page, 'MCP Sidecar: Call Tool (demo: add) (3/3)');
  assert.equal(args.value, '{"a": 0, "b": 0}', 'the arguments are prefilled from the schema');
  await answer(page, '{"a": 2}');
  const reasked = await waitFor('the validation message', async () => {
    const q = await waitQuickInput(page, '(3/3)');
    return q.message.includes('Missing required argument: b') ? q : null;
  });
  assert.equal(reasked.value, '{"a": 2}', 'the typed text is kept');
  await answer(page, '{"a": 2, "b": 3}');

  const text = await waitEditorText(page, /2 \+ 3 = 5/);
  assert.match(text, /# demo: add/);
  assert.match(text, /"sum": 5/);
}
