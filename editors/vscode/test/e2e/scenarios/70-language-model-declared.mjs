// With a language model in the editor (the test provider, test/lm-provider), the extension
// declares capabilities.experimental.mcpSidecar.languageModel when it starts the sidecar.
// (The sampling round trip through it: 75-sampling-editor-model.mjs.)
import { waitFor } from '../lib/workbench.mjs';

export const name = 'A language model in the editor is declared to the sidecar (languageModel: true)';

export async function run({ outputLog }) {
  await waitFor('the output channel to record languageModel: true', async () => {
    const lines = outputLog().split('\n').filter((l) => l.includes('[extension]') && l.includes('starting '));
    return lines.length > 0 && /languageModel: true/.test(lines[lines.length - 1]);
  }, { timeout: 30000, interval: 500 });
}
