// Test-only: when code-server runs with MCP_SIDECAR_VSCODE_E2E set to a file path, the command
// `mcpSidecar.e2e.request` (bound to a key by the e2e profile, never contributed to the UI) reads
// one contract request from that file, `{"method": "inputBox" | "quickPick" | "editDraft",
// "params": {...}, "cancelAfterMs"?: n}`, and feeds it to the same handler the sidecar's request
// reaches (cancelAfterMs: as mcp-sidecar/cancelPrompt would). The answer is written to the output
// channel as `e2e <id> -> <json>`. This covers primitives the sidecar does not send yet.
// `{"method": "updateSetting", "params": {"id", "key", "value"}}` writes a User setting (null
// removes it) through VS Code, as the Settings editor would, and answers `"updated"`.

import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import type { EditDraftParams, InputBoxParams, QuickPickParams } from './contract';
import type { DraftService } from './drafts/drafts';
import { note } from './log';
import type { PromptService } from './prompts/promptService';

interface E2eRequest {
  method: 'inputBox' | 'quickPick' | 'editDraft' | 'updateSetting';
  params: { id: string; key?: string; value?: unknown };
  cancelAfterMs?: number;
}

async function updateUserSetting(key: string, value: unknown): Promise<string> {
  await vscode.workspace.getConfiguration().update(key, value ?? undefined, vscode.ConfigurationTarget.Global);
  return 'updated';
}

export function registerE2eHooks(prompts: PromptService, drafts: DraftService): vscode.Disposable[] {
  const file = process.env.MCP_SIDECAR_VSCODE_E2E;
  if (!file) return [];
  return [
    vscode.commands.registerCommand('mcpSidecar.e2e.request', async () => {
      const request = JSON.parse(readFileSync(file, 'utf8')) as E2eRequest;
      const id = request.params.id;
      const answer =
        request.method === 'updateSetting'
          ? updateUserSetting(String(request.params.key), request.params.value)
          : request.method === 'inputBox'
            ? prompts.inputBox(request.params as InputBoxParams)
            : request.method === 'quickPick'
              ? prompts.quickPick(request.params as QuickPickParams)
              : drafts.editDraft(request.params as EditDraftParams);
      if (request.cancelAfterMs !== undefined) {
        setTimeout(() => prompts.cancel(id) || drafts.cancel(id), request.cancelAfterMs);
      }
      note(`e2e ${id} -> ${JSON.stringify(await answer)}`);
    }),
  ];
}
