// Test-only language model for the e2e tests: `echo-1` answers "echo: <last user text>". When
// MCP_SIDECAR_TEST_LM_LOG names a file, each request it gets is appended there as one JSON line
// ({model, messages: [{role, text}], modelOptions}), so a test can check what reached the model.

import { appendFileSync } from 'node:fs';
import * as vscode from 'vscode';

const MODEL: vscode.LanguageModelChatInformation = {
  id: 'echo-1',
  name: 'Echo (test)',
  family: 'echo',
  version: '1',
  maxInputTokens: 100000,
  maxOutputTokens: 4000,
  capabilities: {},
};

function textOf(message: vscode.LanguageModelChatRequestMessage): string {
  return message.content
    .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : ''))
    .join('');
}

function roleName(role: vscode.LanguageModelChatMessageRole): string {
  return role === vscode.LanguageModelChatMessageRole.User
    ? 'user'
    : role === vscode.LanguageModelChatMessageRole.Assistant
      ? 'assistant'
      : `role ${String(role)}`;
}

function record(entry: unknown): void {
  const file = process.env.MCP_SIDECAR_TEST_LM_LOG;
  if (!file) return;
  try {
    appendFileSync(file, `${JSON.stringify(entry)}\n`);
  } catch {
    // a test without the log
  }
}

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('mcp-sidecar-test', {
      provideLanguageModelChatInformation: () => [MODEL],
      async provideLanguageModelChatResponse(model, messages, options, progress) {
        record({
          model: model.id,
          messages: messages.map((m) => ({ role: roleName(m.role), text: textOf(m) })),
          modelOptions: options.modelOptions ?? {},
        });
        const lastUser = [...messages].reverse().find((m) => m.role === vscode.LanguageModelChatMessageRole.User);
        progress.report(new vscode.LanguageModelTextPart(`echo: ${lastUser ? textOf(lastUser) : ''}`));
      },
      async provideTokenCount(_model, text) {
        const s = typeof text === 'string' ? text : textOf(text);
        return Math.ceil(s.length / 4);
      },
    }),
  );
}

export function deactivate(): void {}
