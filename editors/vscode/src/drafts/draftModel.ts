// Drafts (mcp-sidecar/editDraft) without VS Code: the buffer's name, where problems go, and the
// bookkeeping that answers each draft exactly once. Pure.

import type { DraftProblem, EditDraftParams, EditDraftResult } from '../contract';

const EXTENSIONS: Record<string, string> = {
  markdown: '.md',
  json: '.json',
  jsonc: '.jsonc',
  yaml: '.yaml',
  plaintext: '.txt',
  toml: '.toml',
};

export function extensionFor(language: string): string {
  return EXTENSIONS[language.toLowerCase()] ?? '.txt';
}

/** A readable, file-name-safe name for the draft's untitled buffer, unique by the prompt id. */
export function draftName(p: Pick<EditDraftParams, 'id' | 'title' | 'language'>): string {
  const title = p.title
    .replace(/[\\/:*?"<>|\r\n\t]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80)
    .trim();
  return `${title || 'MCP draft'} [${p.id}]${extensionFor(p.language)}`;
}

export interface ProblemRange {
  line: number;
  startCharacter: number;
  endCharacter: number;
  message: string;
}

/**
 * Where each problem is shown: its (0-based) line, clamped into the document, underlined from
 * the first non-blank character to the end of the line.
 */
export function problemRanges(problems: DraftProblem[] | undefined, lines: string[]): ProblemRange[] {
  if (!problems || problems.length === 0) return [];
  const last = Math.max(0, lines.length - 1);
  return problems.map((p) => {
    const line = Math.min(Math.max(0, Math.floor(Number.isFinite(p.line) ? p.line : 0)), last);
    const text = lines[line] ?? '';
    const start = text.length - text.trimStart().length;
    return {
      line,
      startCharacter: text.trim().length === 0 ? 0 : start,
      endCharacter: Math.max(text.length, 1),
      message: p.message,
    };
  });
}

export type DraftAction = 'accept' | 'reject' | 'close';

export function draftResult(action: DraftAction, text: string): EditDraftResult {
  if (action === 'accept') return { action: 'accept', text };
  if (action === 'reject') return { action: 'reject' };
  return null;
}

interface OpenDraft {
  id: string;
  key: string;
  resolve: (result: EditDraftResult) => void;
}

/** Open drafts by prompt id and by buffer key (its URI); each is answered exactly once. */
export class DraftBook {
  private byId = new Map<string, OpenDraft>();

  add(id: string, key: string, resolve: (result: EditDraftResult) => void): void {
    this.byId.set(id, { id, key, resolve });
  }

  idForKey(key: string): string | undefined {
    for (const d of this.byId.values()) if (d.key === key) return d.id;
    return undefined;
  }

  keyForId(id: string): string | undefined {
    return this.byId.get(id)?.key;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  isDraft(key: string): boolean {
    return this.idForKey(key) !== undefined;
  }

  /** Answers the draft; false when it was already answered (a second click does nothing). */
  settle(id: string, action: DraftAction, text = ''): boolean {
    const d = this.byId.get(id);
    if (!d) return false;
    this.byId.delete(id);
    d.resolve(draftResult(action, text));
    return true;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }
}

/**
 * Where the person starts typing in an answer draft (`samplingResponse`) whose answer is empty:
 * the sidecar writes `### assistant` and one blank line (an empty answer), so the cursor goes on
 * that line (0-based), right under the heading. The sidecar reads what is typed there, or on any
 * line below, as the answer itself; text typed above the heading is not part of the answer at
 * all. Undefined when the draft has another shape or an answer.
 */
export function emptyAnswerLine(lines: string[]): number | undefined {
  const heading = lines.indexOf('### assistant');
  if (heading < 0 || heading + 1 >= lines.length) return undefined;
  if (lines.slice(heading + 1).some((l) => l.trim() !== '')) return undefined;
  return heading + 1;
}
