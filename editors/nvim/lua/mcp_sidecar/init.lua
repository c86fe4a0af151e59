-- mcp-sidecar for Neovim: makes Neovim a full MCP client through the mcp-sidecar language server.
-- No setup() is needed; it only changes options (see :help mcp-sidecar-options).
local config = require('mcp_sidecar.config')
local lsp_config = require('mcp_sidecar.lsp_config')

local M = {}

local auto_enabled = false

--- Enables the sidecar for file buffers when `autostart` is on (called by plugin/mcp_sidecar.lua).
function M.autostart()
  local opts = config.get()
  if opts.autostart and not auto_enabled then
    auto_enabled = true
    vim.lsp.enable(lsp_config.name)
  elseif not opts.autostart and auto_enabled then
    auto_enabled = false
    vim.lsp.enable(lsp_config.name, false)
  end
end

--- Sets options (validated; problems are reported with vim.notify and in :checkhealth). Running
--- sidecars get the new settings through workspace/didChangeConfiguration.
function M.setup(opts)
  local problems = config.set(opts or {})
  for _, problem in ipairs(problems) do
    vim.notify('mcp-sidecar: setup(): ' .. problem, vim.log.levels.WARN)
  end
  M.autostart()
  local settings = config.sidecar_settings()
  for _, client in ipairs(require('mcp_sidecar.client').all()) do
    client:notify('workspace/didChangeConfiguration', {
      settings = next(settings) ~= nil and settings or vim.empty_dict(),
    })
  end
end

--- Statusline text, e.g. "MCP 2/3 ✗1" (running/configured, then failed …). Empty when nothing is
--- configured or no sidecar runs.
function M.status()
  return require('mcp_sidecar.state').status()
end

--- Every known server: { name, state, protocolVersion?, source?, message?, client_id }.
function M.servers()
  return require('mcp_sidecar.state').servers()
end

--- The running sidecar client of the current workspace (vim.lsp.Client), if any.
function M.client()
  return require('mcp_sidecar.client').get()
end

return M
