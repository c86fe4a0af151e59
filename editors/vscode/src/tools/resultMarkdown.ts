// A CallToolResult as a Markdown document. Pure.

import type { CallToolResult, ContentBlock } from '../contract';

function fence(text: string, language = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${language}\n${text}\n${ticks}`;
}

function looksLikeJson(text: string): boolean {
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

export function blockMarkdown(block: ContentBlock): string {
  switch (block.type) {
    case 'text': {
      const text = block.text ?? '';
      return looksLikeJson(text) ? fence(text, 'json') : text;
    }
    case 'image':
    case 'audio': {
      const size = block.data ? `, ${Math.floor((block.data.length * 3) / 4)} bytes` : '';
      return `_[${block.type}${block.mimeType ? ` ${block.mimeType}` : ''}${size}]_`;
    }
    case 'resource_link':
      return `Resource: [${block.name ?? block.uri}](${block.uri ?? ''})`;
    case 'resource': {
      const r = block.resource ?? {};
      const head = `Resource \`${r.uri ?? ''}\`${r.mimeType ? ` (${r.mimeType})` : ''}`;
      return r.text !== undefined ? `${head}\n\n${fence(r.text)}` : `${head}: _binary content_`;
    }
    default:
      return fence(JSON.stringify(block, null, 2), 'json');
  }
}

/** JSON with sorted keys, to compare values regardless of key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

/** True when some text block already is the structured content, as JSON. */
function textRepeatsStructured(content: ContentBlock[], structured: unknown): boolean {
  const target = canonical(structured);
  return content.some((b) => {
    if (b.type !== 'text' || !looksLikeJson(b.text ?? '')) return false;
    return canonical(JSON.parse(b.text ?? '')) === target;
  });
}

export function resultMarkdown(server: string, tool: string, args: Record<string, unknown> | undefined, result: CallToolResult): string {
  const lines = [`# ${server}: ${tool}`, ''];
  if (args && Object.keys(args).length > 0) lines.push(`Arguments: \`${JSON.stringify(args)}\``, '');
  if (result.isError) lines.push('**The tool reported an error.**', '');
  const content = Array.isArray(result.content) ? result.content : [];
  lines.push('## Result', '');
  if (content.length === 0) lines.push('_(no content)_', '');
  for (const block of content) lines.push(blockMarkdown(block), '');
  if (result.structuredContent !== undefined && !textRepeatsStructured(content, result.structuredContent)) {
    lines.push('## Structured content', '', fence(JSON.stringify(result.structuredContent, null, 2), 'json'), '');
  }
  return lines.join('\n');
}
