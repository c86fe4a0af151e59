-- Text and addresses a server chose to deceive (fixtures/bad/deceptive.py): Neovim shows the
-- sidecar's cleaned label for a name and sends the exact name back, opens only web addresses
-- outside the editor, and offers only a plain file name when saving a resource.
local T = require('helpers')

local RLO = '\226\128\174' -- U+202E, right-to-left override
local BIDI = 'pay' .. RLO .. 'fdp.exe'

T.test(':Mcp tools shows a deceptive name by its cleaned label; the exact name calls the tool', function()
  T.start_sidecar({
    servers = { deceptive = { command = 'python3', args = { T.repo_root .. '/fixtures/bad/deceptive.py' } } },
  })
  T.wait_running('deceptive')
  vim.cmd('Mcp tools deceptive')
  local buf = T.wait_buf('^mcp://tools')
  local lines = T.lines(buf)
  T.contains(lines, '- pay⟨U+202E⟩fdp.exe — Safe hidden title')
  for _, line in ipairs(lines) do
    T.ok(not line:find(RLO, 1, true) and not line:find('\27', 1, true), 'shown as it came: ' .. line)
  end
  local result =
    T.exec('mcp-sidecar.callTool', { server = 'deceptive', tool = BIDI, arguments = vim.empty_dict() })
  T.eq('called', result.content[1].text)
end)

T.test('window/showDocument opens only web addresses outside the editor', function()
  local opened = {}
  local real_open, real_notify = vim.ui.open, vim.notify
  vim.ui.open = function(uri)
    table.insert(opened, uri)
    return { wait = function() end }
  end
  local told = {}
  vim.notify = function(message)
    table.insert(told, message)
  end
  local handler = require('mcp_sidecar.handlers')['window/showDocument']
  -- As Neovim runs a server's request: in a coroutine.
  local function show(err, params, ctx)
    local out
    coroutine.wrap(function()
      out = handler(err, params, ctx)
    end)()
    T.wait(function()
      return out
    end, 'the answer to window/showDocument')
    return out
  end
  local refused = {
    'javascript:alert(1)',
    'file:///home/me/.ssh/id_ed25519',
    'vscode://vscode.git/clone?url=https://evil.example/x',
    'not a url',
  }
  for _, uri in ipairs(refused) do
    T.eq({ success = false }, show(nil, { uri = uri, external = true }, { client_id = 0 }), uri)
  end
  T.eq(
    { success = true },
    show(nil, { uri = 'https://example.com/login', external = true }, { client_id = 0 })
  )
  vim.ui.open, vim.notify = real_open, real_notify
  T.eq({ 'https://example.com/login' }, opened)
  T.contains(told[1], 'not http or https')
end)

T.test('the default path for saving a resource is a plain file name, never a path', function()
  local save_name = require('mcp_sidecar.util').save_name
  T.eq('_.config_autostart_x.desktop', save_name('x://h/..%2F.config%2Fautostart%2Fx.desktop'))
  T.eq('_.config_autostart_x.desktop', save_name('x://h/~%2F.config%2Fautostart%2Fx.desktop'))
  T.eq('bashrc', save_name('file:///home/me/.bashrc'))
  T.eq('a_b_2Jc', save_name('x://h/a%0Ab%1B%5B2Jc'))
  T.eq('data.gz', save_name('demo://resource/session/data.gz?x=1#y'))
  T.eq('resource', save_name('x://'))
  T.eq('resource', save_name(nil))
  T.eq(100, #save_name('x://h/' .. ('a'):rep(500)))
end)
