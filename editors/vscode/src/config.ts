// Reads the extension's settings from VS Code.

import * as vscode from 'vscode';
import type { NotifyFirst } from './prompts/attention';
import { sidecarSettings, type SidecarSettings } from './settings';

export const SECTION = 'mcpSidecar';

function cfg(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

export function readSidecarSettings(): SidecarSettings {
  const c = cfg();
  return sidecarSettings({
    servers: c.inspect<Record<string, unknown>>('servers'),
    samplingProvider: c.get<string>('sampling.provider', 'manual'),
    samplingPolicy: c.get<string>('sampling.policy', 'ask'),
    elicitationPolicy: c.get<string>('elicitation.policy', 'ask'),
    formBufferThreshold: c.get<number>('elicitation.formBufferThreshold', 8),
  });
}

export function binaryPathSetting(): string {
  return cfg().get<string>('binaryPath', '');
}

export function logLevelSetting(): string {
  return cfg().get<string>('log.level', 'info');
}

export function notifyFirstSetting(): NotifyFirst {
  return cfg().get<NotifyFirst>('prompts.notifyFirst', 'whenTyping');
}

/** Settings whose change needs a new sidecar process (the others are sent to the running one). */
export function needsRestart(e: vscode.ConfigurationChangeEvent): boolean {
  return e.affectsConfiguration(`${SECTION}.binaryPath`) || e.affectsConfiguration(`${SECTION}.log.level`);
}
