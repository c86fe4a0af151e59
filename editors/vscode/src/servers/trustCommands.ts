// "MCP Sidecar: Trust Server" (mcp-sidecar.trustServer) and "MCP Sidecar: Revoke Trust for
// Server" (mcp-sidecar.untrustServer) for servers the workspace defines, and "MCP Sidecar: Open
// Sampling Log" (mcp-sidecar.openSamplingLog: the sidecar asks VS Code to show the file).

import * as vscode from 'vscode';
import { readSidecarSettings } from '../config';
import * as contract from '../contract';
import type { Sidecar } from '../sidecar';
import { pickServer } from './pickServer';
import { trustCandidates } from './trustModel';

/** Trusts (`trusted`) or revokes the trust of a workspace-defined server, picked from a list. */
export async function trustCommand(sidecar: Sidecar, trusted: boolean, preset?: string): Promise<void> {
  let server = preset;
  if (!server) {
    const servers = await sidecar.command<contract.ServerSummary[]>(contract.CMD_LIST_SERVERS);
    const candidates = trustCandidates(servers, readSidecarSettings().serverScopes, trusted);
    if (candidates.length === 0) {
      void vscode.window.showInformationMessage(
        trusted
          ? 'No MCP server is waiting for trust (the sidecar asks when a workspace defines a new one).'
          : 'No MCP server defined by the workspace is trusted.',
      );
      return;
    }
    server = await pickServer(
      candidates,
      trusted ? 'Trust which MCP server?' : 'Revoke the trust of which MCP server?',
      trusted ? 'It starts at once' : 'It is stopped at once and waits for trust',
    );
    if (!server) return;
  }
  const r = await sidecar.command<contract.TrustServerResult>(trusted ? contract.CMD_TRUST_SERVER : contract.CMD_UNTRUST_SERVER, {
    server,
  });
  vscode.window.setStatusBarMessage(
    r.trusted ? `$(shield) Trusted ${r.server}` : `$(shield) ${r.server} is no longer trusted (stopped)`,
    5000,
  );
}

export async function openSamplingLogCommand(sidecar: Sidecar): Promise<void> {
  const r = await sidecar.command<contract.OpenSamplingLogResult>(contract.CMD_OPEN_SAMPLING_LOG);
  if (!r.opened) void vscode.window.showWarningMessage(`MCP Sidecar: the sampling log ${r.path} could not be opened.`);
}
