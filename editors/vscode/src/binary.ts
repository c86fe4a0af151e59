// Finding the mcp-sidecar binary from the `mcpSidecar.binaryPath` setting, and saying clearly
// what is wrong (and how to fix it) when it cannot be used. The file-system look-ups are passed
// in, so the logic is unit-tested without touching the disk. The setting is the person's own
// (machine scope, read from its global value only) and is never resolved inside the workspace:
// only absolute paths, `~` and `${userHome}` (a repository cannot point it at its own file).

import * as path from 'node:path';

export const BINARY_NAME = 'mcp-sidecar';

export interface BinaryEnv {
  home: string;
  /** $PATH */
  searchPath: string;
  isFile(p: string): boolean;
  isDirectory(p: string): boolean;
  isExecutable(p: string): boolean;
}

export type BinaryResolution =
  | { ok: true; path: string }
  | { ok: false; problem: string; fix: string };

const BUILD_FIX =
  'Build it with `cargo build` (or `cargo build --release`) in the mcp-sidecar repository, then set ' +
  '"mcpSidecar.binaryPath" to the built binary (for example <repo>/target/debug/mcp-sidecar), or put mcp-sidecar on PATH.';

const ABSOLUTE_FIX = 'Use an absolute path (or one starting with ~ or ${userHome}), outside any workspace, in your User or Remote settings.';

/** `~` and `${userHome}` expanded; nothing else (no workspace variables, no relative paths). */
export function expandSetting(setting: string, env: BinaryEnv): string {
  let p = setting.trim();
  if (p === '~' || p.startsWith('~/')) p = path.join(env.home, p.slice(1));
  return p.replace(/\$\{userHome\}/g, env.home);
}

export function resolveBinary(setting: string | undefined, env: BinaryEnv): BinaryResolution {
  if (!setting || !setting.trim()) {
    // Only absolute PATH entries: a relative one ("." or "bin") would be looked up again in the
    // sidecar's working directory, a workspace folder.
    for (const dir of env.searchPath.split(path.delimiter).filter((d) => path.isAbsolute(d))) {
      const candidate = path.join(dir, BINARY_NAME);
      if (env.isFile(candidate) && env.isExecutable(candidate)) return { ok: true, path: candidate };
    }
    return { ok: false, problem: 'mcp-sidecar is not on PATH and "mcpSidecar.binaryPath" is not set', fix: BUILD_FIX };
  }
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
    candidate = path.join(candidate, BINARY_NAME);
    if (!env.isFile(candidate)) {
      return {
        ok: false,
        problem: `the folder ${expanded} (from "mcpSidecar.binaryPath") has no ${BINARY_NAME} in it`,
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
  return { ok: true, path: candidate };
}

/** Checks what `<binary> --version` printed: it must be mcp-sidecar, not some other program. */
export function checkVersionOutput(binary: string, output: string): BinaryResolution {
  const first = output.trim().split(/\r?\n/)[0] ?? '';
  if (/^mcp-sidecar\s+\d+\.\d+/.test(first)) return { ok: true, path: binary };
  return {
    ok: false,
    problem: `${binary} is not mcp-sidecar (\`--version\` printed ${first ? JSON.stringify(first.slice(0, 80)) : 'nothing'})`,
    fix: BUILD_FIX,
  };
}
