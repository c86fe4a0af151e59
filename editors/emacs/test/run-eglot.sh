#!/usr/bin/env bash
# eglot without mcp-sidecar's package: editors/emacs/test/eglot-plain-test.el in `emacs -Q
# --batch` (Emacs 28 with Debian's elpa-eglot 1.9, found under /usr/share/emacs/site-lisp/elpa),
# driving the real built sidecar and its demo server through plain LSP.
#   editors/emacs/test/run-eglot.sh
# Environment: MCP_SIDECAR_BIN (default: cargo build, then target/debug/mcp-sidecar), EMACS
# (default: emacs), EGLOT_TIMEOUT (seconds, default 120).
# Private HOME and XDG folders; nothing the run started outlives it. Exits non-zero when a test
# failed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
EMACS="${EMACS:-emacs}"

if [[ -z "${MCP_SIDECAR_BIN:-}" ]]; then
  (cd "$ROOT" && cargo build --quiet) || { echo "cargo build failed"; exit 1; }
  MCP_SIDECAR_BIN="$ROOT/target/debug/mcp-sidecar"
fi
export MCP_SIDECAR_BIN
if ! compgen -G "/usr/share/emacs/site-lisp/elpa/eglot-*" >/dev/null; then
  echo "eglot is not installed (Debian: apt-get install elpa-eglot)"
  exit 1
fi

# shellcheck source=scripts/lib/tier-checks.sh
. "$ROOT/scripts/lib/tier-checks.sh"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcp-eglot-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/config" "$WORK/state" "$WORK/data" "$WORK/cache"
since=$(clock_tick) marker="MCP_EGLOT_TEST=$$"
start=$SECONDS
HOME="$WORK" XDG_CONFIG_HOME="$WORK/config" XDG_STATE_HOME="$WORK/state" XDG_DATA_HOME="$WORK/data" \
  XDG_CACHE_HOME="$WORK/cache" MCP_EGLOT_TEST="$$" \
  timeout --kill-after=5 "${EGLOT_TIMEOUT:-120}" \
  "$EMACS" -Q --batch -l "$HERE/eglot-plain-test.el" -f ert-run-tests-batch-and-exit \
  </dev/null >"$WORK/output" 2>&1
code=$?
grep -E '^ +(passed|FAILED|skipped) ' "$WORK/output"
if ! left=$(stop_leftovers "$marker" "$since" ""); then
  echo "FAIL: processes left running after Emacs exited (stopped now):"
  echo "$left"
  code=1
fi
if [[ $code -ne 0 ]]; then
  echo "--- Emacs's output (last lines):"
  tail -n 60 "$WORK/output"
fi
echo "--- eglot: took $((SECONDS - start))s, exit $code"
exit "$code"
