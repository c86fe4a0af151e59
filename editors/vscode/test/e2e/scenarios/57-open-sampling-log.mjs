// "MCP Sidecar: Open Sampling Log" (mcp-sidecar.openSamplingLog): the sidecar asks VS Code to show
// its audit log (window/showDocument), which opens as an editor, with the exchanges the sampling
// scenarios before this one recorded (alone, with E2E_ONLY, the log is empty).
import assert from 'node:assert/strict';
import { activeTabTitle, closeAllEditors, runCommand, waitActiveTab, waitEditorText } from '../lib/workbench.mjs';

export const name = 'Open Sampling Log: the audit log opens in an editor';

export async function run({ page, samplingAudit }) {
  await closeAllEditors(page);
  assert.doesNotMatch(await activeTabTitle(page), /sampling\.jsonl/);
  await runCommand(page, 'MCP Sidecar: Open Sampling Log');
  await waitActiveTab(page, /^sampling\.jsonl/);
  if (samplingAudit().length > 0) {
    // One exchange per line, each a JSON object naming its server.
    const text = await waitEditorText(page, /^\{"/);
    assert.match(text, /"server":/);
  }
  await closeAllEditors(page);
}
