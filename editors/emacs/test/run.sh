#!/usr/bin/env bash
# The Emacs package's tests: Emacs (Debian's emacs-nox, scripts/install-emacs.sh) runs each
# test/*-test.el under ERT in its own `emacs -Q --batch`, against the real built sidecar and
# its demo server, with a private HOME and XDG dirs.
#   editors/emacs/test/run.sh                 every test file
#   editors/emacs/test/run.sh form sampling   only files whose name contains one of these
# Environment: MCP_SIDECAR_BIN (default: cargo build, then target/debug/mcp-sidecar),
#              EMACS (default: installed by scripts/install-emacs.sh),
#              TEST_TIMEOUT (seconds per file, default 90).
# Prints "N passed, N failed" (", N skipped" when a test was) last; exits non-zero when a test
# failed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PACKAGE="$(cd "$HERE/.." && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
START=$SECONDS

EMACS="${EMACS:-$("$ROOT/scripts/install-emacs.sh")}" || { echo "could not install Emacs"; echo "0 passed, 1 failed"; exit 1; }
if [[ -z "${MCP_SIDECAR_BIN:-}" ]]; then
  (cd "$ROOT" && cargo build --quiet) || { echo "cargo build failed"; echo "0 passed, 1 failed"; exit 1; }
  MCP_SIDECAR_BIN="$ROOT/target/debug/mcp-sidecar"
fi
export MCP_SIDECAR_BIN
echo "emacs: $("$EMACS" --version | head -1), sidecar: $MCP_SIDECAR_BIN"

# stop_leftovers: after each file, the processes it left running (its marker in their environment).
# shellcheck source=scripts/lib/tier-checks.sh
. "$ROOT/scripts/lib/tier-checks.sh"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcp-emacs-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

passed=0 failed=0 skipped=0
for file in "$HERE"/*-test.el; do
  name="$(basename "$file" -test.el)"
  if [[ $# -gt 0 ]]; then
    match=0
    for want in "$@"; do [[ "$name" == *"$want"* ]] && match=1; done
    [[ $match -eq 1 ]] || continue
  fi
  dir="$WORK/$name"
  mkdir -p "$dir/config" "$dir/state" "$dir/data" "$dir/cache"
  file_start=$SECONDS since=$(clock_tick) marker="MCP_EMACS_TEST_FILE=$name.$$"
  # A private HOME and XDG dirs: no personal init or mcp.json; logs and state stay in $dir.
  HOME="$dir" XDG_CONFIG_HOME="$dir/config" XDG_STATE_HOME="$dir/state" XDG_DATA_HOME="$dir/data" \
    XDG_CACHE_HOME="$dir/cache" MCP_EMACS_TEST_FILE="${marker#*=}" \
    timeout --kill-after=5 "${TEST_TIMEOUT:-90}" \
    "$EMACS" -Q --batch -L "$PACKAGE" -L "$HERE" -l ert -l "$file" \
    -f ert-run-tests-batch-and-exit </dev/null >"$dir/output" 2>&1
  code=$?
  echo "--- $name ($((SECONDS - file_start))s)"
  # ERT's lines: "   passed  1/3  name (0.2 sec)", "   FAILED  2/3  name", "  skipped  3/3  name".
  grep -E '^ +(passed|FAILED|skipped) +[0-9]+/[0-9]+ ' "$dir/output" | sed 's/^ */  /'
  p=$(grep -cE '^ +passed +[0-9]+/' "$dir/output"); p=${p:-0}
  f=$(grep -cE '^ +FAILED +[0-9]+/' "$dir/output"); f=${f:-0}
  s=$(grep -cE '^ +skipped +[0-9]+/' "$dir/output"); s=${s:-0}
  # Nothing the file started outlives its Emacs.
  if ! left=$(stop_leftovers "$marker" "$since" ""); then
    f=$((f + 1))
    echo "  FAIL $name: left processes running after Emacs exited (stopped now):"
    echo "$left" | sed 's/^/  /'
  fi
  if [[ $code -ne 0 && $f -eq 0 ]]; then
    f=1
    echo "  FAIL $name: Emacs exited with $code (timeout or crash) after $p passed test(s)"
  fi
  if [[ $f -gt 0 || $code -ne 0 ]]; then
    echo "  --- Emacs's output:"
    tail -n 60 "$dir/output" | sed 's/^/  | /'
    log="$dir/.emacs.d/mcp-sidecar.log"
    if [[ -f "$log" ]]; then
      echo "  --- the sidecar's log (last lines):"
      tail -n 20 "$log" | sed 's/^/  | /'
    fi
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
done
echo "--- took $((SECONDS - START))s"
if [[ $skipped -gt 0 ]]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[[ $failed -eq 0 && $passed -gt 0 ]]
