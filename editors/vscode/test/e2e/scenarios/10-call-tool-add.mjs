// Call Tool on the demo server's `add`: the extension's two picks (server, tool) with their step
// counter and Back, then the sidecar's own questions for the missing arguments (inputBox steps, an
// invalid answer re-asked with its validation message, the review), and the result shown.
import assert from 'node:assert/strict';
import { answer, back, pick, quickInput, runCommand, waitEditorText, waitFor, waitQuickInput } from '../lib/workbench.mjs';

export const name = 'Call Tool: demo add, with Back, argument prompts, a re-asked invalid answer';

export async function run({ page, screenshot }) {
  await runCommand(page, 'MCP Sidecar: Call Tool');
  const servers = await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/2)');
  assert.deepEqual(servers.rows.map((r) => r.label), ['demo', 'legacy']);
  assert.equal(servers.hasBack, false);
  await pick(page, 'demo');

  const tools = await waitQuickInput(page, 'MCP Sidecar: Call Tool (demo) (2/2)');
  assert.ok(tools.hasBack, 'step 2 has a Back button');
  assert.ok(tools.rows.some((r) => r.label === 'add'), 'add is offered');
  await screenshot('quick-pick-step-2-of-2-with-back');

  // Back to the server step, then forward again.
  await back(page);
  await waitQuickInput(page, 'MCP Sidecar: Call Tool (1/2)');
  await pick(page, 'demo');
  await waitQuickInput(page, '(2/2)');
  await pick(page, 'add');

  // The sidecar asks for the arguments: one input box per property, then a review.
  const a = await waitQuickInput(page, 'demo: arguments for add (1/2)');
  assert.match(a.message, /^a — First addend/);
  await answer(page, 'two');
  await waitFor('"two" re-asked with a message', async () => {
    const q = await quickInput(page);
    return q?.title.includes('(1/2)') && q.value === 'two' && q.message !== a.message ? q : null;
  });
  await answer(page, '2');
  const b = await waitQuickInput(page, 'demo: arguments for add (2/2)');
  assert.ok(b.hasBack);
  await answer(page, '3');
  const review = await waitQuickInput(page, /^demo: arguments for add$/);
  // The person's own call: their choices, no Decline telling demo no.
  assert.deepEqual(review.rows.map((r) => r.label), ['Call add', 'Change a', 'Change b', 'Cancel']);
  await pick(page, 'Call add');

  const text = await waitEditorText(page, /2 \+ 3 = 5/);
  assert.match(text, /# demo: add/);
}
