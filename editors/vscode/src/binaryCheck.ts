// resolveBinary on the real file system, then `--version` to make sure it is mcp-sidecar.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { checkVersionOutput, resolveBinary, type BinaryEnv, type BinaryResolution } from './binary';

export function realBinaryEnv(): BinaryEnv {
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

export async function findSidecar(setting: string | undefined): Promise<BinaryResolution> {
  const found = resolveBinary(setting, realBinaryEnv());
  if (!found.ok) return found;
  const output = await new Promise<string>((resolve) => {
    execFile(found.path, ['--version'], { timeout: 5000 }, (error, stdout, stderr) => {
      resolve(error && !stdout ? `${stderr || error.message}` : stdout);
    });
  });
  return checkVersionOutput(found.path, output);
}
