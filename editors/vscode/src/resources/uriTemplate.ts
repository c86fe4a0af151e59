// RFC 6570 URI templates as resource templates use them: level 1 (`{var}`, the value
// percent-encoded except for unreserved characters) and the reserved expansion of level 2
// (`{+var}`, reserved characters such as `/` kept), one variable per expression. Anything else is
// a malformed or unsupported pattern, reported with the reason. Pure.

export type TemplatePart = { literal: string } | { variable: string; reserved: boolean };

export interface ParsedTemplate {
  parts: TemplatePart[];
  /** The variables in order of first appearance. */
  variables: string[];
}

const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;

export function parseTemplate(template: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  const variables: string[] = [];
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf('{');
    const close = rest.indexOf('}');
    if (close !== -1 && (open === -1 || close < open)) throw new Error(`"}" without "{" in ${template}`);
    if (open === -1) {
      parts.push({ literal: rest });
      break;
    }
    if (open > 0) parts.push({ literal: rest.slice(0, open) });
    if (close === -1) throw new Error(`"{" without "}" in ${template}`);
    let expression = rest.slice(open + 1, close);
    if (expression.includes('{')) throw new Error(`nested "{" in ${template}`);
    const reserved = expression.startsWith('+');
    if (reserved) expression = expression.slice(1);
    if (/^[#./;?&=,!@|]/.test(expression)) {
      throw new Error(`the expression {${rest.slice(open + 1, close)}} of ${template} is not supported (only {name} and {+name})`);
    }
    if (expression.includes(',') || expression.includes(':') || expression.endsWith('*')) {
      throw new Error(`the expression {${rest.slice(open + 1, close)}} of ${template} is not supported (one variable, no modifiers)`);
    }
    if (!VARNAME.test(expression)) throw new Error(`"${expression}" is not a variable name (in ${template})`);
    parts.push({ variable: expression, reserved });
    if (!variables.includes(expression)) variables.push(expression);
    rest = rest.slice(close + 1);
  }
  return { parts, variables };
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encode(value: string, reserved: boolean): string {
  let out = '';
  for (const ch of value) {
    if (UNRESERVED.test(ch) || (reserved && RESERVED.test(ch))) out += ch;
    else out += [...new TextEncoder().encode(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

/** The template with each variable's value (missing ones expand to nothing, as RFC 6570 says). */
export function expandTemplate(template: string | ParsedTemplate, values: Record<string, string>): string {
  const parsed = typeof template === 'string' ? parseTemplate(template) : template;
  return parsed.parts
    .map((p) => ('literal' in p ? p.literal : encode(values[p.variable] ?? '', p.reserved)))
    .join('');
}
