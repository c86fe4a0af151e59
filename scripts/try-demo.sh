#!/usr/bin/env bash
# The sidecar without an editor: builds it (release), starts it over stdio the way an editor does
# (this folder as the workspace, the built-in demo server configured) and walks through what a
# person meets: the servers and tools, a form answered step by step, a sampling round (the request
# draft, then the answer draft) and a plain call. scripts/lsp_session.py is the scripted editor.
#   scripts/try-demo.sh            build, then the walk-through
#   scripts/try-demo.sh --log      the same, then the sidecar's log
# MCP_SIDECAR_BIN=/path/to/mcp-sidecar skips the build and uses that binary.
set -euo pipefail
BIN="${MCP_SIDECAR_BIN:+$(realpath -- "$MCP_SIDECAR_BIN")}" # before the cd: relative to the caller
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ -z "$BIN" ]]; then
  echo "building the sidecar (cargo build --release; the first build takes a few minutes)..." >&2
  start=$SECONDS
  # cargo's own progress on stderr: a line per crate, a bar on a terminal.
  cargo build --release
  target="${CARGO_TARGET_DIR:-target}"
  [[ "$target" == /* ]] || target="$PWD/$target"
  BIN="$target/release/mcp-sidecar"
  echo "built $BIN in $((SECONDS - start))s" >&2
fi
[[ -x "$BIN" ]] || { echo "try-demo: $BIN is not an executable" >&2; exit 1; }
exec python3 scripts/lsp_session.py "$BIN" "$PWD" "$@"
