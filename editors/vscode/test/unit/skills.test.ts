import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SkillSummary } from '../../src/contract';
import { documentPath, fileText, provenance, relativePath, skillRows } from '../../src/skills/skillModel';

const digest = 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';

test('rows per server; two skills of one name both listed and marked; a problem said', () => {
  const list: SkillSummary[] = [
    { server: 'docs', uri: 'skill://notes/SKILL.md', name: 'notes', description: 'Write notes', files: [{ uri: 'skill://notes/SKILL.md', digest, size: 12 }], sameName: [{ server: 'other', uri: 'skill://x/notes/SKILL.md' }] },
    { server: 'other', uri: 'skill://x/notes/SKILL.md', name: 'notes', sameName: [{ server: 'docs', uri: 'skill://notes/SKILL.md' }] },
    { server: 'docs', uri: 'skill://bad/SKILL.md', name: 'bad', problem: 'the manifest has no SKILL.md' },
  ];
  const rows = skillRows(list);
  assert.deepEqual(rows.map((r) => (r.separator ? `-- ${r.label}` : r.label)), ['-- docs', '$(book) notes $(warning)', '$(error) bad', '-- other', '$(book) notes $(warning)']);
  assert.equal(rows[1].description, 'docs · same name as other skill://x/notes/SKILL.md');
  assert.equal(rows[1].detail, 'Write notes · 1 file');
  assert.equal(rows[2].detail, 'cannot be loaded: the manifest has no SKILL.md');
  assert.equal(rows[4].detail, 'dynamic: not verified');
});

test('a file as a path below its skill, each segment a plain name', () => {
  assert.equal(relativePath('skill://notes/SKILL.md', 'skill://notes/templates/a.md'), 'templates/a.md');
  assert.equal(relativePath('skill://notes/SKILL.md', 'skill://notes/SKILL.md'), 'SKILL.md');
  assert.equal(relativePath('skill://notes/SKILL.md', 'other://x/y.md'), 'y.md');
  assert.equal(documentPath('my server', 'notes', 'skill://notes/SKILL.md', 'skill://notes/../t/a b.md'), '/my_server/notes/_/t/a_b.md');
});

test('provenance: verified with its digest shortened, or dynamic and not verified', () => {
  assert.equal(provenance({ server: 'docs', skill: 's', uri: 's', size: 1, digest, verified: true }), 'docs · verified sha256:9f86d081…0f00a08');
  assert.equal(provenance({ server: 'docs', skill: 's', uri: 's', size: 1, verified: false }), 'docs · dynamic: not verified');
  assert.equal(fileText({ server: 'docs', skill: 's', uri: 'skill://a/x.bin', size: 3, blob: 'AAAA', verified: true, digest }), '[skill://a/x.bin: 3 bytes that are not text]');
});
