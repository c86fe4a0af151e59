// A skill's files as read-only documents under their own scheme (`mcp-sidecar-skill:`), read with
// mcp-sidecar.readSkill (the sidecar checks each against the skill's manifest and refuses a
// mismatch). A code lens on the first line says where the file came from and whether it was
// verified ("docs · verified sha256:9f86d081…0f00a08", or "dynamic: not verified"), with Copy Path.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { note } from '../log';
import type { Sidecar } from '../sidecar';
import { documentPath, fileText, provenance } from './skillModel';

export const SKILL_SCHEME = 'mcp-sidecar-skill';
export const COPY_SKILL_PATH = 'mcpSidecar.copySkillPath';

export class SkillDocuments implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** What each open document last read: for its text and its lens. */
  private files = new Map<string, contract.SkillFileContents>();
  private disposables: vscode.Disposable[];

  constructor(private sidecar: Sidecar) {
    this.disposables = [
      vscode.workspace.registerTextDocumentContentProvider(SKILL_SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: SKILL_SCHEME }, this),
      vscode.commands.registerCommand(COPY_SKILL_PATH, async (uri: unknown) => {
        if (typeof uri !== 'string') return;
        await vscode.env.clipboard.writeText(uri);
        vscode.window.setStatusBarMessage(`$(copy) Copied ${uri}`, 3000);
      }),
    ];
  }

  static documentUri(skill: contract.SkillSummary, file: string): vscode.Uri {
    return vscode.Uri.from({
      scheme: SKILL_SCHEME,
      path: documentPath(skill.server, skill.name, skill.uri, file),
      query: new URLSearchParams({ server: skill.server, skill: skill.uri, file }).toString(),
    });
  }

  static parse(doc: vscode.Uri): contract.ReadSkillArgs | undefined {
    const q = new URLSearchParams(doc.query);
    const server = q.get('server');
    const uri = q.get('skill');
    const file = q.get('file');
    if (!server || !uri || !file) return undefined;
    return file === uri ? { server, uri } : { server, uri, file };
  }

  async provideTextDocumentContent(doc: vscode.Uri): Promise<string> {
    const known = this.files.get(doc.toString());
    if (known) return fileText(known);
    // A document VS Code opens again by itself (a reload): read it again.
    const args = SkillDocuments.parse(doc);
    if (!args) return `Not a skill document: ${doc.toString()}`;
    try {
      const file = await this.read(args);
      this.files.set(doc.toString(), file);
      return fileText(file);
    } catch (error) {
      return `Reading ${args.file} of ${args.server} failed: ${(error as Error)?.message ?? String(error)}`;
    }
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const file = this.files.get(doc.uri.toString());
    if (!file) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    return [
      // A lens without a command is shown as text.
      new vscode.CodeLens(top, { title: `$(${file.verified ? 'shield' : 'warning'}) ${provenance(file)}`, command: '' }),
      new vscode.CodeLens(top, { title: 'Copy Path', command: COPY_SKILL_PATH, arguments: [file.skill], tooltip: `Copy ${file.skill}` }),
    ];
  }

  /** Reads a file of the skill (its SKILL.md when `file` is absent) and shows it; a refusal is reported. */
  async open(skill: contract.SkillSummary, file?: string): Promise<void> {
    const target = file ?? skill.uri;
    let contents: contract.SkillFileContents;
    try {
      contents = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Reading ${target}` },
        () => this.read({ server: skill.server, uri: skill.uri, file }),
      );
    } catch (error) {
      void vscode.window.showErrorMessage(`${skill.server}: ${target} cannot be opened: ${(error as Error)?.message ?? String(error)}`);
      return;
    }
    note(`skill ${skill.server} ${target}: ${contents.size} bytes, ${contents.verified ? `verified ${contents.digest}` : 'not verified (dynamic)'}`);
    const uri = SkillDocuments.documentUri(skill, target);
    const open = vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString());
    this.files.set(uri.toString(), contents);
    if (open) this.changed.fire(uri);
    let doc = await vscode.workspace.openTextDocument(uri);
    if (target.endsWith('.md') && doc.languageId !== 'markdown') doc = await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: false });
  }

  private read(args: contract.ReadSkillArgs): Promise<contract.SkillFileContents> {
    return this.sidecar.command<contract.SkillFileContents>(contract.CMD_READ_SKILL, args satisfies contract.ReadSkillArgs);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}
