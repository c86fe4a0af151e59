// The quick pick of the palette commands on one server (Trust, Revoke Trust, Sign In, Sign Out):
// one row per candidate, with its state and source, and its message (or another detail) below.

import * as vscode from 'vscode';
import { shownName, type ServerStatusParams } from '../contract';

export async function pickServer<S extends ServerStatusParams>(
  candidates: S[],
  title: string,
  placeHolder: string,
  detail: (s: S) => string | undefined = (s) => s.message,
): Promise<string | undefined> {
  const pick = await vscode.window.showQuickPick(
    candidates.map((s) => ({ label: shownName(s), description: [s.state, s.source].filter(Boolean).join(' · '), detail: detail(s) })),
    { title, placeHolder },
  );
  return pick?.label;
}
