// Test-only language model for the e2e tests: `echo-1` answers "echo: <last user text>".

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

export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.lm.registerLanguageModelChatProvider('mcp-sidecar-test', {
      provideLanguageModelChatInformation: () => [MODEL],
      async provideLanguageModelChatResponse(_model, messages, _options, progress) {
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
