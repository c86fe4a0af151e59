#!/usr/bin/env bash
# The keyring suite (tests/it/keyring.rs) against a real freedesktop Secret Service: a private
# D-Bus session (dbus-run-session) with gnome-keyring-daemon's `secrets` component, its login
# keyring created and unlocked with an empty password, in a temporary data directory (the
# person's own keyring is never touched).
#   scripts/keyring-test.sh            the suite
#   scripts/keyring-test.sh NAME...    only its tests whose names start with NAME
# Needs scripts/install-keyring.sh's packages (with CI=true it runs that script when they are
# missing). With CI=true a keyring that cannot start is a failure; elsewhere the suite is skipped
# with a message.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

unavailable() {
  if [ "${CI:-}" = true ]; then
    echo "keyring-test: FAILED: $*" >&2
    exit 1
  fi
  echo "keyring-test: skipped: $*" >&2
  exit 0
}

have_tools() { command -v dbus-run-session && command -v gnome-keyring-daemon && command -v secret-tool; } >/dev/null
# CI installs the packages (a clean machine); elsewhere that is the person's choice.
if ! have_tools && [ "${CI:-}" = true ]; then scripts/install-keyring.sh; fi
for c in dbus-run-session gnome-keyring-daemon secret-tool; do
  command -v "$c" >/dev/null || unavailable "$c is not on PATH (scripts/install-keyring.sh installs it)"
done

# Built outside the session, so the build's time does not count against anything in it.
cargo test --locked --test it --no-run

KEYRING_TMP=$(mktemp -d)
trap 'rm -rf "$KEYRING_TMP"' EXIT
mkdir -m 0700 "$KEYRING_TMP/data" "$KEYRING_TMP/runtime" "$KEYRING_TMP/state"
export KEYRING_TMP
if [ $# -eq 0 ]; then set -- keyring::; else set -- "${@/#/keyring::}"; fi

# shellcheck disable=SC2016
dbus-run-session -- bash -euo pipefail -c '
  export XDG_DATA_HOME="$KEYRING_TMP/data" XDG_RUNTIME_DIR="$KEYRING_TMP/runtime" \
    XDG_STATE_HOME="$KEYRING_TMP/state"
  # The login keyring is created (and unlocked) with the password read from stdin: an empty line.
  if ! printf "\n" | gnome-keyring-daemon --unlock --components=secrets >/dev/null; then
    echo "keyring-test: gnome-keyring-daemon did not start" >&2
    exit 3
  fi
  # A round trip before the tests: a keyring that does not work is told apart from a failing test.
  if ! printf probe | timeout 10 secret-tool store --label=probe service mcp-sidecar-keyring-test key probe ||
     [ "$(timeout 10 secret-tool lookup service mcp-sidecar-keyring-test key probe)" != probe ]; then
    echo "keyring-test: the keyring does not store and return a secret" >&2
    exit 3
  fi
  MCP_SIDECAR_KEYRING_SESSION=1 cargo test --locked --test it -- --include-ignored "$@"
' keyring-test "$@" || {
  rc=$?
  [ "$rc" = 3 ] && unavailable "the Secret Service could not be started"
  exit "$rc"
}
