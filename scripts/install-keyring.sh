#!/usr/bin/env bash
# Install a real freedesktop Secret Service for the keyring test (scripts/keyring-test.sh):
#   gnome-keyring     the daemon (its `secrets` component is the Secret Service)
#   libsecret-tools   `secret-tool`, the command the sidecar stores grants with
#   dbus-x11          `dbus-launch` (dbus-run-session itself comes with dbus)
#
# Debian's packages, as apt gives them (no pin beyond the distribution: a point release replaces
# the old .deb on the mirror). Tested with bookworm's gnome-keyring 42.1-1+b2, libsecret-tools
# 0.20.5-3, dbus-x11 1.14.10-1~deb12u1; other versions are installed with a note, not refused.
#
# Idempotent: nothing is done when all three are installed. Needs root (or sudo) only to install.
# No interactive input; safe with CI=true.
set -euo pipefail

PACKAGES=(gnome-keyring libsecret-tools dbus-x11)
declare -A TESTED=([gnome-keyring]=42.1-1+b2 [libsecret-tools]=0.20.5-3 [dbus-x11]=1.14.10-1~deb12u1)

log() { printf '[install-keyring] %s\n' "$*" >&2; }

# shellcheck source=lib/debian-packages.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/debian-packages.sh"
install_missing "${PACKAGES[@]}"

for p in "${PACKAGES[@]}"; do
  v=$(installed "$p")
  [ -n "$v" ] || { log "error: $p is not installed"; exit 1; }
  [ "$v" = "${TESTED[$p]}" ] || log "note: $p $v (tested with ${TESTED[$p]})"
done
for c in secret-tool gnome-keyring-daemon dbus-run-session; do
  command -v "$c" >/dev/null || { log "error: $c not on PATH after the install"; exit 1; }
done
log "ok: $(for p in "${PACKAGES[@]}"; do printf '%s %s  ' "$p" "$(installed "$p")"; done)"
