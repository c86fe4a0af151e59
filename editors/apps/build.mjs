// Bundles src/host.ts into one minified IIFE (docs/apps.md, "The bundle"). Its first line names
// the packages the bundle holds, their versions and the sha256 of package-lock.json.
// Usage: node build.mjs OUTFILE

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const outfile = process.argv[2];
if (!outfile) {
  console.error('usage: node build.mjs OUTFILE');
  process.exit(2);
}

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

// The host's version is the sidecar's (the [package] version of the repository's Cargo.toml).
const cargo = readFileSync(join(here, '../../Cargo.toml'), 'utf8');
const version = /^\[package\][^[]*?^version\s*=\s*"([^"]+)"/m.exec(cargo)?.[1];
if (!version) throw new Error('no [package] version in Cargo.toml');

const lockSha = createHash('sha256').update(readFileSync(join(here, 'package-lock.json'))).digest('hex');

// zod's namespace object holds every locale (40% of the bundle); nothing here sets one, and zod's
// default is English, so its locale index is English only.
const englishOnlyZod = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), '../locales/en.js'), namespace: 'zod-locales' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: here,
    }));
  },
};

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: ['src/host.ts'],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  sourcemap: false,
  legalComments: 'eof',
  charset: 'ascii',
  define: { __SIDECAR_VERSION__: JSON.stringify(version) },
  plugins: [englishOnlyZod],
  metafile: true,
  write: false,
  logLevel: 'warning',
});

// The packages whose files went into the bundle, by the package.json next to them.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = /^([^:]*node_modules\/)((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (m && !packages.has(m[2])) {
    packages.set(m[2], readJson(join(here, m[1], m[2], 'package.json')).version);
  }
}
const esbuildVersion = readJson(join(here, 'node_modules/esbuild/package.json')).version;
const names = [...packages].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, v]) => `${n}@${v}`);
const banner =
  `/* mcp-sidecar MCP Apps host ${version}: editors/apps/build.sh (esbuild@${esbuildVersion}) from ` +
  `${names.join(', ')}; package-lock.json sha256 ${lockSha} */\n`;

const code = result.outputFiles[0].text;
writeFileSync(outfile, banner + code);
