-- :Mcp trust [server] and :Mcp untrust [server] (servers the workspace's files define).
local common = require('mcp_sidecar.commands.common')
local config = require('mcp_sidecar.config')
local exec = require('mcp_sidecar.exec')
local state = require('mcp_sidecar.state')
local util = require('mcp_sidecar.util')

local M = {}

local notify, is_null = util.notify, util.is_null

--- Servers from the person's own config (scope "user" in the settings) never need trust.
local function user_scoped(row)
  local scopes = config.sidecar_settings().serverScopes or {}
  return row.source == 'editor settings' and scopes[row.name] == 'user'
end

--- `command` (trustServer when `trusted`, else untrustServer) for `server`; without it, for one
--- of the servers that could take the decision: those waiting for trust, or the trusted ones the
--- workspace defines.
local function set_trust(server, trusted, command)
  local verb = trusted and 'trust' or 'untrust'
  common.with_client(function(client)
    if not exec.has_command(client, command) then
      notify(('this sidecar has no %s command (it is older than workspace configuration)'):format(verb))
      return
    end
    local function apply(name)
      local result, err = exec.run(client, command, { server = name })
      if err then
        notify(verb .. ' failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
      elseif not is_null(result) then
        name = tostring(type(result) == 'table' and result.server or name)
        notify(trusted and ('trusted ' .. name) or (name .. ' is no longer trusted (stopped)'))
      end
    end
    if server then
      return apply(server)
    end
    local candidates = {}
    for _, row in ipairs(state.servers(client.id)) do
      if (row.state == 'needsTrust') == trusted and not user_scoped(row) then
        table.insert(candidates, row.name)
      end
    end
    if #candidates == 0 then
      notify(
        trusted and 'no server is waiting for trust (servers from workspace files ask when they appear)'
          or 'no trusted server is defined by the workspace'
      )
    elseif trusted and #candidates == 1 then
      apply(candidates[1])
    else
      -- Revoking stops the server: always asked, even for one.
      vim.schedule(function()
        local prompt = trusted and 'Trust which MCP server?' or 'Stop trusting which MCP server?'
        vim.ui.select(candidates, { prompt = prompt }, function(choice)
          if choice then
            vim.schedule(function()
              common.with_client(function()
                apply(choice)
              end)
            end)
          end
        end)
      end)
    end
  end)
end

function M.trust(server)
  set_trust(server, true, exec.CMD.trust_server)
end

function M.untrust(server)
  set_trust(server, false, exec.CMD.untrust_server)
end

return M
