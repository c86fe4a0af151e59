#!/usr/bin/env bash
# The Neovim plugin's tests: headless Neovim 0.11 (pinned, from PyPI) drives the real plugin, the
# real built sidecar and its real demo server. Each test/spec/*_spec.lua runs in its own Neovim.
#   editors/nvim/test/run.sh                    every spec
#   editors/nvim/test/run.sh prompts draft      only specs whose name contains one of these
# Environment: MCP_SIDECAR_BIN (default: cargo build, then target/debug/mcp-sidecar),
#              NVIM (default: installed by test/install.sh), SPEC_TIMEOUT (seconds, default 90),
#              MCP_PYTHON, MCP_EVERYTHING_JS, MCP_PEERS_NODE_MODULES (default: from
#              .cache/peers/env.sh; signin_spec's and gateway_spec's Python, resources_spec's
#              server-everything and the TypeScript SDK of fixtures/node/).
#              MCP_APP_BASIC_JS, MCP_APP_NODE (apps_spec's basic app server and its Node; its cases
#              are skipped without them).
# Prints "N passed, N failed" (", N skipped" when a case was) last; exits non-zero when a test failed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
START=$SECONDS

NVIM="${NVIM:-$("$HERE/install.sh")}" || { echo "could not install Neovim"; echo "0 passed, 1 failed"; exit 1; }
if [[ -z "${MCP_SIDECAR_BIN:-}" ]]; then
  (cd "$ROOT" && cargo build --quiet) || { echo "cargo build failed"; echo "0 passed, 1 failed"; exit 1; }
  MCP_SIDECAR_BIN="$ROOT/target/debug/mcp-sidecar"
fi
export MCP_SIDECAR_BIN
# The peers of scripts/install-peers.sh: the Python SDK (signin_spec's OAuth-protected fixture,
# gateway_spec's agent), server-everything and the TypeScript SDK (resources_spec), the basic app
# server of MCP Apps and the Node it needs (apps_spec). Values already set are kept.
if [[ ( -z "${MCP_PYTHON:-}" || -z "${MCP_EVERYTHING_JS:-}" || -z "${MCP_PEERS_NODE_MODULES:-}" ||
  -z "${MCP_APP_BASIC_JS:-}" || -z "${MCP_APP_NODE:-}" ) && -f "$ROOT/.cache/peers/env.sh" ]]; then
  keep_python="${MCP_PYTHON:-}" keep_everything="${MCP_EVERYTHING_JS:-}" keep_modules="${MCP_PEERS_NODE_MODULES:-}"
  keep_app="${MCP_APP_BASIC_JS:-}" keep_app_node="${MCP_APP_NODE:-}"
  # shellcheck disable=SC1091
  . "$ROOT/.cache/peers/env.sh"
  export MCP_PYTHON="${keep_python:-${MCP_PYTHON:-}}" MCP_EVERYTHING_JS="${keep_everything:-${MCP_EVERYTHING_JS:-}}"
  export MCP_PEERS_NODE_MODULES="${keep_modules:-${MCP_PEERS_NODE_MODULES:-}}"
  export MCP_APP_BASIC_JS="${keep_app:-${MCP_APP_BASIC_JS:-}}" MCP_APP_NODE="${keep_app_node:-${MCP_APP_NODE:-}}"
fi
echo "nvim: $("$NVIM" --version | head -1), sidecar: $MCP_SIDECAR_BIN"

# stop_leftovers: after each spec, the processes it left running (its marker in their environment).
# shellcheck source=scripts/lib/tier-checks.sh
. "$ROOT/scripts/lib/tier-checks.sh"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcp-nvim-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

selected() { # spec name, then the command line's words: whether they select it
  local want name=$1; shift
  [[ $# -gt 0 ]] || return 0
  for want in "$@"; do [[ "$name" == *"$want"* ]] && return 0; done
  return 1
}

# install_spec.lua: a clone of this repository's HEAD in a plugin directory, built with the
# documented build step. Its target/ is a link to MCP_INSTALL_TARGET (default: this repository's
# target/) so that the build reuses the compiled dependencies; `cargo build --release` still runs.
if selected install "$@"; then
  export MCP_INSTALL_DIR="$WORK/plugins/mcp-sidecar"
  git clone --quiet "$ROOT" "$MCP_INSTALL_DIR" &&
    ln -s "${MCP_INSTALL_TARGET:-$ROOT/target}" "$MCP_INSTALL_DIR/target" &&
    (cd "$MCP_INSTALL_DIR" && cargo build --release --locked --quiet) ||
    echo "  the install step failed: install_spec will fail"
fi

passed=0 failed=0 skipped=0
for spec in "$HERE"/spec/*_spec.lua; do
  name="$(basename "$spec" _spec.lua)"
  if [[ $# -gt 0 ]]; then
    match=0
    for want in "$@"; do [[ "$name" == *"$want"* ]] && match=1; done
    [[ $match -eq 1 ]] || continue
  fi
  dir="$WORK/$name"
  mkdir -p "$dir/config" "$dir/state" "$dir/data" "$dir/cache"
  spec_start=$SECONDS since=$(clock_tick) marker="MCP_NVIM_TEST_SPEC=$name.$$"
  # A private HOME and XDG dirs: no personal mcp.json, logs and state stay in $dir.
  HOME="$dir" XDG_CONFIG_HOME="$dir/config" XDG_STATE_HOME="$dir/state" XDG_DATA_HOME="$dir/data" \
    XDG_CACHE_HOME="$dir/cache" MCP_TEST_SPEC="$spec" MCP_TEST_RESULTS="$dir/results" MCP_NVIM_TEST_SPEC="${marker#*=}" \
    timeout --kill-after=5 "${SPEC_TIMEOUT:-90}" \
    "$NVIM" --clean --headless -c "luafile $HERE/harness.lua" </dev/null >"$dir/output" 2>&1
  code=$?
  echo "--- $name ($((SECONDS - spec_start))s)"
  [[ -f "$dir/results" ]] && sed 's/^/  /' "$dir/results"
  p=$(grep -c '^PASS ' "$dir/results" 2>/dev/null); p=${p:-0}
  f=$(grep -c '^FAIL ' "$dir/results" 2>/dev/null); f=${f:-0}
  s=$(grep -c '^SKIP ' "$dir/results" 2>/dev/null); s=${s:-0}
  # Nothing the spec started outlives its Neovim.
  if ! left=$(stop_leftovers "$marker" "$since" ""); then
    f=$((f + 1))
    echo "  FAIL $name: left processes running after Neovim exited (stopped now):"
    echo "$left" | sed 's/^/  /'
  fi
  if [[ $code -ne 0 && $f -eq 0 ]]; then
    f=1
    echo "  FAIL $name: Neovim exited with $code (timeout or crash) after $p passed case(s)"
  fi
  if [[ $f -gt 0 || $code -ne 0 ]]; then
    echo "  --- Neovim's output:"
    tail -n 40 "$dir/output" | sed 's/^/  | /'
    log="$dir/state/nvim/mcp-sidecar.log"
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
