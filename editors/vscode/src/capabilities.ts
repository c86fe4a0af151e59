// Announces the contract's UI primitives in `initialize`: capabilities.experimental.mcpSidecar.

import type { ClientCapabilities, FeatureState, StaticFeature } from 'vscode-languageclient/node';
import type { EditorCapabilities } from './contract';

export class SidecarCapabilities implements StaticFeature {
  constructor(private capabilities: EditorCapabilities) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    experimental.mcpSidecar = { ...this.capabilities };
    capabilities.experimental = experimental;
  }

  initialize(): void {}

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {}
}

export function editorCapabilities(languageModel: boolean): EditorCapabilities {
  // serverScopes: every settings object says which servers came from workspace settings.
  // openApp: a server's view opens in a webview panel (src/apps/appViews.ts).
  return { inputBox: true, quickPick: true, editDraft: true, clipboard: true, languageModel, serverScopes: true, openApp: true };
}
