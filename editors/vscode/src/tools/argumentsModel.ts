// A tool's arguments typed as one JSON object (until the sidecar asks for missing arguments
// itself): a prefilled skeleton from the input schema, and a check of what was typed. Pure.

import type { JsonSchema } from '../contract';

function properties(schema: JsonSchema | undefined): [string, JsonSchema][] {
  const props = schema?.properties;
  return props && typeof props === 'object' ? Object.entries(props) : [];
}

export function needsArguments(schema: JsonSchema | undefined): boolean {
  return properties(schema).length > 0;
}

function firstType(s: JsonSchema): string | undefined {
  return Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
}

function placeholderValue(s: JsonSchema): unknown {
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  switch (firstType(s)) {
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    case 'null':
      return null;
    default:
      return '';
  }
}

/** `{"a": 0, "b": 0}`: the required properties (all of them when none is required). */
export function argumentSkeleton(schema: JsonSchema | undefined): string {
  const props = properties(schema);
  const required = new Set(schema?.required ?? []);
  const shown = props.some(([k]) => required.has(k)) ? props.filter(([k]) => required.has(k)) : props;
  if (shown.length === 0) return '{}';
  return `{${shown.map(([k, s]) => `${JSON.stringify(k)}: ${JSON.stringify(placeholderValue(s))}`).join(', ')}}`;
}

/** One line naming the arguments, for the input box's prompt. */
export function argumentsHelp(schema: JsonSchema | undefined): string {
  const required = new Set(schema?.required ?? []);
  const parts = properties(schema).map(([k, s]) => {
    const type = firstType(s) ?? 'any';
    const desc = s.description ? `: ${s.description}` : '';
    return `${k} (${type}${required.has(k) ? ', required' : ''})${desc}`;
  });
  return parts.length ? `Arguments as a JSON object. ${parts.join('; ')}` : 'Arguments as a JSON object';
}

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

function typeMatches(value: unknown, type: string | undefined): boolean {
  switch (type) {
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

/** Parses the typed text; a light check of required keys and top-level types (the server checks the rest). */
export function parseArguments(text: string, schema: JsonSchema | undefined): ParsedArguments {
  const trimmed = text.trim();
  let value: unknown;
  try {
    value = trimmed === '' ? {} : JSON.parse(trimmed);
  } catch (error) {
    return { ok: false, message: `Not valid JSON: ${(error as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: 'Enter a JSON object, like {"name": "value"}' };
  }
  const obj = value as Record<string, unknown>;
  const missing = (schema?.required ?? []).filter((k) => !(k in obj));
  if (missing.length > 0) return { ok: false, message: `Missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}` };
  for (const [k, s] of properties(schema)) {
    if (!(k in obj)) continue;
    const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    if (types.length > 0 && !types.some((t) => typeMatches(obj[k], t))) {
      return { ok: false, message: `"${k}" must be ${types.join(' or ')}` };
    }
  }
  return { ok: true, value: obj };
}
