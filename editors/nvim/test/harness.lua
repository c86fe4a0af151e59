-- Runs one spec file inside a headless Neovim (started by test/run.sh):
--   nvim --clean --headless -c 'luafile test/harness.lua'
-- with MCP_TEST_SPEC (the spec file), MCP_TEST_RESULTS (where to write the results) and
-- MCP_SIDECAR_BIN (the built sidecar) in the environment.
local spec = assert(os.getenv('MCP_TEST_SPEC'), 'MCP_TEST_SPEC is not set')
local results_path = assert(os.getenv('MCP_TEST_RESULTS'), 'MCP_TEST_RESULTS is not set')
local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
local plugin_root = vim.fn.fnamemodify(here, ':h')

vim.opt.rtp:prepend(plugin_root)
package.path = here .. '/?.lua;' .. package.path

local T = require('helpers')
T.plugin_root = plugin_root
T.repo_root = vim.fn.fnamemodify(plugin_root, ':h:h')

local results = assert(io.open(results_path, 'w'))
local function record(line)
  results:write(line, '\n')
  results:flush()
end

local ok, err = pcall(dofile, spec)
if not ok then
  record('FAIL ' .. vim.fn.fnamemodify(spec, ':t') .. ' (loading)')
  record('  ' .. tostring(err))
  results:close()
  vim.cmd('cquit 1')
end

-- A case stuck in a blocking prompt (input(), inputlist()) would hang the file: after
-- CASE_TIMEOUT seconds CTRL-C is typed (timers still run while those prompts wait), which
-- abandons the prompt so the case fails on its own waits instead.
local case_timeout = tonumber(os.getenv('CASE_TIMEOUT') or '') or 30

local failed = 0
for _, case in ipairs(T.cases) do
  local started = vim.uv.hrtime()
  local watchdog = vim.uv.new_timer()
  local stuck = false
  watchdog:start(case_timeout * 1000, 1000, function()
    stuck = true
    vim.schedule(function()
      vim.api.nvim_feedkeys(vim.keycode('<C-c>'), 'n', false)
    end)
  end)
  local case_ok, case_err = xpcall(case.fn, debug.traceback)
  watchdog:stop()
  watchdog:close()
  if stuck then
    case_ok = false
    case_err = ('stuck for %ds (a prompt waited for keys?): %s'):format(case_timeout, tostring(case_err))
  end
  local ms = (vim.uv.hrtime() - started) / 1e6
  local cleanup_ok, cleanup_err = pcall(T.after_each)
  if case_ok and not cleanup_ok then
    case_ok, case_err = false, 'cleanup: ' .. tostring(cleanup_err)
  end
  if not case_ok and type(case_err) == 'table' and case_err.skip then
    record(('SKIP %s: %s'):format(case.name, tostring(case_err.skip)))
  elseif case_ok then
    record(('PASS %s (%.0f ms)'):format(case.name, ms))
  else
    failed = failed + 1
    record(('FAIL %s (%.0f ms)'):format(case.name, ms))
    for _, line in ipairs(vim.split(tostring(case_err), '\n')) do
      record('  ' .. line)
    end
  end
end
pcall(T.teardown)
results:close()
vim.cmd(failed == 0 and 'qall!' or 'cquit 1')
