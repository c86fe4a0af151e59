// `npm run package [-- --target <target>] [-- --out <file>]`: a platform-specific VSIX with the
// sidecar inside, at dist/mcp-sidecar-<target>.vsix (target: this machine's, e.g. linux-x64, unless
// given) or at <file> (test/run.sh puts its test build, with a debug binary, under target/, so that
// dist/ only ever holds what this command builds for people to install).
//
// The binary is $MCP_SIDECAR_BIN, else the release build ../../target/release/mcp-sidecar[.exe]
// (`cargo build --release`); for another target, build the sidecar for it and name it in
// MCP_SIDECAR_BIN. It is copied to server/mcp-sidecar[.exe] (the one thing besides the bundle that
// .vscodeignore lets in), packaged with vsce --target, and removed again. The extension finds it
// there (src/binary.ts) when mcpSidecar.binaryPath is empty.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostTarget, TARGETS, vsixPath } from './target.mjs';

const ext = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(ext, '../..');

function fail(message) {
  process.stderr.write(`npm run package: ${message}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
function option(name) {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  if (!args[at + 1] || args[at + 1].startsWith('--')) fail(`${name} needs a value`);
  return args[at + 1];
}
const target = option('--target') ?? hostTarget();
if (!TARGETS.includes(target)) fail(`unknown target "${target}"; one of: ${TARGETS.join(', ')}`);
const outOption = option('--out');
const windows = target.startsWith('win32-');
const name = windows ? 'mcp-sidecar.exe' : 'mcp-sidecar';

let binary = process.env.MCP_SIDECAR_BIN;
if (!binary) {
  if (target !== hostTarget()) {
    fail(`for ${target} (this machine is ${hostTarget()}) build the sidecar for it and name the binary in MCP_SIDECAR_BIN (see docs/vscode.md)`);
  }
  binary = join(repo, 'target', 'release', name);
  if (!existsSync(binary)) fail(`no sidecar binary at ${binary}: run \`cargo build --release\` in ${repo} first (or set MCP_SIDECAR_BIN)`);
}
binary = resolve(binary);
if (!existsSync(binary) || !statSync(binary).isFile()) fail(`MCP_SIDECAR_BIN=${binary} is not a file`);
if (windows !== binary.toLowerCase().endsWith('.exe')) {
  fail(`${binary} does not look like a ${target} binary (${windows ? 'Windows binaries end in .exe' : 'only Windows binaries end in .exe'})`);
}
if (target === hostTarget()) {
  // The host can run it: make sure it is the sidecar, not some other program.
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 10000 }).trim().split('\n')[0];
  if (!/^mcp-sidecar \d+\.\d+/.test(version)) fail(`${binary} is not mcp-sidecar (--version printed ${JSON.stringify(version)})`);
}

const server = join(ext, 'server');
const out = outOption ? resolve(outOption) : vsixPath(target);
rmSync(server, { recursive: true, force: true });
mkdirSync(server, { recursive: true });
mkdirSync(dirname(out), { recursive: true });
try {
  copyFileSync(binary, join(server, name));
  chmodSync(join(server, name), 0o755);
  const vsce = join(dirname(createRequire(import.meta.url).resolve('@vscode/vsce/package.json')), 'vsce');
  execFileSync(
    process.execPath,
    [vsce, 'package', '--target', target, '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', out],
    { cwd: ext, stdio: 'inherit' },
  );
} finally {
  rmSync(server, { recursive: true, force: true });
}
const shown = relative(process.cwd(), out).startsWith('..') ? out : relative(process.cwd(), out);
console.log(`${shown}: ${target}, sidecar from ${binary} (${(statSync(out).size / 1048576).toFixed(1)} MiB)`);
