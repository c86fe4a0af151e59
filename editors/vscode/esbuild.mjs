// Bundles the extension (dist/extension.js); with --unit, the unit tests (out/unit/*.test.js);
// with --lm-provider, the test-only language-model extension (test/lm-provider/dist/extension.js).
//   node esbuild.mjs [--production] [--watch] [--unit] [--lm-provider]
import * as esbuild from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');

if (args.has('--unit')) {
  // Unit tests bundle the pure modules only: importing 'vscode' there fails the build on purpose.
  // A fresh out/unit: a stale bundle of a removed or renamed test would still run.
  rmSync('out/unit', { recursive: true, force: true });
  const entryPoints = readdirSync('test/unit')
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/unit/${f}`);
  await esbuild.build({
    entryPoints,
    outdir: 'out/unit',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
} else if (args.has('--lm-provider')) {
  await esbuild.build({
    entryPoints: ['test/lm-provider/src/extension.ts'],
    outfile: 'test/lm-provider/dist/extension.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    logLevel: 'warning',
  });
} else {
  const options = {
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: production,
    sourcemap: !production,
    logLevel: 'warning',
  };
  if (args.has('--watch')) {
    const ctx = await esbuild.context(options);
    await ctx.watch();
  } else {
    await esbuild.build(options);
  }
}
