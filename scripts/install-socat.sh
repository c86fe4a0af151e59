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

installed() { # prints the installed version or nothing
  dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$PACKAGE" 2>/dev/null | sed -n 's/^installed //p'
}

if [ -z "$(installed)" ]; then
  command -v apt-get >/dev/null || { log "error: $PACKAGE missing and there is no apt-get"; exit 1; }
  as_root=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { log "error: $PACKAGE missing; installing needs root or sudo"; exit 1; }
    as_root=(sudo -n)
  fi
  log "installing $PACKAGE"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh container has no package lists yet.
  if ! apt-cache show "$PACKAGE" >/dev/null 2>&1; then
    "${as_root[@]}" apt-get update -qq
  fi
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "$PACKAGE" >&2
fi

v=$(installed)
[ -n "$v" ] || { log "error: $PACKAGE is not installed"; exit 1; }
[ "$v" = "$TESTED" ] || log "note: $PACKAGE $v (tested with $TESTED)"
command -v socat >/dev/null || { log "error: socat is not on PATH"; exit 1; }
log "ok: $PACKAGE $v"
