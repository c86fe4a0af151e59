-- :Mcp untrust and :Mcp trust on a server the settings mark as workspace-scoped (so it needs
-- trust, like one from a workspace's .mcp.json), against the real sidecar and demo.
local T = require('helpers')

local function state(name)
  local row = T.server(name)
  return row and row.state
end

local function wait_state(name, want)
  T.wait(function()
    return state(name) == want
  end, ('%s to be %s (is %s)'):format(name, want, tostring(state(name))), 20000)
end

T.test('the sidecar asks to trust the workspace server; Trust starts it', function()
  local asked = T.script_select(function(lines, _, opts)
    T.contains(opts.prompt, 'Trust the MCP server "ws"')
    return T.pick('Trust')(lines)
  end)
  T.start_sidecar({
    servers = { ws = { command = T.bin, args = { 'demo-server' } } },
    settings = { serverScopes = { ws = 'workspace' } },
  })
  T.wait_running('ws')
  T.eq(1, #asked, 'asked once')
end)

T.test(':Mcp untrust ws stops it at once and records "don\'t trust"', function()
  vim.cmd('Mcp untrust ws')
  T.wait_notification('ws is no longer trusted (stopped)')
  wait_state('ws', 'needsTrust')
  T.eq('running', state('demo'), 'the user-scoped server runs on')
  local store = vim.fs.joinpath(vim.env.XDG_STATE_HOME, 'mcp-sidecar', 'trust.json')
  local decisions = vim.json.decode(table.concat(vim.fn.readfile(store), '\n'))
  local ws = vim.tbl_filter(function(d)
    return d.server == 'ws'
  end, decisions)
  T.eq(1, #ws)
  T.eq(false, ws[1].trusted)
end)

T.test(':Mcp untrust with nothing trusted that the workspace defines says so', function()
  vim.ui.select = function()
    error('must not ask')
  end
  vim.cmd('Mcp untrust')
  T.wait_notification('no trusted server is defined by the workspace')
  vim.cmd('Mcp untrust demo')
  T.contains(T.wait_notification('untrust failed').message, 'not a server defined in the workspace')
end)

T.test(':Mcp trust takes the one server waiting and starts it', function()
  vim.cmd('Mcp trust')
  T.wait_notification('trusted ws')
  T.wait_running('ws')
end)

T.test(':Mcp untrust without a server asks which (only workspace servers), even for one', function()
  local asked = T.script_select(T.pick('ws'))
  vim.cmd('Mcp untrust')
  T.wait_notification('ws is no longer trusted (stopped)')
  wait_state('ws', 'needsTrust')
  T.eq({ 'ws' }, asked[1].lines, "demo is the person's own: not offered")
  T.contains(asked[1].opts.prompt, 'Stop trusting which MCP server?')
end)
