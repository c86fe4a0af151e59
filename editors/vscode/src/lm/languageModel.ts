// mcp-sidecar/languageModel on VS Code's language-model API (vscode.lm), and whether this editor
// has a model at all (then, and only then, it declares `languageModel`).

import * as vscode from 'vscode';
import type { CreateMessageResult, LanguageModelParams } from '../contract';
import { applyStopSequences, chooseModel, createMessageResult, modelOptions, toChatTurns } from './samplingModel';

export async function hasLanguageModel(): Promise<boolean> {
  try {
    return (await vscode.lm.selectChatModels()).length > 0;
  } catch {
    return false;
  }
}

export async function answerWithLanguageModel(
  params: LanguageModelParams,
  token: vscode.CancellationToken,
): Promise<CreateMessageResult> {
  const models = await vscode.lm.selectChatModels();
  const index = chooseModel(models, params.model, params.modelPreferences?.hints);
  if (index < 0) throw new Error('no language model is available in this editor');
  const model = models[index];
  const messages = toChatTurns(params).map((t) =>
    t.role === 'assistant'
      ? vscode.LanguageModelChatMessage.Assistant(t.text)
      : vscode.LanguageModelChatMessage.User(t.text),
  );
  const response = await model.sendRequest(
    messages,
    {
      justification: 'An MCP server asked for a model answer (sampling), and you approved the request.',
      modelOptions: modelOptions(params),
    },
    token,
  );
  let text = '';
  for await (const chunk of response.text) text += chunk;
  const cut = applyStopSequences(text, params.stopSequences);
  return createMessageResult(cut.text, model.id, cut.stopped);
}
