#!/usr/bin/env bash
# The VS Code tier: install (pinned, cached) → typecheck + lint → unit tests → package the VSIX →
# end-to-end tests in code-server with that VSIX. Exits non-zero on any failure; the last line is
# "N passed, N failed" (each unit test and e2e scenario counts once; typecheck, lint, the sidecar
# build and packaging count as one check each).
#   editors/vscode/test/run.sh
#   MCP_SIDECAR_BIN=/path/to/mcp-sidecar editors/vscode/test/run.sh   (skip cargo build; the VSIX carries it)
#   E2E_ONLY=list_roots editors/vscode/test/run.sh                    (one e2e scenario)
set -uo pipefail

EXT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$EXT/../.." && pwd)"
LOGS="$ROOT/.cache/vscode/logs"
START=$SECONDS
passed=0
failed=0

say() { printf '[vscode] %s\n' "$*"; }
finish() {
  say "done in $((SECONDS - START))s"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
  exit $?
}

# One check: its output goes to a log, shown only when it fails.
check() { # name, command...
  local name=$1 t0=$SECONDS log="$LOGS/$1.log"
  shift
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    say "ok   $name ($((SECONDS - t0))s)"
  else
    failed=$((failed + 1))
    say "FAIL $name ($((SECONDS - t0))s); last lines of $log:"
    tail -40 "$log" | sed 's/^/    /'
  fi
}

# A step that reports its own counts on a line "…N passed, N failed" (or node's "ℹ pass N").
counted() { # name, command...
  local name=$1 t0=$SECONDS log="$LOGS/$1.log" rc p f
  shift
  "$@" >"$log" 2>&1
  rc=$?
  p=$(grep -oE '^ℹ pass [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  f=$(grep -oE '^ℹ fail [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  if [ -z "$p" ]; then
    p=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | cut -d' ' -f1)
    f=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | cut -d' ' -f3)
  fi
  p=${p:-0}
  f=${f:-0}
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1 # a crash before any count
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -eq 0 ]; then
    say "ok   $name: $p passed ($((SECONDS - t0))s)"
  else
    say "FAIL $name: $p passed, $f failed ($((SECONDS - t0))s); see $log"
    grep -E '^\[e2e\] (FAIL|     )|^✖|AssertionError|Error:' "$log" | head -40 | sed 's/^/    /'
  fi
}

mkdir -p "$LOGS"
t0=$SECONDS
if ! bash "$EXT/test/install.sh" >"$LOGS/install.log" 2>&1; then
  failed=$((failed + 1))
  say "FAIL install; last lines of $LOGS/install.log:"
  tail -40 "$LOGS/install.log" | sed 's/^/    /'
  finish
fi
say "install: $(tail -1 "$LOGS/install.log") ($((SECONDS - t0))s)"
# shellcheck disable=SC1091
. "$ROOT/.cache/vscode/env.sh"
cd "$EXT" || exit 1

if [ -z "${MCP_SIDECAR_BIN:-}" ]; then
  export MCP_SIDECAR_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/mcp-sidecar"
  check sidecar-build cargo build --locked --quiet --bin mcp-sidecar --manifest-path "$ROOT/Cargo.toml"
fi

check typecheck npm run -s typecheck # the extension, and the app view page (src/apps/webview)
check eslint npx --no-install eslint --max-warnings 0 .
counted unit npm run -s test:unit
# The VSIX for this machine carries MCP_SIDECAR_BIN (npm run package takes it instead of the
# release build): the e2e run installs it with no mcpSidecar.binaryPath, so the extension starts
# the binary it carries, a debug build by default here (fine for the tests; releases bundle
# target/release/mcp-sidecar). It is written under target/, never as dist/mcp-sidecar-<target>.vsix,
# the release package the README tells people to install.
VSIX="${CARGO_TARGET_DIR:-$ROOT/target}/vscode-test/mcp-sidecar-$(node scripts/target.mjs).vsix"
export VSIX
RELEASE_VSIX="$EXT/dist/mcp-sidecar-$(node scripts/target.mjs).vsix"
release_vsix() { stat -c '%s bytes, modified %y' "$RELEASE_VSIX" 2>/dev/null || echo absent; }
release_before=$(release_vsix)
release_untouched() {
  [ "$release_before" = "$(release_vsix)" ] && return
  echo "the test run wrote $RELEASE_VSIX (before: $release_before; after: $(release_vsix)); its VSIX belongs at $VSIX"
  return 1
}
rm -f "$VSIX"
check package npm run -s package -- --out "$VSIX"
check package-test-lm npm run -s package:test-lm
if [ -f "$VSIX" ] && [ -x "$MCP_SIDECAR_BIN" ]; then
  counted e2e node test/e2e/run.mjs
else
  failed=$((failed + 1))
  say "FAIL e2e: no VSIX or no sidecar binary to test"
fi
check release-vsix-untouched release_untouched
finish
