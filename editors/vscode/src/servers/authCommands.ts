// "MCP Sidecar: Sign In to Server" (mcp-sidecar.signIn) and "MCP Sidecar: Sign Out of Server"
// (mcp-sidecar.signOut) for http servers; also the status bar's click when a server needs a
// sign-in, and the Sign In / Sign Out actions of Show Servers. The sign-in's own questions (open
// the URL, copy it, paste the redirect, wait for the browser) are the sidecar's quick picks.

import * as vscode from 'vscode';
import * as contract from '../contract';
import { logChannel } from '../log';
import type { Sidecar } from '../sidecar';
import { describeAuth, signInCandidates, signOutCandidates } from './authModel';
import { pickServer } from './pickServer';

const nowSeconds = () => Date.now() / 1000;

/** The named server, or one picked among the candidates (undefined: none, or dismissed). */
async function chooseServer(
  sidecar: Sidecar,
  preset: string | undefined,
  candidates: (servers: contract.ServerSummary[]) => contract.ServerSummary[],
  title: string,
  placeholder: string,
  none: string,
): Promise<string | undefined> {
  if (preset) return preset;
  const servers = candidates(await sidecar.command<contract.ServerSummary[]>(contract.CMD_LIST_SERVERS));
  if (servers.length === 0) {
    void vscode.window.showInformationMessage(none);
    return undefined;
  }
  return pickServer(servers, title, placeholder, (s) => [s.message, describeAuth(s.auth, nowSeconds())].filter(Boolean).join(' · '));
}

/** Signs in to an http server: the sidecar asks for the browser step, then restarts the server. */
export async function signInCommand(sidecar: Sidecar, preset?: string): Promise<void> {
  const server = await chooseServer(
    sidecar,
    preset,
    signInCandidates,
    'Sign in to which MCP server?',
    'The sign-in opens in the browser; the server then starts with it',
    'No MCP server over http needs a sign-in.',
  );
  if (!server) return;
  let row: contract.ServerSummary;
  try {
    row = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Signing in to ${server}` }, () =>
      sidecar.command<contract.ServerSummary>(contract.CMD_SIGN_IN, { server } satisfies contract.ServerArgs),
    );
  } catch (error) {
    const e = error as { message?: string; data?: { kind?: contract.CommandErrorKind } };
    if (e?.data?.kind === 'cancelled') {
      vscode.window.setStatusBarMessage(`$(circle-slash) Sign-in to ${server} cancelled`, 5000);
      return;
    }
    const choice = await vscode.window.showErrorMessage(`Signing in to ${server} failed: ${e?.message ?? String(error)}`, 'Show Log');
    if (choice) logChannel().show(true);
    return;
  }
  if (row.state === 'running') {
    vscode.window.setStatusBarMessage(`$(pass-filled) Signed in to ${server}`, 5000);
  } else {
    void vscode.window.showWarningMessage(`${server}: signed in, but the server is ${row.state}${row.message ? `: ${row.message}` : ''}`);
  }
}

/** Signs out of an http server: the grant is revoked where the authorization server allows it, and forgotten. */
export async function signOutCommand(sidecar: Sidecar, preset?: string): Promise<void> {
  const server = await chooseServer(
    sidecar,
    preset,
    signOutCandidates,
    'Sign out of which MCP server?',
    'Its grant is revoked and forgotten; it waits for a sign-in again',
    'No MCP server is signed in.',
  );
  if (!server) return;
  const r = await sidecar.command<contract.SignOutResult>(contract.CMD_SIGN_OUT, { server } satisfies contract.ServerArgs);
  vscode.window.setStatusBarMessage(
    `$(sign-out) Signed out of ${r.server}${r.revoked ? ' (the grant was revoked)' : ' (the grant is forgotten; the authorization server confirmed no revocation)'}`,
    5000,
  );
}
