-- :Mcp gateway: ready configurations for agents; y yanks the one under the cursor.
local binary = require('mcp_sidecar.binary')
local common = require('mcp_sidecar.commands.common')
local exec = require('mcp_sidecar.exec')
local gateway = require('mcp_sidecar.gateway')
local util = require('mcp_sidecar.util')

local M = {}

function M.show()
  common.with_client(function(client)
    local info, err = exec.run(client, exec.CMD.gateway_info)
    if err then
      util.notify('the gateway is not available: ' .. exec.error_message(err), vim.log.levels.WARN)
      return
    end
    if type(info) == 'table' then
      gateway.set(client.id, info.env)
    end
    gateway.show(binary.resolve() or 'mcp-sidecar', info)
  end)
end

return M
