#!/usr/bin/env bash
# Install Emacs (no X) and the two LSP clients people pair it with, for the Emacs package's tests
# (editors/emacs/test/run.sh): emacs-nox, elpa-eglot, elpa-lsp-mode.
#
# Debian's packages, as apt gives them (no pin beyond the distribution: a point release replaces
# the old .deb on the mirror). Tested with bookworm's emacs-nox 1:28.2+1-15+deb12u4, elpa-eglot
# 1.9-2 and elpa-lsp-mode 8.0.0-5; another version is installed with a note, not refused.
#
# Idempotent: nothing is done when they are installed. Needs root (or sudo) only to install.
# No interactive input; safe with CI=true. Prints the emacs executable's path on stdout.
set -euo pipefail

declare -A TESTED=(
  [emacs-nox]='1:28.2+1-15+deb12u4'
  [elpa-eglot]='1.9-2'
  [elpa-lsp-mode]='8.0.0-5'
)
PACKAGES=(emacs-nox elpa-eglot elpa-lsp-mode)

log() { printf '[install-emacs] %s\n' "$*" >&2; }

# shellcheck source=lib/debian-packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/debian-packages.sh"
install_missing "${PACKAGES[@]}"

for p in "${PACKAGES[@]}"; do
  v=$(installed "$p")
  [ -n "$v" ] || { log "error: $p is not installed"; exit 1; }
  [ "$v" = "${TESTED[$p]}" ] || log "note: $p $v (tested with ${TESTED[$p]})"
done
emacs=$(command -v emacs) || { log "error: emacs is not on PATH"; exit 1; }
"$emacs" -Q --batch --eval '(unless (>= emacs-major-version 28) (kill-emacs 1))' ||
  { log "error: $emacs is older than Emacs 28"; exit 1; }
echo "$emacs"
