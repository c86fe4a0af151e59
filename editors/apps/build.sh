#!/usr/bin/env bash
# Builds src/apps/assets/host.js (docs/apps.md, "The bundle") from src/host.ts and the packages
# pinned in package-lock.json.
#   build.sh          installs the pinned packages (once per lockfile) and writes the bundle
#   build.sh --check  type-checks host.ts, rebuilds into a temp file and fails if the committed
#                     bundle differs
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bundle="$root/src/apps/assets/host.js"
cd "$here"

check=0
case "${1:-}" in
  '') ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# npm ci only when the lockfile changed since the last install.
lock_sha="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp=node_modules/.mcp-sidecar-lock-sha256
if [[ ! -f $stamp || "$(cat "$stamp")" != "$lock_sha" ]]; then
  npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error
  echo "$lock_sha" > "$stamp"
fi

if (( check )); then
  node_modules/.bin/tsc -p tsconfig.json
  tmp="$(mktemp)"
  trap 'rm -f "$tmp"' EXIT
  node build.mjs "$tmp"
  if ! cmp -s "$tmp" "$bundle"; then
    echo "src/apps/assets/host.js is not what editors/apps/build.sh builds: run editors/apps/build.sh and commit it" >&2
    exit 1
  fi
  echo "src/apps/assets/host.js is up to date"
else
  mkdir -p "$(dirname "$bundle")"
  node build.mjs "$bundle"
  echo "wrote src/apps/assets/host.js ($(wc -c < "$bundle") bytes)"
fi
