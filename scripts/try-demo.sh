#!/usr/bin/env bash
# The main job on a fresh machine: build the sidecar, start it over stdio the way an editor does
# (this folder as the workspace, the built-in demo server configured), and show what it does.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --quiet
exec python3 scripts/lsp_session.py target/release/mcp-sidecar "$PWD" "$@"
