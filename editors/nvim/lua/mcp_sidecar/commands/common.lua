-- What the groups of :Mcp commands share: the workspace's sidecar for a command, and its servers.
local async = require('mcp_sidecar.async')
local client_mod = require('mcp_sidecar.client')
local exec = require('mcp_sidecar.exec')
local state = require('mcp_sidecar.state')
local util = require('mcp_sidecar.util')

local M = {}

local notify = util.notify

--- Runs `fn(client)` in a coroutine with the workspace's sidecar (started when needed).
function M.with_client(fn)
  async.run(function()
    local client, err = client_mod.ensure()
    if not client then
      notify(err, vim.log.levels.ERROR)
      return
    end
    fn(client)
  end)
end

--- The listServers rows (also kept in state.lua), nil after reporting a failure.
function M.list_servers(client)
  local rows, err = exec.run(client, exec.CMD.list_servers)
  if err then
    notify('listing servers failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
    return nil
  end
  rows = type(rows) == 'table' and rows or {}
  state.replace(client.id, rows)
  return rows
end

return M
