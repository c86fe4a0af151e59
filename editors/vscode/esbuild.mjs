// Bundles the extension (dist/extension.js) and an app view's page script (dist/appView.js), and
// copies the AppBridge bundle ../../src/apps/assets/host.js to dist/host.js (a --production build
// fails without it: the VSIX carries it); with --unit, the unit tests (out/unit/*.test.js);
// with --lm-provider, the test-only language-model extension (test/lm-provider/dist/extension.js).
//   node esbuild.mjs [--production] [--watch] [--unit] [--lm-provider]
import * as esbuild from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';

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
  // The webview page's script: browser code, no Node and no vscode.
  const view = {
    entryPoints: ['src/apps/webview/appView.ts'],
    outfile: 'dist/appView.js',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    minify: production,
    sourcemap: production ? false : 'inline',
    logLevel: 'warning',
  };
  const host = '../../src/apps/assets/host.js';
  if (existsSync(host)) {
    mkdirSync('dist', { recursive: true });
    copyFileSync(host, 'dist/host.js');
  } else if (production) {
    console.error(`esbuild.mjs: ${host} (the AppBridge bundle, editors/apps/build.sh) is missing; the VSIX must carry it`);
    process.exit(1);
  } else {
    console.warn(`esbuild.mjs: no ${host}: app views will not open in this build`);
  }
  if (args.has('--watch')) {
    await (await esbuild.context(options)).watch();
    await (await esbuild.context(view)).watch();
  } else {
    await Promise.all([esbuild.build(options), esbuild.build(view)]);
  }
}
