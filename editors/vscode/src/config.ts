// Reads the extension's settings from VS Code.

import * as vscode from 'vscode';
import type { NotifyFirst } from './prompts/attention';
import { explicitValue, sidecarSettings, type SidecarSettings } from './settings';

export const SECTION = 'mcpSidecar';

function cfg(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

export function readSidecarSettings(): SidecarSettings {
  const c = cfg();
  const set = (key: string) => explicitValue(c.inspect<string>(key));
  return sidecarSettings({
    servers: c.inspect<Record<string, unknown>>('servers'),
    samplingProvider: set('sampling.provider'),
    samplingPolicy: set('sampling.policy'),
    elicitationPolicy: set('elicitation.policy'),
    elicitationRateLimit: set('elicitation.rateLimit'),
    elicitationIdleLimit: set('elicitation.idleLimit'),
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
