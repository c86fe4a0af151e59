-- Finding (or starting) the sidecar for the current workspace, and calling its commands.
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

local progress_count = 0

M.CANCELLED = -32800

--- Neovim drops responses with the error code RequestCancelled (-32800) without calling the
--- handler: it takes them for acknowledgements of its own $/cancelRequest. The sidecar also
--- answers -32800 when the person dismissed a question it asked during the command, so the
--- request's completion is watched (LspRequest) and reported as cancelled when no answer follows.
local function on_swallowed(client, request_id, done)
  vim.api.nvim_create_autocmd('LspRequest', {
    callback = function(args)
      local data = args.data or {}
      local request = data.request or {}
      if data.client_id ~= client.id or data.request_id ~= request_id then
        return false
      end
      if request.type == 'complete' or request.type == 'cancel' then
        vim.schedule(function()
          done(nil, { code = M.CANCELLED, message = 'cancelled', data = { kind = 'cancelled' } })
        end)
        return true
      end
      return false
    end,
  })
end

--- Runs a `workspace/executeCommand` and returns (result, err). Inside async.run() only.
---@param opts? { progress?: boolean, on_request?: fun(request_id: integer) }
function M.exec(client, command, argument, opts)
  opts = opts or {}
  return async.wait(function(done)
    local params = { command = command, arguments = { argument or vim.empty_dict() } }
    if opts.progress then
      progress_count = progress_count + 1
      params.workDoneToken = ('mcp-sidecar-%d'):format(progress_count)
    end
    local ok, request_id = client:request('workspace/executeCommand', params, function(err, result)
      done(result, err)
    end, vim.api.nvim_get_current_buf())
    if not ok then
      done(nil, { message = 'the sidecar has stopped' })
      return
    end
    on_swallowed(client, request_id, done)
    if opts.on_request then
      opts.on_request(request_id)
    end
  end)
end

--- True for the error of a command the person (or the editor) cancelled.
function M.is_cancelled(err)
  return type(err) == 'table' and (err.code == M.CANCELLED or vim.tbl_get(err, 'data', 'kind') == 'cancelled')
end

--- An LSP error as one sentence, with its `data.kind` when there is one.
function M.error_message(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local message = tostring(err.message or 'error')
  local kind = type(err.data) == 'table' and err.data.kind or nil
  if kind and kind ~= vim.NIL then
    message = message .. ' [' .. tostring(kind) .. ']'
  end
  return message
end

--- Whether the sidecar advertises a command (for commands that land later, like trustServer).
function M.has_command(client, command)
  local commands = vim.tbl_get(client.server_capabilities or {}, 'executeCommandProvider', 'commands')
  return type(commands) == 'table' and vim.tbl_contains(commands, command)
end

return M
