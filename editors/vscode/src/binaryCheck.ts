// resolveBinary on the real file system (with the extension's folder for the bundled binary),
// then `--version` to make sure it is mcp-sidecar.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { checkVersionOutput, resolveBinary, type BinaryEnv, type BinaryResolution } from './binary';

export function realBinaryEnv(extensionPath?: string): BinaryEnv {
  const stat = (p: string) => {
    try {
      return fs.statSync(p);
    } catch {
      return undefined;
    }
  };
  return {
    home: os.homedir(),
    searchPath: process.env.PATH ?? '',
    platform: process.platform,
    extensionPath,
    isFile: (p) => stat(p)?.isFile() ?? false,
    isDirectory: (p) => stat(p)?.isDirectory() ?? false,
    isExecutable: (p) => {
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** `extensionPath`: the extension's folder, where a platform-specific VSIX carries the binary. */
export async function findSidecar(setting: string | undefined, extensionPath?: string): Promise<BinaryResolution> {
  const found = resolveBinary(setting, realBinaryEnv(extensionPath));
  if (!found.ok) return found;
  const output = await new Promise<string>((resolve) => {
    execFile(found.path, ['--version'], { timeout: 5000 }, (error, stdout, stderr) => {
      resolve(error && !stdout ? `${stderr || error.message}` : stdout);
    });
  });
  return checkVersionOutput(found, output);
}
