#!/usr/bin/env bash
# Lints the plugin: stylua --check (formatting) and selene (static analysis), both pinned and
# installed from crates.io into .cache/lint on first use (about 4 minutes cold, then instant).
#   editors/nvim/test/lint.sh          check
#   editors/nvim/test/lint.sh --fix    reformat with stylua, then check
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
LINT="$ROOT/.cache/lint"
STYLUA_VERSION="2.6.0"
SELENE_VERSION="0.30.0"

install() { # crate, version, extra cargo args...
  local crate=$1 version=$2; shift 2
  local bin="$LINT/bin/$crate"
  if [[ -x "$bin" ]] && "$bin" --version 2>/dev/null | grep -q " $version\$"; then
    return
  fi
  echo "installing $crate $version from crates.io into $LINT" >&2
  # Its own target dir: never waits on the lock of the project's target/.
  CARGO_TARGET_DIR="$LINT/target" cargo install --quiet --locked --root "$LINT" \
    "$crate" --version "$version" "$@" >&2
  rm -rf "$LINT/target"
}

install stylua "$STYLUA_VERSION"
install selene "$SELENE_VERSION" --no-default-features

cd "$HERE"
FILES=(lua lsp plugin test)
if [[ "${1:-}" == "--fix" ]]; then
  "$LINT/bin/stylua" "${FILES[@]}"
fi
status=0
"$LINT/bin/stylua" --check "${FILES[@]}" || status=1
"$LINT/bin/selene" --quiet "${FILES[@]}" || status=1
if [[ $status -eq 0 ]]; then
  echo "lint: stylua and selene found nothing"
fi
exit $status
