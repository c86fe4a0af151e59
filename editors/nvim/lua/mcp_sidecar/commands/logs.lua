-- :Mcp log (the sidecar's own log) and :Mcp sampling-log (its audit log of sampling requests).
local common = require('mcp_sidecar.commands.common')
local config = require('mcp_sidecar.config')
local exec = require('mcp_sidecar.exec')
local util = require('mcp_sidecar.util')

local M = {}

local notify = util.notify

function M.log()
  -- With log_file = false the sidecar's stderr is in Neovim's own LSP log.
  local path = config.log_file() or vim.lsp.get_log_path()
  if not vim.uv.fs_stat(path) then
    notify('no log yet at ' .. path .. ' (the sidecar has not started)', vim.log.levels.WARN)
    return
  end
  vim.cmd(config.get().ui.split .. ' ' .. vim.fn.fnameescape(path))
  vim.bo.readonly = true
  vim.bo.autoread = true
  vim.cmd('normal! G')
end

function M.sampling_log()
  common.with_client(function(client)
    -- The sidecar asks Neovim to show the file (window/showDocument).
    local result, err = exec.run(client, exec.CMD.open_sampling_log)
    if err then
      notify('opening the sampling log failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
    elseif type(result) == 'table' and result.opened == false then
      notify('could not open the sampling log ' .. tostring(result.path), vim.log.levels.WARN)
    end
  end)
end

return M
