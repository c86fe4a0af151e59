// Imported first by host.ts: zod decides at each schema's creation whether to compile a parser
// with `new Function`, which the page CSP (no 'unsafe-eval') refuses with a violation report.
// jitless makes it never try.
import { config } from 'zod/v4/core';

config({ jitless: true });
