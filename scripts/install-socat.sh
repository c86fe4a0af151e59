#!/usr/bin/env bash
# Install socat, the zero-work relay the benchmark puts between a client and a server as the
# floor of one extra process hop (benches/sidecar.rs, `small calls vs a relay floor`).
#
# Debian's package, as apt gives it (no pin beyond the distribution: a point release replaces
# the old .deb on the mirror). Tested with bookworm's socat 1.7.4.4-2; another version is
# installed with a note, not refused.
#
# Idempotent: nothing is done when socat is installed. Needs root (or sudo) only to install.
# No interactive input; safe with CI=true.
set -euo pipefail

PACKAGE=socat
TESTED=1.7.4.4-2

log() { printf '[install-socat] %s\n' "$*" >&2; }

# shellcheck source=lib/debian-packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/debian-packages.sh"
install_missing "$PACKAGE"

v=$(installed "$PACKAGE")
[ -n "$v" ] || { log "error: $PACKAGE is not installed"; exit 1; }
[ "$v" = "$TESTED" ] || log "note: $PACKAGE $v (tested with $TESTED)"
command -v socat >/dev/null || { log "error: socat is not on PATH"; exit 1; }
log "ok: $PACKAGE $v"
