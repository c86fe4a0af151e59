// The VS Code platform target (vsce --target) of this machine, and where `npm run package` writes
// the VSIX for a target. Run directly, prints the host's target.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** The targets `npm run package` builds (the sidecar's release platforms). */
export const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];

export function hostTarget() {
  return `${process.platform}-${process.arch}`;
}

export function vsixPath(target) {
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', `mcp-sidecar-${target}.vsix`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(hostTarget());
