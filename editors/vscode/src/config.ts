// Reads the extension's settings from VS Code.

import * as vscode from 'vscode';
import type { NotifyFirst } from './prompts/attention';
import { sidecarSettings, userValue, type SidecarSettings } from './settings';

export const SECTION = 'mcpSidecar';

function cfg(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

export function readSidecarSettings(): SidecarSettings {
  const c = cfg();
  const inspect = (key: string) => c.inspect<string>(key);
  return sidecarSettings({
    servers: c.inspect<Record<string, unknown>>('servers'),
    samplingProvider: inspect('sampling.provider'),
    samplingPolicy: inspect('sampling.policy'),
    elicitationPolicy: inspect('elicitation.policy'),
    elicitationRateLimit: inspect('elicitation.rateLimit'),
    elicitationIdleLimit: inspect('elicitation.idleLimit'),
    gatewayEnabled: c.inspect<boolean>('gateway.enabled'),
    gatewayQuestions: inspect('gateway.questions'),
    workspaceTrusted: vscode.workspace.isTrusted,
  });
}

/**
 * The person's own `binaryPath` (user or remote settings). The setting is machine-scoped, so VS
 * Code already ignores a workspace's value; reading only the global value makes sure of it.
 */
export function binaryPathSetting(): string {
  const value = userValue(cfg().inspect<string>('binaryPath'));
  return typeof value === 'string' ? value : '';
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
