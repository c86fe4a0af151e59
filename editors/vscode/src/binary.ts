// Finding the mcp-sidecar binary, and saying clearly what is wrong (and how to fix it) when it
// cannot be used. The order: the `mcpSidecar.binaryPath` setting when set; else the binary bundled
// in a platform-specific VSIX (`<extension>/server/mcp-sidecar[.exe]`); else `PATH`. The
// file-system look-ups are passed in, so the logic is unit-tested without touching the disk. The
// setting is the person's own (machine scope, read from its global value only) and is never
// resolved inside the workspace: only absolute paths, `~` and `${userHome}` (a repository cannot
// point it at its own file).

import * as path from 'node:path';

export const BINARY_NAME = 'mcp-sidecar';

/** The binary's file name on a platform (`process.platform`): `mcp-sidecar.exe` on Windows. */
export function binaryFileName(platform: string): string {
  return platform === 'win32' ? `${BINARY_NAME}.exe` : BINARY_NAME;
}

/** Where a platform-specific VSIX carries the sidecar (`npm run package` puts it there). */
export function bundledBinaryPath(extensionPath: string, platform: string): string {
  return path.join(extensionPath, 'server', binaryFileName(platform));
}

export interface BinaryEnv {
  home: string;
  /** $PATH */
  searchPath: string;
  /** `process.platform` (default: not Windows). */
  platform?: string;
  /** The extension's folder (`context.extensionPath`): its bundled binary, if any, is in `server/`. */
  extensionPath?: string;
  isFile(p: string): boolean;
  isDirectory(p: string): boolean;
  isExecutable(p: string): boolean;
}

/** Where the binary came from: the setting, the extension's own bundle, or a PATH entry. */
export type BinarySource = 'setting' | 'bundled' | 'PATH';

export type BinaryResolution =
  | { ok: true; path: string; from: BinarySource }
  | { ok: false; problem: string; fix: string };

const BUILD_FIX =
  'Install the VSIX built for your platform (it carries the sidecar), or build it with `cargo build` (or `cargo build --release`) in the mcp-sidecar repository and set ' +
  '"mcpSidecar.binaryPath" to the built binary (for example <repo>/target/debug/mcp-sidecar), or put mcp-sidecar on PATH.';

const ABSOLUTE_FIX = 'Use an absolute path (or one starting with ~ or ${userHome}), outside any workspace, in your User or Remote settings.';

/** `~` and `${userHome}` expanded; nothing else (no workspace variables, no relative paths). */
export function expandSetting(setting: string, env: BinaryEnv): string {
  let p = setting.trim();
  if (p === '~' || p.startsWith('~/')) p = path.join(env.home, p.slice(1));
  return p.replace(/\$\{userHome\}/g, env.home);
}

/** Without a setting: the bundled binary (when it exists and is executable), then PATH. */
function withoutSetting(env: BinaryEnv): BinaryResolution {
  const platform = env.platform ?? '';
  let bundled = 'the extension carries no sidecar (it is not a platform-specific VSIX)';
  if (env.extensionPath) {
    const candidate = bundledBinaryPath(env.extensionPath, platform);
    if (env.isFile(candidate) && env.isExecutable(candidate)) return { ok: true, path: candidate, from: 'bundled' };
    if (env.isFile(candidate)) bundled = `the bundled ${candidate} is not executable`;
  }
  // Only absolute PATH entries: a relative one ("." or "bin") would be looked up again in the
  // sidecar's working directory, a workspace folder.
  for (const dir of env.searchPath.split(path.delimiter).filter((d) => path.isAbsolute(d))) {
    const candidate = path.join(dir, binaryFileName(platform));
    if (env.isFile(candidate) && env.isExecutable(candidate)) return { ok: true, path: candidate, from: 'PATH' };
  }
  return {
    ok: false,
    problem: `"mcpSidecar.binaryPath" is not set, ${bundled}, and mcp-sidecar is not on PATH`,
    fix: BUILD_FIX,
  };
}

export function resolveBinary(setting: string | undefined, env: BinaryEnv): BinaryResolution {
  if (!setting || !setting.trim()) return withoutSetting(env);
  const expanded = expandSetting(setting, env);
  if (expanded.includes('${')) {
    return {
      ok: false,
      problem: `"mcpSidecar.binaryPath" (${setting}) uses a variable other than \${userHome}; workspace variables are not expanded`,
      fix: ABSOLUTE_FIX,
    };
  }
  if (!path.isAbsolute(expanded)) {
    return {
      ok: false,
      problem: `"mcpSidecar.binaryPath" (${setting}) is a relative path; it is not resolved inside the workspace`,
      fix: ABSOLUTE_FIX,
    };
  }
  let candidate = expanded;
  if (env.isDirectory(candidate)) {
    candidate = path.join(candidate, binaryFileName(env.platform ?? ''));
    if (!env.isFile(candidate)) {
      return {
        ok: false,
        problem: `the folder ${expanded} (from "mcpSidecar.binaryPath") has no ${binaryFileName(env.platform ?? '')} in it`,
        fix: BUILD_FIX,
      };
    }
  }
  if (!env.isFile(candidate)) {
    return { ok: false, problem: `${candidate} (from "mcpSidecar.binaryPath") does not exist`, fix: BUILD_FIX };
  }
  if (!env.isExecutable(candidate)) {
    return { ok: false, problem: `${candidate} is not executable`, fix: `Run \`chmod +x ${candidate}\`, or point "mcpSidecar.binaryPath" at the built binary.` };
  }
  return { ok: true, path: candidate, from: 'setting' };
}

/** Checks what `<binary> --version` printed: it must be mcp-sidecar, not some other program. */
export function checkVersionOutput(found: { path: string; from: BinarySource }, output: string): BinaryResolution {
  const first = output.trim().split(/\r?\n/)[0] ?? '';
  if (/^mcp-sidecar\s+\d+\.\d+/.test(first)) return { ok: true, path: found.path, from: found.from };
  return {
    ok: false,
    problem: `${found.path} is not mcp-sidecar (\`--version\` printed ${first ? JSON.stringify(first.slice(0, 80)) : 'nothing'})`,
    fix: BUILD_FIX,
  };
}
