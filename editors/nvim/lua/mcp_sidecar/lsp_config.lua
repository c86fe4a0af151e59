-- The vim.lsp config of the sidecar (what `lsp/mcp_sidecar.lua` returns). Everything that depends
-- on the options is read when the sidecar starts, so setup() may run before or after it is loaded.
local binary = require('mcp_sidecar.binary')
local config = require('mcp_sidecar.config')

local M = {}

M.name = 'mcp_sidecar'

--- What this editor implements of the contract (capabilities.experimental.mcpSidecar).
M.editor_capabilities = {
  inputBox = true,
  quickPick = true,
  editDraft = true,
  clipboard = true,
  languageModel = false,
  -- The settings carry serverScopes (see config.sidecar_settings).
  serverScopes = true,
  -- An MCP App's view opens in the browser: the sidecar sends its loopback page (showDocument).
  openApp = false,
}

--- Contract methods and commands this plugin deliberately leaves out, each with the reason
--- (tests/it/contract_docs.rs checks that everything else has a handler or a :Mcp subcommand).
M.not_offered = {
  ['mcp-sidecar/languageModel'] = 'Neovim has no language-model API of its own; sampling answers are written in the answer draft or come from the OpenAI-compatible provider of the sidecar',
  ['mcp-sidecar/openApp'] = 'Neovim cannot host a web page: an MCP App view opens in the browser, on the loopback page the sidecar sends with window/showDocument',
  ['mcp-sidecar.appRequest'] = 'the loopback page in the browser sends the messages of the app to the sidecar itself; no view runs inside Neovim',
}

local warned = {}
local function warn_once(message)
  if warned[message] then
    return
  end
  warned[message] = true
  vim.schedule(function()
    vim.notify('mcp-sidecar: ' .. message, vim.log.levels.WARN)
  end)
end

--- True for buffers that are files (not help, terminals, drafts or other scheme:// buffers).
function M.is_file_buffer(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return false
  end
  return not vim.api.nvim_buf_get_name(bufnr):match('^%a[%w+.-]+://')
end

--- The workspace of a buffer: the nearest parent holding one of `root_markers`, else the cwd.
function M.root(bufnr)
  local opts = config.get()
  local root
  if bufnr and M.is_file_buffer(bufnr) and vim.api.nvim_buf_get_name(bufnr) ~= '' then
    root = vim.fs.root(bufnr, opts.root_markers)
  end
  return vim.fs.normalize(root or vim.fn.getcwd())
end

local function folder(path)
  path = vim.fs.normalize(vim.fn.fnamemodify(vim.fs.normalize(path), ':p'))
  if #path > 1 then
    path = path:gsub('/$', '')
  end
  return { uri = vim.uri_from_fname(path), name = path }
end

--- Extra workspace folders from the options, as LSP WorkspaceFolders.
function M.extra_folders()
  local out = {}
  for _, path in ipairs(config.get().workspace_folders or {}) do
    table.insert(out, folder(path))
  end
  return out
end

local function add_missing(list, folders)
  for _, f in ipairs(folders) do
    local present = false
    for _, g in ipairs(list) do
      present = present or g.uri == f.uri
    end
    if not present then
      table.insert(list, f)
    end
  end
end

--- The config table for vim.lsp.config('mcp_sidecar', ...).
function M.config()
  return {
    cmd = function(dispatchers, cfg)
      local argv, err = binary.command()
      if not argv then
        error('mcp-sidecar: ' .. err, 0)
      end
      -- The gateway variables Neovim has (this plugin's, for its terminals, or an outer editor's)
      -- are not this sidecar's: blanked (an empty value is unset for `mcp-sidecar gateway`), so
      -- neither it nor its servers see another gateway's secret.
      local env = cfg.cmd_env
      for _, name in ipairs({ 'MCP_SIDECAR_GATEWAY', 'MCP_SIDECAR_GATEWAY_TOKEN' }) do
        if vim.env[name] then
          env = vim.tbl_extend('force', env or {}, { [name] = (env or {})[name] or '' })
        end
      end
      return vim.lsp.rpc.start(argv, dispatchers, {
        cwd = cfg.cmd_cwd or cfg.root_dir,
        env = env,
        detached = cfg.detached,
      })
    end,
    -- Attach to file buffers only; one sidecar per workspace root.
    root_dir = function(bufnr, on_dir)
      if not M.is_file_buffer(bufnr) then
        return
      end
      local _, err = binary.resolve()
      if err then
        warn_once(err .. ' (see :checkhealth mcp_sidecar)')
        return
      end
      on_dir(M.root(bufnr))
    end,
    workspace_required = false,
    capabilities = { experimental = { mcpSidecar = vim.deepcopy(M.editor_capabilities) } },
    handlers = vim.deepcopy(require('mcp_sidecar.handlers')),
    before_init = function(params)
      local settings = config.sidecar_settings()
      params.initializationOptions = next(settings) ~= nil and settings or vim.empty_dict()
      local extra = M.extra_folders()
      if #extra > 0 then
        params.workspaceFolders = params.workspaceFolders ~= vim.NIL and params.workspaceFolders or {}
        add_missing(params.workspaceFolders, extra)
      end
    end,
    on_init = function(client)
      client.workspace_folders = client.workspace_folders or {}
      add_missing(client.workspace_folders, M.extra_folders())
    end,
    on_exit = function(_, _, client_id)
      vim.schedule(function()
        require('mcp_sidecar.state').clear(client_id)
        require('mcp_sidecar.prompts').cancel_all(client_id)
        require('mcp_sidecar.resources').forget(client_id)
        require('mcp_sidecar.gateway').clear(client_id)
        require('mcp_sidecar.views').forget(client_id)
        require('mcp_sidecar.tasks').clear(client_id)
      end)
    end,
  }
end

return M
