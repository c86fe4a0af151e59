-- :checkhealth mcp_sidecar
local binary = require('mcp_sidecar.binary')
local config = require('mcp_sidecar.config')
local format = require('mcp_sidecar.format')
local lsp_config = require('mcp_sidecar.lsp_config')

local M = {}

local health = vim.health

local function check_neovim()
  health.start('mcp-sidecar: Neovim')
  local v = vim.version()
  local text = ('%d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. text)
  else
    health.error('Neovim ' .. text .. ' is too old', { 'Install Neovim 0.11 or newer.' })
  end
end

local function check_config()
  health.start('mcp-sidecar: configuration')
  local problems = config.problems()
  if #problems == 0 then
    health.ok('options are valid')
  end
  for _, problem in ipairs(problems) do
    health.error(problem, { 'See :help mcp-sidecar-options.' })
  end
  local opts = config.get()
  local names = vim.tbl_keys(opts.servers or {})
  table.sort(names)
  if #names > 0 then
    health.info('servers from the editor settings: ' .. table.concat(names, ', '))
  else
    health.info('no servers in the editor settings (the sidecar also reads ~/.config/mcp-sidecar/mcp.json)')
  end
  health.info(
    'log file: '
      .. (config.log_file() or 'none (stderr goes to the LSP log, ' .. vim.lsp.get_log_path() .. ')')
  )
  if vim.lsp.is_enabled(lsp_config.name) then
    health.ok('vim.lsp.enable("mcp_sidecar") is on: the sidecar starts with the first file buffer')
  else
    health.info('autostart is off: the sidecar starts with the first :Mcp command')
  end
end

local function check_binary()
  health.start('mcp-sidecar: binary')
  local exe, err = binary.resolve()
  if not exe then
    health.error(err, {
      'Build it: ' .. binary.build_hint(),
      'or set the path: require("mcp_sidecar").setup({ cmd = "/path/to/mcp-sidecar" })',
    })
    return false
  end
  health.ok('found ' .. exe)
  local version, verr = binary.version(exe)
  if version then
    local first, rest = version:match('^([^\n]*)\n?(.*)$')
    health.ok('version: ' .. first)
    if rest ~= '' then
      health.info(rest)
    end
    local have = first:match('^mcp%-sidecar%s+(%S+)')
    local want = binary.plugin_version()
    local ok_have, vhave = pcall(vim.version.parse, have or '')
    local ok_want, vwant = pcall(vim.version.parse, want or '')
    if want and ok_want and vwant and (not ok_have or not vhave or vim.version.lt(vhave, vwant)) then
      health.warn(('the binary is %s, older than the plugin (%s)'):format(have or first, want), {
        'Rebuild it: ' .. binary.build_hint(),
      })
    end
  else
    health.error('it does not run: ' .. tostring(verr))
    return false
  end
  return true
end

local function list_servers(client)
  local response = client:request_sync('workspace/executeCommand', {
    command = 'mcp-sidecar.listServers',
    arguments = { vim.empty_dict() },
  }, 3000)
  if not response then
    return nil, 'no answer within 3 s'
  end
  if response.err then
    return nil, tostring(response.err.message)
  end
  return type(response.result) == 'table' and response.result or {}
end

local function check_servers(client)
  local rows, err = list_servers(client)
  if not rows then
    health.warn('could not list the servers: ' .. err)
    return
  end
  if #rows == 0 then
    health.warn('no MCP servers are configured', {
      'require("mcp_sidecar").setup({ servers = { name = { command = "...", args = { ... } } } })',
      'or ~/.config/mcp-sidecar/mcp.json',
    })
  end
  for _, row in ipairs(rows) do
    local text = ('server %s: %s'):format(row.name, row.state)
    if type(row.protocolVersion) == 'string' then
      text = text .. ' (protocol ' .. row.protocolVersion .. ')'
    end
    if type(row.source) == 'string' then
      text = text .. ', from ' .. row.source
    end
    local message = type(row.message) == 'string' and row.message or nil
    text = text .. (message and (': ' .. message) or '')
    -- The sign-in of an http server that uses OAuth (never a token: the row has none).
    local auth = format.auth(row.auth)
    if auth then
      text = text .. '; ' .. auth
    end
    if row.state == 'running' then
      health.ok(text)
    elseif row.state == 'failed' then
      health.error(text)
    elseif row.state == 'needsAuth' then
      health.warn(text, { (':Mcp signin %s'):format(row.name) })
    else
      health.warn(text)
    end
  end
end

local function check_clients()
  health.start('mcp-sidecar: sidecar')
  local clients = require('mcp_sidecar.client').all()
  if #clients == 0 then
    health.info('not running (it starts when a file is opened, or with :Mcp servers)')
    return
  end
  for _, client in ipairs(clients) do
    local folders = {}
    for _, f in ipairs(client.workspace_folders or {}) do
      table.insert(folders, f.name)
    end
    health.ok(('attached (client %d), workspace folders: %s'):format(client.id, table.concat(folders, ', ')))
    local ext = vim.tbl_get(client.server_capabilities or {}, 'experimental', 'mcpSidecar')
    if type(ext) == 'table' and ext.version == 1 then
      health.ok('editor contract version 1')
    else
      health.warn('the sidecar does not announce editor contract version 1', {
        'Update the plugin and the sidecar together.',
      })
    end
    check_servers(client)
  end
  local gateway = require('mcp_sidecar.gateway')
  local url = gateway.current_env().MCP_SIDECAR_GATEWAY
  if url then
    health.ok(':terminal jobs get MCP_SIDECAR_GATEWAY=' .. url .. ' (:Mcp gateway for agent configurations)')
  elseif gateway.count() > 1 then
    health.info('several sidecars serve a gateway: terminals find theirs through the discovery files')
  else
    health.info('no gateway for terminals (gateway.enabled is false, or it is still starting)')
  end
  local open = require('mcp_sidecar.prompts').list()
  if #open > 0 then
    health.info(('%d prompt(s) waiting for an answer'):format(#open))
  end
end

function M.check()
  check_neovim()
  check_config()
  check_binary()
  check_clients()
end

return M
