-- :Mcp servers (the list, with keys for tools, restart, sign-in and sign-out) and :Mcp restart.
local common = require('mcp_sidecar.commands.common')
local exec = require('mcp_sidecar.exec')
local format = require('mcp_sidecar.format')
local scratch = require('mcp_sidecar.ui.scratch')
local signin = require('mcp_sidecar.commands.signin')
local tools = require('mcp_sidecar.commands.tools')
local util = require('mcp_sidecar.util')

local M = {}

local notify, is_null = util.notify, util.is_null

-- :Mcp servers ---------------------------------------------------------------------------------

local function server_lines(client, rows)
  local lines = {
    ('MCP servers of %s'):format(client.root_dir or vim.fn.getcwd()),
    '<CR> tools · r restart · s sign in · S sign out · R refresh · q close',
    '',
  }
  local at = {}
  if #rows == 0 then
    vim.list_extend(lines, {
      'No MCP servers are configured.',
      'Add some with require("mcp_sidecar").setup({ servers = { ... } }) or in',
      '~/.config/mcp-sidecar/mcp.json (see :help mcp-sidecar-servers).',
    })
  end
  for _, row in ipairs(rows) do
    local details = {}
    if not is_null(row.protocolVersion) then
      table.insert(details, 'protocol ' .. row.protocolVersion)
    end
    if not is_null(row.transport) then
      table.insert(details, row.transport)
    end
    if type(row.toolCount) == 'number' then
      table.insert(details, ('%d tool%s'):format(row.toolCount, row.toolCount == 1 and '' or 's'))
    end
    if type(row.restarts) == 'number' and row.restarts > 0 then
      table.insert(details, ('%d restart%s'):format(row.restarts, row.restarts == 1 and '' or 's'))
    end
    if not is_null(row.source) then
      table.insert(details, 'from ' .. row.source)
    end
    table.insert(
      lines,
      ('%-16s %-10s %s'):format(util.shown_name(row), row.state, table.concat(details, ' · '))
    )
    at[#lines] = row.name
    local info = row.serverInfo
    if type(info) == 'table' and info.name then
      table.insert(lines, ('    %s %s'):format(info.name, tostring(info.version or '')))
      at[#lines] = row.name
    end
    if type(row.message) == 'string' and row.message ~= '' then
      for _, line in ipairs(vim.split(row.message, '\n', { plain = true })) do
        table.insert(lines, '    ' .. line)
        at[#lines] = row.name
      end
    end
    local auth = format.auth(row.auth)
    if auth then
      table.insert(lines, '    ' .. auth)
      at[#lines] = row.name
    end
    if row.state == 'needsAuth' then
      table.insert(lines, ('    :Mcp signin %s (or s here) to sign in'):format(row.name))
      at[#lines] = row.name
    end
  end
  return lines, at
end

function M.show()
  common.with_client(function(client)
    local rows = common.list_servers(client)
    if not rows then
      return
    end
    local lines, at = server_lines(client, rows)
    local function under_cursor()
      return at[vim.api.nvim_win_get_cursor(0)[1]]
    end
    --- A key that runs `fn` on the server under the cursor, when there is one.
    local function on_server(desc, fn)
      return {
        desc = desc,
        fn = function()
          local name = under_cursor()
          if name then
            fn(name)
          end
        end,
      }
    end
    scratch.show('mcp://servers', lines, {
      filetype = 'mcp_sidecar_servers',
      keys = {
        ['<CR>'] = {
          desc = 'Tools of the server under the cursor',
          fn = function()
            tools.show(under_cursor())
          end,
        },
        r = on_server('Restart the server under the cursor', M.restart),
        s = on_server('Sign in to the server under the cursor', signin.sign_in),
        S = on_server('Sign out of the server under the cursor', signin.sign_out),
        R = { desc = 'Refresh', fn = M.show },
      },
    })
  end)
end

-- :Mcp restart [server] ------------------------------------------------------------------------

function M.restart(server)
  common.with_client(function(client)
    local result, err = exec.run(client, exec.CMD.restart_server, server and { server = server } or nil)
    if exec.is_cancelled(err) or (not err and is_null(result)) then
      notify('restart cancelled')
    elseif err then
      notify('restart failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
    else
      notify(('restarting %s'):format(tostring(result.server)))
    end
  end)
end

return M
