// Whether a server's question opens at once or is first announced by a notification
// "‹server› needs input" (Respond / Cancel), so it does not steal focus from someone typing.
// Pure: the caller passes the facts.

export type NotifyFirst = 'off' | 'whenTyping' | 'always';

export interface PromptFacts {
  /** The prompt is a server's (the sidecar's own questions, like "which server?", open at once). */
  server?: string;
  step?: number;
  /** A re-ask after invalid input belongs to the exchange already under way. */
  reask: boolean;
  now: number;
  /** When the person last typed in a text editor (ms), if ever. */
  lastTypedAt?: number;
  windowFocused: boolean;
  /** When this server's previous prompt was answered (ms), if ever. */
  lastAnsweredAt?: number;
  /** When any prompt (any server's, or the editor's own picks) was last answered (ms), if ever. */
  lastAnyAnsweredAt?: number;
}

/** How recent typing counts as "typing elsewhere". */
export const TYPING_WINDOW_MS = 3000;
/** Prompts answered within this of each other belong to one exchange. */
export const EXCHANGE_GAP_MS = 15000;

export function isFirstOfExchange(f: PromptFacts): boolean {
  if (f.reask) return false;
  if (typeof f.step === 'number' && f.step > 1) return false;
  return f.lastAnsweredAt === undefined || f.now - f.lastAnsweredAt > EXCHANGE_GAP_MS;
}

export function shouldAnnounce(mode: NotifyFirst, f: PromptFacts): boolean {
  if (mode === 'off' || !f.server || !isFirstOfExchange(f)) return false;
  if (mode === 'always') return true;
  // Typing elsewhere: the last thing the person did was typing in an editor, just now (not
  // answering a prompt, like the Call Tool picks that lead to this question).
  const typing =
    f.lastTypedAt !== undefined &&
    f.now - f.lastTypedAt < TYPING_WINDOW_MS &&
    (f.lastAnyAnsweredAt === undefined || f.lastTypedAt > f.lastAnyAnsweredAt);
  return typing || !f.windowFocused;
}
