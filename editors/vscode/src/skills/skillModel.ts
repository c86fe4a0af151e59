// Skills (the Skills extension, docs/lsp-extensions.md): the rows of "Browse Skills", a skill's
// file as a document path, and the line that says where a file came from and whether it was
// verified. Pure.

import type { SkillFileContents, SkillSummary } from '../contract';

export interface SkillRow {
  label: string;
  description: string;
  detail?: string;
  skill?: SkillSummary;
  /** A separator naming the server of the rows below it. */
  separator?: boolean;
}

/** "the other skills of this name": each as `server uri`. */
export function sameNameText(skill: SkillSummary): string | undefined {
  const others = skill.sameName ?? [];
  if (others.length === 0) return undefined;
  return `same name as ${others.map((o) => `${o.server} ${o.uri}`).join(', ')}`;
}

/**
 * The rows of "Browse Skills", per server (a separator naming each), in the sidecar's order. A
 * skill that shares its name with another is marked, never left out; one that cannot be loaded
 * says why.
 */
export function skillRows(list: SkillSummary[]): SkillRow[] {
  const servers: string[] = [];
  for (const s of list) if (!servers.includes(s.server)) servers.push(s.server);
  const rows: SkillRow[] = [];
  for (const server of servers) {
    rows.push({ label: server, description: '', separator: true });
    for (const skill of list.filter((s) => s.server === server)) {
      const clash = sameNameText(skill);
      rows.push({
        label: `${skill.problem ? '$(error)' : '$(book)'} ${skill.name}${clash ? ' $(warning)' : ''}`,
        description: [server, clash].filter(Boolean).join(' · '),
        detail: skill.problem
          ? `cannot be loaded: ${skill.problem}`
          : [skill.description, skill.files ? `${skill.files.length} file${skill.files.length === 1 ? '' : 's'}` : 'dynamic: not verified']
              .filter(Boolean)
              .join(' · '),
        skill,
      });
    }
  }
  return rows;
}

/** The part of `file` below the skill's folder (the folder of its SKILL.md), else its last segment. */
export function relativePath(skillUri: string, file: string): string {
  const folder = skillUri.slice(0, skillUri.lastIndexOf('/') + 1);
  const rest = folder && file.startsWith(folder) ? file.slice(folder.length) : file.slice(file.lastIndexOf('/') + 1);
  return rest || 'SKILL.md';
}

/** A document's path for a skill's file: `/<server>/<skill>/<relative path>`, each segment a plain name. */
export function documentPath(server: string, skillName: string, skillUri: string, file: string): string {
  const safe = (s: string) => s.replace(/[^\w.-]+/g, '_').replace(/^\.+/, '_') || '_';
  const segments = relativePath(skillUri, file).split('/').filter(Boolean).map(safe);
  return `/${[safe(server), safe(skillName), ...segments].join('/')}`;
}

/** Where a skill file came from and how far it is trusted: "docs · verified sha256:9f86d081…0f00a08". */
export function provenance(file: SkillFileContents): string {
  if (!file.verified || !file.digest) return `${file.server} · dynamic: not verified`;
  const [algorithm, hex = ''] = file.digest.split(':');
  const short = hex.length > 20 ? `${hex.slice(0, 8)}…${hex.slice(-7)}` : hex;
  return `${file.server} · verified ${algorithm}:${short}`;
}

/** The text a skill file's document shows: its text, or what its bytes are when they are not text. */
export function fileText(file: SkillFileContents): string {
  if (typeof file.text === 'string') return file.text;
  return `[${file.uri}: ${file.size} bytes that are not text]`;
}
