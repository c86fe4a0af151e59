-- :checkhealth mcp_sidecar with a working setup, then with a missing binary.
local T = require('helpers')

local function grep(lines, prefix)
  return vim.tbl_filter(function(l)
    return vim.startswith(vim.trim(l), prefix)
  end, lines)
end

T.test('a working setup: binary and version, Neovim, attached, servers running, no errors', function()
  T.start_sidecar()
  local lines = T.health_lines()
  local text = table.concat(lines, '\n')
  T.contains(text, '- ✅ OK found ' .. T.bin)
  T.contains(text, '- ✅ OK version: mcp-sidecar ')
  T.contains(text, '- ✅ OK Neovim 0.11')
  T.contains(text, '- ✅ OK options are valid')
  T.contains(text, '- ✅ OK attached (client ')
  T.contains(text, '- ✅ OK editor contract version 1')
  T.contains(text, '- ✅ OK server demo: running')
  T.eq({}, grep(lines, '- ❌ ERROR'), 'no errors')
end)

T.test('a missing binary is a clear error with the fix', function()
  require('mcp_sidecar').setup({ cmd = '/nonexistent/bin/mcp-sidecar' })
  local lines = T.health_lines()
  local errors = grep(lines, '- ❌ ERROR')
  T.eq(1, #errors, table.concat(lines, '\n'))
  T.contains(errors[1], '/nonexistent/bin/mcp-sidecar does not exist')
  T.contains(lines, 'setup({ cmd = "/path/to/mcp-sidecar" })', 'the fix is shown')
end)

T.test(':Mcp with a missing binary says what is wrong and how to fix it', function()
  for _, client in ipairs(vim.lsp.get_clients({ name = 'mcp_sidecar' })) do
    client:stop(true)
  end
  T.wait(function()
    return #vim.lsp.get_clients({ name = 'mcp_sidecar' }) == 0
  end, 'the sidecar to stop')
  vim.cmd('Mcp servers')
  local n = T.wait_notification('does not exist')
  T.eq(vim.log.levels.ERROR, n.level)
  T.contains(n.message, '/nonexistent/bin/mcp-sidecar does not exist; fix `cmd`')
end)

T.test('not on PATH: says so and how to fix it', function()
  require('mcp_sidecar').setup({ cmd = 'mcp-sidecar-not-installed' })
  local errors = grep(T.health_lines(), '- ❌ ERROR')
  T.contains(errors[1], '`mcp-sidecar-not-installed` is not on PATH')
end)

T.test('bad options are reported', function()
  require('mcp_sidecar').setup({ cmd = T.bin, autostart = 'yes', colour = 'blue' })
  local lines = T.health_lines()
  local text = table.concat(grep(lines, '- ❌ ERROR'), '\n')
  T.contains(text, 'setup(): option `autostart` must be a boolean, got string')
  T.contains(text, 'setup(): unknown option `colour` (ignored)')
end)
