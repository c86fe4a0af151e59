// The gateway in VS Code: its environment in every new integrated terminal (replaced at each
// sidecar start, cleared while the gateway is off or the sidecar is stopped), and "Copy Gateway
// Configuration" for agents.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { note } from '../log';
import type { PromptService } from '../prompts/promptService';
import type { Sidecar } from '../sidecar';
import { gatewaySnippets, terminalEnvDescription } from './snippets';

export class TerminalEnvironment {
  constructor(private collection: vscode.GlobalEnvironmentVariableCollection) {
    // The secret changes each time the sidecar starts: never carry it across windows' reloads.
    collection.persistent = false;
    collection.clear();
  }

  /** Puts the gateway's `env` into new terminals (replacing what was there), or clears it. */
  apply(info: contract.GatewayInfo | undefined): void {
    this.collection.clear();
    if (!info) {
      this.collection.description = undefined;
      note('gateway: no gateway; its variables are removed from new terminals');
      return;
    }
    for (const [name, value] of Object.entries(info.env)) this.collection.replace(name, value);
    this.collection.description = new vscode.MarkdownString(terminalEnvDescription(info));
    // The names only: the token is a secret.
    note(`gateway: new terminals get ${Object.keys(info.env).sort().join(', ')} (${info.url})`);
  }
}

export async function copyGatewayConfigurationCommand(sidecar: Sidecar, prompts: PromptService): Promise<void> {
  let info: contract.GatewayInfo;
  try {
    info = await sidecar.command<contract.GatewayInfo>(contract.CMD_GATEWAY_INFO);
  } catch (error) {
    void vscode.window.showWarningMessage(`The gateway is not available: ${(error as Error)?.message ?? String(error)}`);
    return;
  }
  const binary = sidecar.binaryPath ?? 'mcp-sidecar';
  const snippets = gatewaySnippets(info, binary);
  // Through the prompt queue, like the sidecar's own questions (one quick input at a time).
  const r = await prompts.quickPick({
    id: `gatewayconfig-${Date.now()}`,
    title: 'MCP Sidecar: Copy Gateway Configuration',
    placeholder: 'Which agent? (copied to the clipboard)',
    items: snippets.map((s) => ({ label: s.label, description: s.description, detail: s.secret ? info.url : s.text.split('\n').slice(0, 3).join(' ').slice(0, 160) })),
  });
  const snippet = r && 'selected' in r ? snippets[r.selected[0]] : undefined;
  if (!snippet) return;
  await vscode.env.clipboard.writeText(snippet.text);
  if (snippet.secret) {
    void vscode.window.showWarningMessage(
      `Copied the gateway's URL and headers. The secret in them changes each time the sidecar starts; agents that launch "mcp-sidecar gateway" need no secret.`,
    );
  } else {
    vscode.window.setStatusBarMessage(`$(copy) Copied: ${snippet.label}`, 5000);
  }
}
