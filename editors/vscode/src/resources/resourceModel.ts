// What "Open Resource" shows, decided without VS Code: the quick pick's rows, the language of a
// text resource from its mimeType, how a read result is shown (text, image, binary to save), and
// the document's path. Pure.

import { shownName, type ResourceContents, type ResourceSummary, type ResourceTemplateSummary } from '../contract';

const LANGUAGES: Record<string, string> = {
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'application/json': 'json',
  'application/ld+json': 'json',
  'application/schema+json': 'json',
  'application/x-ndjson': 'jsonl',
  'application/jsonl': 'jsonl',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/css': 'css',
  'text/csv': 'csv',
  'text/javascript': 'javascript',
  'application/javascript': 'javascript',
  'application/typescript': 'typescript',
  'text/x-typescript': 'typescript',
  'text/x-python': 'python',
  'text/x-script.python': 'python',
  'application/x-python-code': 'python',
  'text/x-rust': 'rust',
  'text/x-go': 'go',
  'text/x-java-source': 'java',
  'text/x-java': 'java',
  'text/x-c': 'c',
  'text/x-c++': 'cpp',
  'text/x-shellscript': 'shellscript',
  'application/x-sh': 'shellscript',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'image/svg+xml': 'xml',
  'application/yaml': 'yaml',
  'application/x-yaml': 'yaml',
  'text/yaml': 'yaml',
  'text/x-yaml': 'yaml',
  'application/toml': 'toml',
  'application/sql': 'sql',
  'text/x-sql': 'sql',
  'text/x-diff': 'diff',
  'text/x-patch': 'diff',
  'text/plain': 'plaintext',
};

/** The VS Code language id for a mimeType (parameters such as `; charset=utf-8` ignored). */
export function languageForMime(mimeType: string | undefined): string {
  const base = (mimeType ?? '').split(';')[0].trim().toLowerCase();
  if (LANGUAGES[base]) return LANGUAGES[base];
  if (base.endsWith('+json')) return 'json';
  if (base.endsWith('+xml')) return 'xml';
  if (base.endsWith('+yaml')) return 'yaml';
  return 'plaintext';
}

export type ResourceRow =
  | { kind: 'resource'; server: string; uri: string; label: string; description: string; detail: string }
  | { kind: 'template'; server: string; uriTemplate: string; label: string; description: string; detail: string };

/** One row per resource, then per template; the label is the title (else the name). */
export function resourceRows(resources: ResourceSummary[], templates: ResourceTemplateSummary[]): ResourceRow[] {
  const describe = (server: string, mimeType?: string) => [server, mimeType].filter(Boolean).join(' · ');
  return [
    ...resources.map((r): ResourceRow => ({
      kind: 'resource',
      server: r.server,
      uri: r.uri,
      label: r.title || shownName(r) || r.uri,
      description: describe(r.server, r.mimeType),
      detail: r.description ? `${r.uri} — ${r.description}` : r.uri,
    })),
    ...templates.map((t): ResourceRow => ({
      kind: 'template',
      server: t.server,
      uriTemplate: t.uriTemplate,
      label: t.title || shownName(t) || t.uriTemplate,
      description: describe(t.server, ['template', t.mimeType].filter(Boolean).join(', ')),
      detail: t.description ? `${t.uriTemplate} — ${t.description}` : t.uriTemplate,
    })),
  ];
}

export type ResourceView =
  | { kind: 'text'; text: string; language: string }
  | { kind: 'image'; data: string; mimeType: string }
  | { kind: 'binary'; data: string; mimeType?: string }
  | { kind: 'empty' };

/**
 * How a read result is shown: text items as one document (several joined, each under its URI),
 * an image blob as an image, other blobs for saving. `listedMimeType` (from the list) stands in
 * when an item has none.
 */
export function resourceView(contents: ResourceContents[] | undefined, listedMimeType?: string): ResourceView {
  const items = Array.isArray(contents) ? contents : [];
  if (items.length === 0) return { kind: 'empty' };
  const texts = items.filter((c) => typeof c.text === 'string');
  if (texts.length > 0) {
    const mime = texts[0].mimeType ?? listedMimeType;
    const text =
      items.length === 1
        ? (texts[0].text ?? '')
        : items
            .map((c) => `--- ${c.uri ?? ''}${c.mimeType ? ` (${c.mimeType})` : ''}\n${typeof c.text === 'string' ? c.text : `[binary, ${blobBytes(c.blob ?? '')} bytes]`}`)
            .join('\n\n');
    return { kind: 'text', text, language: items.length === 1 ? languageForMime(mime) : 'plaintext' };
  }
  const blob = items.find((c) => typeof c.blob === 'string');
  if (!blob) return { kind: 'empty' };
  const mimeType = blob.mimeType ?? listedMimeType;
  if (mimeType && /^image\/(png|jpe?g|gif|webp|bmp|svg\+xml|x-icon|avif)$/i.test(mimeType.split(';')[0].trim())) {
    return { kind: 'image', data: blob.blob ?? '', mimeType };
  }
  // A blob of a text type is shown as text when it is valid UTF-8.
  const text = isTextual(mimeType) ? utf8(blob.blob ?? '') : undefined;
  if (text !== undefined) return { kind: 'text', text, language: languageForMime(mimeType) };
  return { kind: 'binary', data: blob.blob ?? '', mimeType };
}

function isTextual(mimeType: string | undefined): boolean {
  const base = (mimeType ?? '').split(';')[0].trim().toLowerCase();
  return base.startsWith('text/') || (base !== '' && !base.startsWith('image/') && languageForMime(base) !== 'plaintext');
}

/** base64 → text, or undefined when the bytes are not UTF-8. */
function utf8(base64: string): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(base64, 'base64'));
  } catch {
    return undefined;
  }
}

/** The decoded size of base64 data. */
export function blobBytes(base64: string): number {
  const clean = base64.replace(/\s+/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

/** A file name for saving a resource: the URI's last segment, else its server and a guess. */
export function saveName(uri: string, mimeType?: string): string {
  const clean = lastSegment(uri).replace(/[^\w.-]+/g, '_').replace(/^\.+/, '');
  const ext = mimeType ? EXTENSIONS[mimeType.split(';')[0].trim().toLowerCase()] : undefined;
  const base = clean || 'resource';
  return ext && !base.includes('.') ? `${base}.${ext}` : base;
}

const EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'application/gzip': 'gz',
  'application/octet-stream': 'bin',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'video/mp4': 'mp4',
  'image/png': 'png',
  'image/jpeg': 'jpg',
};

/** The URI's last path segment (decoded), without its scheme, query or fragment. */
function lastSegment(uri: string): string {
  const rest = uri.replace(/[?#].*$/, '').replace(/^[A-Za-z][\w+.-]*:/, '');
  return decodeSafe(rest.split('/').filter(Boolean).pop() ?? '');
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The path of a resource's document (its tab title is the last segment): `/<server>/<name>`,
 * the name from the URI, `resource` when it has none. Server and URI themselves ride in the
 * query, so the path is only for people.
 */
export function documentPath(server: string, uri: string): string {
  const safe = (s: string) => s.replace(/[^\w.@-]+/g, '_');
  return `/${safe(server)}/${safe(lastSegment(uri)) || 'resource'}`;
}
