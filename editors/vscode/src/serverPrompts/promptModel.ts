// A server's prompt (prompts/get) shown as Markdown, and the text "Insert at Cursor" inserts.
// Pure.

import { shownName, type ContentBlock, type GetPromptResult, type PromptSummary } from '../contract';
import { blockMarkdown } from '../tools/resultMarkdown';

/** The quick pick's rows: title (else name), the server, the description and the arguments. */
export function promptRows(prompts: PromptSummary[]): { label: string; description: string; detail?: string }[] {
  return prompts.map((p) => {
    const args = (p.arguments ?? []).map((a) => (a.required ? a.name : `${a.name}?`)).join(', ');
    const label = p.title && p.title !== p.name ? `${shownName(p)} — ${p.title}` : shownName(p);
    return { label, description: args ? `${p.server} · (${args})` : p.server, detail: p.description };
  });
}

function contentOf(content: ContentBlock | ContentBlock[] | undefined): ContentBlock[] {
  if (Array.isArray(content)) return content;
  return content ? [content] : [];
}

/** The messages under role headers: text as it is, images and resources described. */
export function promptMarkdown(server: string, name: string, args: Record<string, string>, result: GetPromptResult): string {
  const lines = [`# ${server}: ${name}`, ''];
  const given = Object.entries(args);
  if (given.length > 0) lines.push(`Arguments: ${given.map(([k, v]) => `\`${k}\` = \`${v.replace(/`/g, "'")}\``).join(', ')}`, '');
  if (result.description) lines.push(`_${result.description}_`, '');
  const messages = Array.isArray(result.messages) ? result.messages : [];
  if (messages.length === 0) lines.push('_(no messages)_', '');
  for (const m of messages) {
    lines.push(`## ${m.role || 'message'}`, '');
    for (const block of contentOf(m.content)) lines.push(blockMarkdown(block), '');
  }
  return lines.join('\n');
}

/** The messages' text (text blocks and embedded text resources), blank lines between them. */
export function promptText(result: GetPromptResult): string {
  const messages = Array.isArray(result.messages) ? result.messages : [];
  const parts: string[] = [];
  for (const m of messages) {
    for (const block of contentOf(m.content)) {
      if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
      else if (block.type === 'resource' && typeof block.resource?.text === 'string') parts.push(block.resource.text);
    }
  }
  return parts.join('\n\n');
}
