// "MCP Sidecar: Browse Skills": the skills of every running server (mcp-sidecar.listSkills), per
// server; a skill opens its SKILL.md or another file of its manifest read-only (SkillDocuments),
// or its URI is copied for an agent. Two skills of one name are both listed, each marked.

import * as vscode from 'vscode';
import * as contract from '../contract';
import type { Sidecar } from '../sidecar';
import { COPY_SKILL_PATH, type SkillDocuments } from './skillDocuments';
import { relativePath, sameNameText, skillRows } from './skillModel';

type SkillItem = vscode.QuickPickItem & { skill?: contract.SkillSummary };

export async function browseSkillsCommand(sidecar: Sidecar, documents: SkillDocuments): Promise<void> {
  const list = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Listing MCP skills' }, () =>
    sidecar.command<contract.SkillSummary[]>(contract.CMD_LIST_SKILLS),
  );
  if (!list?.length) {
    void vscode.window.showInformationMessage('No running MCP server offers skills.');
    return;
  }
  const items: SkillItem[] = skillRows(list).map((row) =>
    row.separator
      ? { label: row.label, kind: vscode.QuickPickItemKind.Separator }
      : { label: row.label, description: row.description, detail: row.detail, skill: row.skill },
  );
  const picked = await vscode.window.showQuickPick(items, {
    title: 'MCP Skills',
    placeHolder: 'Pick a skill: open its files (read-only) or copy its path',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  const skill = picked?.skill;
  if (!skill) return;
  const others = (skill.files ?? []).filter((f) => f.uri !== skill.uri);
  const actions = [
    ...(skill.problem ? [] : [{ label: '$(go-to-file) Open SKILL.md', id: 'open' }]),
    ...(skill.problem || others.length === 0 ? [] : [{ label: '$(files) Open a File…', id: 'file', description: `${others.length} more` }]),
    { label: '$(copy) Copy Path', id: 'copy', description: skill.uri },
  ];
  const action = await vscode.window.showQuickPick(actions, {
    title: `${skill.server}: ${skill.name}`,
    placeHolder: skill.problem ? `cannot be loaded: ${skill.problem}` : (sameNameText(skill) ?? skill.description ?? skill.uri),
  });
  if (action?.id === 'open') await documents.open(skill);
  else if (action?.id === 'copy') await vscode.commands.executeCommand(COPY_SKILL_PATH, skill.uri);
  else if (action?.id === 'file') {
    const file = await vscode.window.showQuickPick(
      others.map((f) => ({ label: relativePath(skill.uri, f.uri), description: `${f.size} bytes`, detail: f.uri, uri: f.uri })),
      { title: `${skill.server}: ${skill.name}`, placeHolder: 'Which file?' },
    );
    if (file) await documents.open(skill, file.uri);
  }
}
