// "MCP Sidecar: Open Resource": one quick pick over every running server's resources and
// resource templates; a template's variables are asked one by one with the server's completion
// suggestions (ref/resource), the URI expanded by the sidecar (RFC 6570, all four levels:
// mcp-sidecar.expandUriTemplate), and the resource opens.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { askArguments } from '../prompts/argumentInput';
import type { PromptService } from '../prompts/promptService';
import type { Sidecar } from '../sidecar';
import { completer } from './completer';
import type { ResourceDocuments } from './resourceDocuments';
import { resourceRows } from './resourceModel';

const TITLE = 'MCP Sidecar: Open Resource';
let nextId = 1;

export async function openResourceCommand(sidecar: Sidecar, prompts: PromptService, documents: ResourceDocuments): Promise<void> {
  const [resources, templates] = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: 'Listing MCP resources' },
    () =>
      Promise.all([
        sidecar.command<contract.ResourceSummary[]>(contract.CMD_LIST_RESOURCES),
        sidecar.command<contract.ResourceTemplateSummary[]>(contract.CMD_LIST_RESOURCE_TEMPLATES),
      ]),
  );
  const rows = resourceRows(resources ?? [], templates ?? []);
  if (rows.length === 0) {
    void vscode.window.showInformationMessage('No running MCP server offers resources.');
    return;
  }
  let chosen = 0;
  for (;;) {
    const r = await prompts.quickPick({
      id: `openresource-${nextId++}`,
      title: TITLE,
      placeholder: 'Which resource? (server · mimeType; templates ask for their variables)',
      items: rows.map((row, i) => ({ label: row.label, description: row.description, detail: row.detail, picked: i === chosen })),
    });
    if (!r || !('selected' in r) || r.selected.length === 0) return;
    chosen = r.selected[0];
    const row = rows[chosen];
    if (row.kind === 'resource') {
      await documents.open(row.server, row.uri, resources.find((x) => x.server === row.server && x.uri === row.uri)?.mimeType);
      return;
    }
    const template = templates.find((t) => t.server === row.server && t.uriTemplate === row.uriTemplate);
    const uri = await askVariables(sidecar, prompts, row.server, row.uriTemplate);
    if (uri === 'back') continue;
    if (uri === undefined) return;
    await documents.open(row.server, uri, template?.mimeType);
    return;
  }
}

/**
 * The template's variables, as the sidecar reads them, one step each (Back from the first returns
 * to the list); any may be left out (undefined, as RFC 6570 allows). Then the sidecar expands the
 * template with the answers. A template the sidecar refuses is shown with its reason.
 */
async function askVariables(sidecar: Sidecar, prompts: PromptService, server: string, uriTemplate: string): Promise<string | 'back' | undefined> {
  const expand = (values?: Record<string, string>) =>
    sidecar.command<contract.ExpandUriTemplateResult>(contract.CMD_EXPAND_URI_TEMPLATE, { uriTemplate, values } satisfies contract.ExpandUriTemplateArgs);
  let variables: string[];
  try {
    variables = (await expand()).variables;
  } catch (error) {
    void vscode.window.showErrorMessage(`${server}: cannot use the resource template: ${(error as Error).message}`);
    return undefined;
  }
  const values = await askArguments(prompts, {
    id: () => `openresource-${nextId++}`,
    title: `${server}: ${uriTemplate}`,
    steps: variables.map((name) => ({ key: name, name, required: false })),
    suggest: completer(sidecar, server, { type: 'ref/resource', uri: uriTemplate }),
  });
  if (values === undefined || values === 'back') return values;
  try {
    return (await expand(values)).uri;
  } catch (error) {
    void vscode.window.showErrorMessage(`${server}: cannot expand the resource template: ${(error as Error).message}`);
    return undefined;
  }
}
