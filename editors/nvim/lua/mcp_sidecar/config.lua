-- Options: defaults, validation with clear messages, and the merged view the other modules read.
-- Options come from `vim.g.mcp_sidecar` (a table, no setup needed) and `setup()`; setup wins.
local M = {}

M.defaults = {
  -- The sidecar: a path or a name on PATH, or a list (argv prefix, e.g. { 'mcp-sidecar', 'lsp' }).
  cmd = 'mcp-sidecar',
  -- Log file of the sidecar (never its stdout: that is the LSP channel). `false`: stderr, which
  -- Neovim copies into its own LSP log.
  log_file = nil, -- nil = stdpath('log') .. '/mcp-sidecar.log'
  log_level = nil, -- RUST_LOG-style filter, e.g. 'debug' or 'mcp_sidecar=debug'
  -- MCP servers, in the VS Code mcp.json shape: { name = { command = ..., args = {...} } }.
  servers = {},
  -- Any other sidecar settings (`roots`, `maxRestarts`, ...), see docs/configuration.md.
  settings = {},
  -- How a buffer's workspace is found: the nearest parent with one of these, else the cwd.
  root_markers = { '.git' },
  -- Extra folders given to the sidecar as workspace folders (and so as MCP roots) at start.
  workspace_folders = {},
  -- Start the sidecar for file buffers (through vim.lsp.enable) as soon as the plugin loads.
  autostart = true,
  -- `:Mcp call` without arguments: 'sidecar' sends the call without arguments and the sidecar
  -- asks for them from the tool's schema (one prompt per argument, or a JSON draft); 'prompt'
  -- asks here for the whole JSON object in one vim.ui.input.
  tool_arguments = 'sidecar',
  ui = {
    -- Ex command that opens a split for drafts and result buffers.
    split = 'botright split',
    -- Border of the multi-select window (see 'winborder' / nvim_open_win()).
    border = 'rounded',
  },
}

local schema = {
  cmd = { 'string', 'table' },
  log_file = { 'string', 'boolean', 'nil' },
  log_level = { 'string', 'nil' },
  servers = { 'table' },
  settings = { 'table' },
  root_markers = { 'table' },
  workspace_folders = { 'table' },
  autostart = { 'boolean' },
  tool_arguments = { 'string' },
  ui = { 'table' },
}

local ui_schema = { split = { 'string' }, border = { 'string', 'table' } }

local user = {} -- what setup() was given (as given: problems are reported from it)
local problems = {} -- messages from the last validation

local function type_list(types)
  return table.concat(
    vim.tbl_filter(function(t)
      return t ~= 'nil'
    end, types),
    ' or '
  )
end

local function check(tbl, sch, prefix, out)
  for key, value in pairs(tbl) do
    local types = sch[key]
    if type(key) ~= 'string' or not types then
      table.insert(out, ('unknown option `%s%s` (ignored)'):format(prefix, tostring(key)))
      tbl[key] = nil
    elseif not vim.tbl_contains(types, type(value)) then
      table.insert(
        out,
        ('option `%s%s` must be a %s, got %s'):format(prefix, key, type_list(types), type(value))
      )
      tbl[key] = nil
    end
  end
end

local function is_string_list(value)
  if type(value) ~= 'table' then
    return false
  end
  for i, v in pairs(value) do
    if type(i) ~= 'number' or type(v) ~= 'string' then
      return false
    end
  end
  return true
end

--- Validates `opts` (a copy is changed: bad values are dropped). Returns the clean copy and the
--- list of problems, each a sentence.
function M.validate(opts)
  local out = {}
  if opts == nil then
    return {}, out
  end
  if type(opts) ~= 'table' then
    return {}, { ('options must be a table, got %s'):format(type(opts)) }
  end
  opts = vim.deepcopy(opts)
  check(opts, schema, '', out)
  if type(opts.ui) == 'table' then
    check(opts.ui, ui_schema, 'ui.', out)
  end
  if opts.cmd ~= nil and type(opts.cmd) == 'table' and (not is_string_list(opts.cmd) or #opts.cmd == 0) then
    table.insert(out, 'option `cmd` must be a path or a non-empty list of strings')
    opts.cmd = nil
  end
  for _, key in ipairs({ 'root_markers', 'workspace_folders' }) do
    if opts[key] ~= nil and not is_string_list(opts[key]) then
      table.insert(out, ('option `%s` must be a list of strings'):format(key))
      opts[key] = nil
    end
  end
  if opts.log_file == true then
    table.insert(out, 'option `log_file` must be a path or false')
    opts.log_file = nil
  end
  if opts.tool_arguments ~= nil and opts.tool_arguments ~= 'prompt' and opts.tool_arguments ~= 'sidecar' then
    table.insert(out, "option `tool_arguments` must be 'prompt' or 'sidecar'")
    opts.tool_arguments = nil
  end
  if type(opts.servers) == 'table' then
    for name, server in pairs(opts.servers) do
      if type(name) ~= 'string' then
        table.insert(out, 'option `servers` must map names to server definitions')
      elseif type(server) ~= 'table' then
        table.insert(out, ('server `%s` must be a table, got %s'):format(name, type(server)))
        opts.servers[name] = nil
      elseif server.command == nil and server.url == nil then
        table.insert(out, ('server `%s` needs `command` (stdio) or `url` (HTTP)'):format(name))
      end
    end
  end
  return opts, out
end

--- Stores setup()'s options. Returns the problems found in them.
function M.set(opts)
  local _, found = M.validate(opts)
  user = opts or {}
  return found
end

--- The options in force: defaults < vim.g.mcp_sidecar < setup().
function M.get()
  local from_g, found_g = M.validate(vim.g.mcp_sidecar)
  local from_user, found_user = M.validate(user)
  problems = {}
  for _, p in ipairs(found_g) do
    table.insert(problems, 'vim.g.mcp_sidecar: ' .. p)
  end
  for _, p in ipairs(found_user) do
    table.insert(problems, 'setup(): ' .. p)
  end
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), from_g, from_user)
  -- Lists replace, they are not merged index by index.
  for _, key in ipairs({ 'cmd', 'root_markers', 'workspace_folders' }) do
    local v = from_user[key]
    if v == nil then
      v = from_g[key]
    end
    if v ~= nil then
      merged[key] = vim.deepcopy(v)
    end
  end
  return merged
end

--- Problems of the options in force (for :checkhealth).
function M.problems()
  M.get()
  return vim.deepcopy(problems)
end

--- The sidecar settings sent as initializationOptions: `settings` plus `servers`, and
--- `serverScopes` naming every server "user": they come from the person's own Neovim config
--- (a project-local `exrc` is already gated by Neovim's `:trust`). `settings.serverScopes` may
--- still mark some "workspace".
function M.sidecar_settings(opts)
  opts = opts or M.get()
  local settings = vim.deepcopy(opts.settings or {})
  if next(opts.servers or {}) ~= nil then
    settings.servers = vim.tbl_deep_extend('force', settings.servers or {}, opts.servers)
  end
  if next(settings.servers or {}) ~= nil then
    local scopes = {}
    for name in pairs(settings.servers) do
      scopes[name] = 'user'
    end
    settings.serverScopes = vim.tbl_extend('force', scopes, settings.serverScopes or {})
  end
  return settings
end

function M.log_file(opts)
  opts = opts or M.get()
  if opts.log_file == false then
    return nil
  end
  if type(opts.log_file) == 'string' then
    return vim.fs.normalize(opts.log_file)
  end
  return vim.fs.joinpath(vim.fn.stdpath('log'), 'mcp-sidecar.log')
end

return M
