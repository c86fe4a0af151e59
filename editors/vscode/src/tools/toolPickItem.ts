// A row of Call Tool's tool step. Pure.

import { shownName, type QuickPickItemParams, type ToolSummary } from '../contract';

/** A row of the tool step; a tool with a view (MCP Apps) says so: its view opens beside the result. */
export function toolPickItem(t: ToolSummary): QuickPickItemParams {
  const title = t.title && t.title !== t.name ? t.title : undefined;
  return {
    label: shownName(t),
    description: [t.ui ? '$(window) has a view' : undefined, title].filter(Boolean).join(' · ') || undefined,
    detail: t.description,
  };
}
