// The "MCP Sidecar" output channel: the sidecar's own log (its stderr) and the extension's notes.

import * as vscode from 'vscode';

let channel: vscode.OutputChannel | undefined;

export function logChannel(): vscode.OutputChannel {
  channel ??= vscode.window.createOutputChannel('MCP Sidecar');
  return channel;
}

export function note(message: string): void {
  logChannel().appendLine(`[extension] ${new Date().toISOString()} ${message}`);
}
