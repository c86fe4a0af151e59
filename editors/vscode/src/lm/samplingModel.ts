// mcp-sidecar/languageModel without VS Code: which model answers (the chosen `model`, else the
// server's hints), the request as chat turns, and the CreateMessageResult. Pure.

import type { ContentBlock, CreateMessageResult, LanguageModelParams } from '../contract';

export interface ModelInfo {
  id: string;
  name: string;
  family: string;
  vendor: string;
}

/**
 * Index of the model to use, or -1 when there is none. An explicit `model` wins when a model has
 * that id (or that name / family); else the first hint (in the server's order) that is a
 * case-insensitive substring of a model's id, name or family; else the first model.
 */
export function chooseModel(models: ModelInfo[], wanted?: string, hints?: { name?: string }[]): number {
  if (models.length === 0) return -1;
  const lc = (s: string | undefined) => (s ?? '').toLowerCase();
  if (wanted) {
    const w = lc(wanted);
    const byId = models.findIndex((m) => lc(m.id) === w);
    if (byId >= 0) return byId;
    const byName = models.findIndex((m) => lc(m.name) === w || lc(m.family) === w || `${lc(m.vendor)}/${lc(m.id)}` === w);
    if (byName >= 0) return byName;
  }
  for (const hint of hints ?? []) {
    const h = lc(hint?.name).trim();
    if (!h) continue;
    const i = models.findIndex((m) => lc(m.id).includes(h) || lc(m.name).includes(h) || lc(m.family).includes(h));
    if (i >= 0) return i;
  }
  return 0;
}

export interface ChatTurn {
  role: 'user' | 'assistant';
  text: string;
}

/** One content block as text the model can read (non-text blocks become short references). */
export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'image':
    case 'audio':
      return `[${block.type}${block.mimeType ? ` ${block.mimeType}` : ''} omitted: this editor's models take text only]`;
    case 'resource':
      return block.resource?.text ?? `[resource ${block.resource?.uri ?? ''}]`;
    case 'resource_link':
      return `[resource ${block.uri ?? block.name ?? ''}]`;
    default:
      return `[${block.type} content omitted]`;
  }
}

/** The request as alternating chat turns; the system prompt goes first, as a user turn. */
export function toChatTurns(p: LanguageModelParams): ChatTurn[] {
  const turns: ChatTurn[] = [];
  if (p.systemPrompt && p.systemPrompt.trim()) {
    turns.push({ role: 'user', text: `System instructions:\n${p.systemPrompt}` });
  }
  for (const m of p.messages ?? []) {
    const blocks = Array.isArray(m.content) ? m.content : m.content ? [m.content] : [];
    turns.push({ role: m.role === 'assistant' ? 'assistant' : 'user', text: blocks.map(blockText).join('\n') });
  }
  return turns;
}

/** Options passed to the provider (how they are honoured is up to each provider). */
export function modelOptions(p: LanguageModelParams): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (typeof p.maxTokens === 'number') o.max_tokens = p.maxTokens;
  if (typeof p.temperature === 'number') o.temperature = p.temperature;
  if (Array.isArray(p.stopSequences) && p.stopSequences.length > 0) o.stop = p.stopSequences;
  return o;
}

/** Cuts the text at the first stop sequence (providers may ignore `stop`). */
export function applyStopSequences(text: string, stops: string[] | undefined): { text: string; stopped: boolean } {
  let cut = -1;
  for (const s of stops ?? []) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i >= 0 && (cut < 0 || i < cut)) cut = i;
  }
  return cut < 0 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}

export function createMessageResult(text: string, model: string, stopped: boolean): CreateMessageResult {
  return {
    role: 'assistant',
    content: { type: 'text', text },
    model,
    stopReason: stopped ? 'stopSequence' : 'endTurn',
  };
}
