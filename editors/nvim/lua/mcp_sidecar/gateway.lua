-- The gateway for agents in Neovim's terminals (docs/gateway.md): the environment of
-- `mcp-sidecar.gatewayInfo` goes into Neovim's own (`vim.env`), which `:terminal` jobs and
-- every other child process inherit, and `:Mcp gateway` shows ready configurations for agents.
local async = require('mcp_sidecar.async')
local exec = require('mcp_sidecar.exec')
local scratch = require('mcp_sidecar.ui.scratch')

local M = {}

--- The gateway environment each sidecar reported, by client id.
---@type table<integer, table<string, string>>
local env_by_client = {}
--- What the variables were before this plugin set them (false: unset), to restore.
---@type table<string, string|false>
local original = {}

--- Sets `vim.env` from the reported environments: the one sidecar's when exactly one reports a
--- gateway; none when there are several (then `mcp-sidecar gateway` picks the workspace by the
--- folder it runs in, through the discovery files) or none.
local function apply()
  local ids = vim.tbl_keys(env_by_client)
  local wanted = #ids == 1 and env_by_client[ids[1]] or {}
  for name, before in pairs(original) do
    if wanted[name] == nil then
      vim.env[name] = before or nil
      original[name] = nil
    end
  end
  for name, value in pairs(wanted) do
    if original[name] == nil then
      original[name] = vim.env[name] or false
    end
    vim.env[name] = value
  end
end

--- The environment the terminals get now (a copy), for :Mcp gateway and :checkhealth.
function M.current_env()
  local out = {}
  for name in pairs(original) do
    out[name] = vim.env[name]
  end
  return out
end

--- How many sidecars reported a gateway.
function M.count()
  return #vim.tbl_keys(env_by_client)
end

function M.set(client_id, env)
  if type(env) ~= 'table' then
    return
  end
  local clean = {}
  for name, value in pairs(env) do
    if type(name) == 'string' and name:match('^[%w_]+$') and type(value) == 'string' then
      clean[name] = value
    end
  end
  env_by_client[client_id] = clean
  apply()
  vim.api.nvim_exec_autocmds('User', { pattern = 'McpSidecarGateway', modeline = false })
end

function M.clear(client_id)
  if env_by_client[client_id] == nil then
    return
  end
  env_by_client[client_id] = nil
  apply()
  vim.api.nvim_exec_autocmds('User', { pattern = 'McpSidecarGateway', modeline = false })
end

--- The sidecar's log lines that say when its gateway serves and when it is off.
function M.on_log(client_id, params)
  local message = type(params) == 'table' and params.message or nil
  if type(message) ~= 'string' then
    return
  end
  if message:match('^gateway: serving agents at ') then
    async.run(function()
      local client = vim.lsp.get_client_by_id(client_id)
      if not client then
        return
      end
      local info, err = exec.run(client, exec.CMD.gateway_info)
      if err or type(info) ~= 'table' then
        M.clear(client_id)
      elseif not client:is_stopped() then
        M.set(client_id, info.env)
      end
    end)
  elseif message:match('^gateway: off') then
    vim.schedule(function()
      M.clear(client_id)
    end)
  end
end

-- Snippets -----------------------------------------------------------------------------------------

--- A JSON string literal.
local function str(s)
  return vim.json.encode(s)
end

--- `secret` shortened for the screen: its first 4 and last 2 characters.
function M.mask(secret)
  if type(secret) ~= 'string' or #secret <= 8 then
    return '…'
  end
  return secret:sub(1, 4) .. '…' .. secret:sub(-2)
end

--- The ready configurations for agents: `{ title, lines (what is shown), text (what is yanked) }`.
--- `bin` is the sidecar binary's path; `info` the gatewayInfo result.
function M.snippets(bin, info)
  local json = ('{"mcpServers": {"workspace": {"command": %s, "args": ["gateway"]}}}'):format(str(bin))
  local claude = ('claude mcp add workspace -- %s gateway'):format(vim.fn.shellescape(bin))
  local codex = { '[mcp_servers.workspace]', 'command = ' .. str(bin), 'args = ["gateway"]' }
  local list = {
    { title = 'Claude Code: .mcp.json in the project', lines = { json } },
    { title = 'Claude Code: command line', lines = { claude } },
    { title = 'Codex CLI: ~/.codex/config.toml', lines = codex },
    { title = 'gemini-cli: .gemini/settings.json', lines = { json } },
  }
  if type(info) == 'table' and type(info.url) == 'string' then
    local shown, copied = { 'URL: ' .. info.url }, { 'URL: ' .. info.url }
    local headers = type(info.headers) == 'table' and info.headers or {}
    local names = vim.tbl_keys(headers)
    table.sort(names)
    for _, name in ipairs(names) do
      local value = tostring(headers[name])
      local scheme, secret = value:match('^(%S+ )(.+)$')
      table.insert(shown, ('%s: %s'):format(name, scheme and (scheme .. M.mask(secret)) or M.mask(value)))
      table.insert(copied, ('%s: %s'):format(name, value))
    end
    table.insert(list, {
      title = 'Streamable HTTP, any MCP client (the secret changes each time the sidecar starts)',
      lines = shown,
      text = table.concat(copied, '\n'),
    })
  end
  for _, snippet in ipairs(list) do
    snippet.text = snippet.text or table.concat(snippet.lines, '\n')
  end
  return list
end

--- :Mcp gateway's buffer: the snippets for the sidecar binary `bin` and the gatewayInfo `info`;
--- y yanks the one under the cursor.
function M.show(bin, info)
  local lines = {
    "# Agents in the terminal: this workspace's MCP servers through the gateway",
    '',
    'y yanks the snippet under the cursor (to the + and " registers) · q close',
    '',
  }
  local url = M.current_env().MCP_SIDECAR_GATEWAY
  if url then
    table.insert(lines, ':terminal jobs get MCP_SIDECAR_GATEWAY=' .. url)
  else
    table.insert(
      lines,
      'Several sidecars run: terminals find theirs through the discovery file of their folder.'
    )
  end
  table.insert(lines, '')
  local at = {}
  for _, snippet in ipairs(M.snippets(bin, info)) do
    vim.list_extend(lines, { '## ' .. snippet.title, '' })
    for _, line in ipairs(snippet.lines) do
      table.insert(lines, '    ' .. line)
      at[#lines] = snippet
    end
    table.insert(lines, '')
  end
  local function yank()
    local row = vim.api.nvim_win_get_cursor(0)[1]
    -- On a heading, the snippet below it.
    local snippet = at[row] or at[row + 1] or at[row + 2]
    if not snippet then
      vim.notify('mcp-sidecar: put the cursor on a snippet', vim.log.levels.WARN)
      return
    end
    vim.fn.setreg('"', snippet.text)
    pcall(vim.fn.setreg, '+', snippet.text)
    vim.notify('mcp-sidecar: yanked: ' .. snippet.title, vim.log.levels.INFO)
  end
  return scratch.show('mcp://gateway', lines, {
    filetype = 'markdown',
    keys = { y = { desc = 'Yank the snippet under the cursor', fn = yank } },
  })
end

return M
