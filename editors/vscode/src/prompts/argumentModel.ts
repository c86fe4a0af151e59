// An argument asked with completion suggestions (a prompt's argument, a resource template's
// variable): the rows under the typed text and what Enter means. Pure.

export interface ArgumentRow {
  label: string;
  description?: string;
  /** What picking the row answers. */
  value: string;
}

export const LEAVE_OUT = 'Leave out';

/**
 * The typed value first (Enter takes it as is; for an optional argument with nothing typed,
 * "Leave out"), then the suggestions not equal to it.
 */
export function argumentRows(value: string, suggestions: string[], required: boolean): ArgumentRow[] {
  const rows: ArgumentRow[] = value
    ? [{ label: value, description: 'as typed', value }]
    : required
      ? []
      : [{ label: LEAVE_OUT, description: 'no value', value: '' }];
  for (const s of suggestions) if (s !== value && !rows.some((r) => r.value === s)) rows.push({ label: s, description: 'suggested', value: s });
  return rows;
}

/** What Enter gives: the chosen row, else the typed text; `undefined` while a required value is missing. */
export function argumentAnswer(chosen: string | undefined, typed: string, required: boolean): string | undefined {
  const value = chosen ?? typed;
  if (required && value.trim() === '') return undefined;
  return value;
}

/** The placeholder: the argument's description, and how to leave an optional one out. */
export function argumentPlaceholder(name: string, description: string | undefined, required: boolean): string {
  const what = description ? `${name}: ${description}` : name;
  return required ? `${what} (required)` : `${what} (optional)`;
}
