// Completion suggestions from a server (mcp-sidecar.complete) for a prompt's arguments or a
// resource template's variables. A server that cannot complete (refused) is not asked again in
// this run; any other failure gives no suggestions for that value.

import * as contract from '../contract';
import { note } from '../log';
import type { Sidecar } from '../sidecar';

export type Suggest = (argument: string, value: string, earlier: Record<string, string>) => Promise<string[]>;

export function completer(sidecar: Sidecar, server: string, ref: contract.CompletionRef): Suggest | undefined {
  let refused = false;
  return async (argument, value, earlier) => {
    if (refused) return [];
    try {
      const others = Object.fromEntries(Object.entries(earlier).filter(([k]) => k !== argument));
      const context = Object.keys(others).length > 0 ? { arguments: others } : undefined;
      const result = await sidecar.command<contract.CompleteResult>(contract.CMD_COMPLETE, {
        server,
        ref,
        argument: { name: argument, value },
        context,
      } satisfies contract.CompleteArgs);
      const values = result?.completion?.values;
      return Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string').slice(0, 100) : [];
    } catch (error) {
      const e = error as { message?: string; data?: { kind?: string } };
      if (e?.data?.kind === 'refused') {
        refused = true;
        note(`${server}: no completions (${e.message ?? 'refused'})`);
      }
      return [];
    }
  };
}
