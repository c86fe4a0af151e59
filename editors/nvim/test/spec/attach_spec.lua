-- Starting the real sidecar through vim.lsp.enable: capabilities, settings, folders, status.
local T = require('helpers')

local statuses = {}
vim.api.nvim_create_autocmd('User', {
  pattern = 'McpSidecarStatus',
  callback = function(args)
    table.insert(statuses, args.data)
  end,
})

local extra_folder = vim.fn.tempname()
vim.fn.mkdir(extra_folder, 'p')

T.test('opening a file starts the sidecar; serverStatus reports the demo server running', function()
  local client = T.start_sidecar({ workspace_folders = { extra_folder } })
  T.ok(client, 'a client')
  T.eq('mcp_sidecar', client.name)
  local states = vim.tbl_map(function(s)
    return s.name .. ':' .. s.state
  end, statuses)
  T.contains(states, 'demo:starting')
  T.contains(states, 'demo:running')
  T.ok(vim.lsp.buf_is_attached(0, client.id), 'attached to the file buffer')
  local row = T.server('demo')
  T.eq('editor settings', row.source)
  T.ok(type(row.protocolVersion) == 'string', 'a protocol version')
end)

T.test('the editor capabilities and the settings are sent in initialize', function()
  local client = require('mcp_sidecar').client()
  T.eq({
    inputBox = true,
    quickPick = true,
    editDraft = true,
    clipboard = true,
    languageModel = false,
    serverScopes = true,
    openApp = false,
  }, client.capabilities.experimental.mcpSidecar)
  T.eq(1, client.server_capabilities.experimental.mcpSidecar.version)
  T.contains(client.server_capabilities.executeCommandProvider.commands, 'mcp-sidecar.callTool')
  local rows = T.exec('mcp-sidecar.listServers')
  T.eq('demo', rows[1].name)
  T.eq('editor settings', rows[1].source, 'the servers came from initializationOptions')
end)

T.test('one sidecar per workspace, with the workspace and the extra folders', function()
  local client = require('mcp_sidecar').client()
  vim.cmd.edit(T.workspace() .. '/notes/trip.md')
  vim.cmd.edit(T.workspace() .. '/flights.csv')
  T.wait(function()
    return vim.lsp.buf_is_attached(0, client.id)
  end, 'the second file to attach')
  T.eq(1, #vim.lsp.get_clients({ name = 'mcp_sidecar' }), 'a single sidecar')
  local names = vim.tbl_map(function(f)
    return f.name
  end, client.workspace_folders)
  T.eq({ T.workspace(), vim.fs.normalize(extra_folder) }, names)
  local roots = T.call_structured('demo', 'list_roots').roots
  T.eq(2, #roots, vim.inspect(roots))
  T.eq(vim.uri_from_fname(T.workspace()), roots[1].uri)
end)

T.test('buffers that are not files do not start or attach the sidecar', function()
  local client = require('mcp_sidecar').client()
  vim.cmd('enew')
  vim.bo.buftype = 'nofile'
  vim.bo.filetype = 'markdown'
  -- vim.lsp.enable starts or attaches from a callback its FileType autocommand schedules.
  T.flush_scheduled()
  T.eq(false, vim.lsp.buf_is_attached(0, client.id))
  vim.cmd('help')
  T.flush_scheduled()
  T.eq(false, vim.lsp.buf_is_attached(0, client.id))
  T.eq(1, #vim.lsp.get_clients({ name = 'mcp_sidecar' }))
end)

T.test('status() is a short statusline text; servers() the rows', function()
  T.eq('MCP 1/1', require('mcp_sidecar').status())
  local rows = require('mcp_sidecar').servers()
  T.eq('demo', rows[1].name)
  T.eq('running', rows[1].state)
end)

T.test('the sidecar logs to a file under stdpath("log"), never to stdout', function()
  local log = vim.fs.joinpath(vim.fn.stdpath('log'), 'mcp-sidecar.log')
  T.ok(vim.uv.fs_stat(log), 'the log file exists: ' .. log)
  local client = require('mcp_sidecar').client()
  local cmd = vim.tbl_get(client, 'config', 'cmd')
  T.eq('function', type(cmd))
  local argv = require('mcp_sidecar.binary').command()
  T.eq({ T.bin, '--log-file', log }, argv)
end)
