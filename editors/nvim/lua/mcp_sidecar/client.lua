-- Finding (or starting) the sidecar for the current workspace (exec.lua sends its commands).
local async = require('mcp_sidecar.async')
local binary = require('mcp_sidecar.binary')
local lsp_config = require('mcp_sidecar.lsp_config')

local M = {}

local function clients(filter)
  return vim.lsp.get_clients(vim.tbl_extend('force', { name = lsp_config.name }, filter or {}))
end

--- The running sidecar for a buffer (default: current): the one attached to it, else the one of
--- its workspace, else any.
function M.get(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local attached = clients({ bufnr = bufnr })
  if attached[1] then
    return attached[1]
  end
  local all = clients()
  local root = lsp_config.root(bufnr)
  for _, client in ipairs(all) do
    if client.root_dir == root then
      return client
    end
  end
  return all[1]
end

--- Every running sidecar.
function M.all()
  return clients()
end

--- The config vim.lsp resolves for `mcp_sidecar` (lsp/mcp_sidecar.lua + vim.lsp.config() calls).
function M.resolved_config()
  local ok, cfg = pcall(function()
    return vim.lsp.config[lsp_config.name]
  end)
  if not ok or type(cfg) ~= 'table' then
    cfg = lsp_config.config()
    cfg.name = lsp_config.name
  end
  return vim.deepcopy(cfg)
end

--- Returns the initialized sidecar of the current workspace, starting it when needed.
--- Must run inside async.run(). Returns nil and the reason on failure.
function M.ensure(timeout_ms)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.get(bufnr)
  if not client then
    local _, err = binary.command()
    if err then
      return nil, err
    end
    local cfg = M.resolved_config()
    cfg.root_dir = lsp_config.root(bufnr)
    local attach = lsp_config.is_file_buffer(bufnr) and vim.api.nvim_buf_get_name(bufnr) ~= ''
    local id = vim.lsp.start(cfg, { bufnr = bufnr, attach = attach })
    client = id and vim.lsp.get_client_by_id(id)
    if not client then
      return nil, 'could not start the sidecar (see :checkhealth mcp_sidecar)'
    end
  end
  local deadline = vim.uv.now() + (timeout_ms or 20000)
  while not client.initialized do
    if client:is_stopped() then
      return nil, 'the sidecar exited during start-up (see :Mcp log)'
    end
    if vim.uv.now() > deadline then
      return nil, 'the sidecar did not finish initializing'
    end
    async.sleep(20)
  end
  return client
end

return M
