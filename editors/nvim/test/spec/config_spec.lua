-- Options: defaults, validation messages, vim.g.mcp_sidecar vs setup(), the vim.lsp config.
local T = require('helpers')
local config = require('mcp_sidecar.config')

T.test('defaults need no setup()', function()
  local opts = config.get()
  T.eq('mcp-sidecar', opts.cmd)
  T.eq(true, opts.autostart)
  T.eq({ '.git' }, opts.root_markers)
  T.eq({}, config.problems())
  T.eq(vim.fs.joinpath(vim.fn.stdpath('log'), 'mcp-sidecar.log'), config.log_file())
end)

T.test('validation names the option, the expected type and what was given', function()
  local _, problems = config.validate({
    cmd = 42,
    autostart = 'yes',
    tool_arguments = 'ask',
    root_markers = { 1 },
    servers = { a = 'npx', b = { args = {} } },
    ui = { split = 3, colour = 'x' },
    bogus = true,
  })
  table.sort(problems)
  T.eq({
    'option `autostart` must be a boolean, got string',
    'option `cmd` must be a string or table, got number',
    'option `root_markers` must be a list of strings',
    "option `tool_arguments` must be 'prompt' or 'sidecar'",
    'option `ui.split` must be a string, got number',
    'server `a` must be a table, got string',
    'server `b` needs `command` (stdio) or `url` (HTTP)',
    'unknown option `bogus` (ignored)',
    'unknown option `ui.colour` (ignored)',
  }, problems)
end)

T.test('setup() reports problems with vim.notify and keeps the good options', function()
  require('mcp_sidecar').setup({ autostart = false, log_level = 7, log_file = '/tmp/x/side.log' })
  T.contains(
    T.wait_notification('log_level').message,
    'setup(): option `log_level` must be a string, got number'
  )
  T.eq(false, config.get().autostart)
  T.eq('/tmp/x/side.log', config.log_file())
  T.eq({ 'setup(): option `log_level` must be a string, got number' }, config.problems())
  require('mcp_sidecar').setup({})
end)

T.test('vim.g.mcp_sidecar works without setup(); setup() wins; lists replace', function()
  vim.g.mcp_sidecar = { cmd = '/from/g', root_markers = { 'a', 'b' }, servers = { x = { command = 'x' } } }
  require('mcp_sidecar').setup({ root_markers = { 'c' }, servers = { y = { command = 'y' } } })
  local opts = config.get()
  T.eq('/from/g', opts.cmd)
  T.eq({ 'c' }, opts.root_markers)
  T.eq({
    servers = { x = { command = 'x' }, y = { command = 'y' } },
    serverScopes = { x = 'user', y = 'user' },
  }, config.sidecar_settings())
  vim.g.mcp_sidecar = nil
  require('mcp_sidecar').setup({})
end)

T.test('settings: servers are merged into the other sidecar settings', function()
  require('mcp_sidecar').setup({
    settings = { maxRestarts = 2, roots = { exclude = { '**/node_modules' } } },
    servers = { demo = { command = 'mcp-sidecar', args = { 'demo-server' } } },
  })
  T.eq({
    maxRestarts = 2,
    roots = { exclude = { '**/node_modules' } },
    servers = { demo = { command = 'mcp-sidecar', args = { 'demo-server' } } },
    serverScopes = { demo = 'user' },
  }, config.sidecar_settings())
  require('mcp_sidecar').setup({})
end)

T.test('the binary: a path, a name on PATH, extra arguments, log options', function()
  require('mcp_sidecar').setup({ cmd = { T.bin, 'lsp' }, log_level = 'debug' })
  local argv = require('mcp_sidecar.binary').command()
  T.eq({ T.bin, 'lsp', '--log-file', config.log_file(), '--log-level', 'debug' }, argv)
  require('mcp_sidecar').setup({ cmd = 'sh', log_file = false })
  T.eq({ vim.fn.exepath('sh') }, require('mcp_sidecar.binary').command())
  require('mcp_sidecar').setup({ cmd = '/nonexistent/mcp-sidecar' })
  local argv2, err = require('mcp_sidecar.binary').command()
  T.eq(nil, argv2)
  T.contains(err, '/nonexistent/mcp-sidecar does not exist')
  require('mcp_sidecar').setup({})
end)

T.test('lsp/mcp_sidecar.lua is a vim.lsp.config entry', function()
  local cfg = vim.lsp.config.mcp_sidecar
  T.ok(cfg, 'vim.lsp.config resolves mcp_sidecar from lsp/')
  T.eq('function', type(cfg.cmd))
  T.eq('function', type(cfg.root_dir))
  T.eq(false, cfg.workspace_required)
  T.eq({
    inputBox = true,
    quickPick = true,
    editDraft = true,
    clipboard = true,
    languageModel = false,
    serverScopes = true,
    openApp = false,
  }, cfg.capabilities.experimental.mcpSidecar)
  for _, method in ipairs({
    'mcp-sidecar/inputBox',
    'mcp-sidecar/quickPick',
    'mcp-sidecar/editDraft',
    'mcp-sidecar/cancelPrompt',
    'mcp-sidecar/clipboard',
    'mcp-sidecar/serverStatus',
    'mcp-sidecar/closeApp',
    'window/showDocument',
  }) do
    T.eq('function', type(cfg.handlers[method]), method)
  end
end)

T.test('vim.lsp.enable("mcp_sidecar") with vim.lsp.config() overrides starts the sidecar', function()
  vim.g.mcp_sidecar = { cmd = T.bin, root_markers = {}, autostart = false }
  vim.lsp.config('mcp_sidecar', {
    before_init = function(params)
      -- Settings written by hand name their own scopes (else each server would ask for trust).
      params.initializationOptions = {
        servers = { viaconfig = { command = T.bin, args = { 'demo-server' } } },
        serverScopes = { viaconfig = 'user' },
      }
    end,
  })
  vim.cmd('runtime plugin/mcp_sidecar.lua')
  T.eq(false, vim.lsp.is_enabled('mcp_sidecar'), 'autostart = false leaves it to the person')
  vim.lsp.enable('mcp_sidecar')
  vim.cmd.cd(T.workspace())
  vim.cmd('filetype on')
  vim.cmd.edit(T.workspace() .. '/notes/trip.md')
  T.wait_running('viaconfig')
  T.eq(1, #vim.lsp.get_clients({ name = 'mcp_sidecar' }))
end)

T.test('setup() on a running sidecar sends the new settings (a server is added)', function()
  require('mcp_sidecar').setup({
    servers = {
      viaconfig = { command = T.bin, args = { 'demo-server' } },
      legacy = { command = T.bin, args = { 'demo-server', '--era', 'legacy' } },
    },
  })
  T.wait_running('legacy')
  local rows = T.exec('mcp-sidecar.listServers')
  local protocol = {}
  for _, row in ipairs(rows) do
    protocol[row.name] = row.protocolVersion
  end
  T.eq('2025-11-25', protocol.legacy)
end)
