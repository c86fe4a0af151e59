-- :Mcp restart: the sidecar's own quickPick ("which server?") answered through vim.ui.select.
local T = require('helpers')

local statuses = {}
vim.api.nvim_create_autocmd('User', {
  pattern = 'McpSidecarStatus',
  callback = function(args)
    table.insert(statuses, args.data.name .. ':' .. args.data.state)
  end,
})

local function count(state)
  return #vim.tbl_filter(function(s)
    return s == state
  end, statuses)
end

--- How many times demo came up: the sidecar logs each connection before it reports it running.
local function demo_runs()
  local n = 0
  for _, line in ipairs(vim.fn.readfile(vim.fs.joinpath(vim.fn.stdpath('log'), 'mcp-sidecar.log'))) do
    if line:find('server running', 1, true) and line:find('server=demo', 1, true) then
      n = n + 1
    end
  end
  return n
end

--- After a command that must not have restarted demo: demo answers a call, and on the connection
--- it had before the command. A restart the command queued ends that connection first thing, so
--- the call then fails, or reaches a new connection, which the log counts.
local function still_connected(runs)
  local result =
    T.exec('mcp-sidecar.callTool', { server = 'demo', tool = 'echo', arguments = { text = 'still here' } })
  T.ok(result.isError ~= true, vim.inspect(result))
  T.eq(runs, demo_runs(), 'demo still on the connection it had')
end

T.test(':Mcp restart asks which server (scripted select) and restarts it', function()
  T.start_sidecar()
  local starts = count('demo:starting')
  local calls = T.script_select(T.pick('demo'))
  vim.cmd('Mcp restart')
  T.wait_notification('restarting demo')
  T.wait(function()
    return count('demo:starting') > starts
  end, 'the demo server to restart')
  T.wait_running('demo')
  T.eq(1, #calls)
  T.contains(calls[1].opts.prompt, 'Restart which MCP server?')
  T.eq({ 'demo — running' }, calls[1].lines)
  T.eq(false, calls[1].in_coroutine)
end)

T.test(':Mcp restart with an asynchronous select answering from a later event-loop turn', function()
  local starts = count('demo:starting')
  local calls = T.script_select(T.pick('demo'), { delay = 80, float = true })
  vim.cmd('Mcp restart')
  T.wait(function()
    return calls[1] and calls[1].win
  end, 'the select to open')
  T.eq(starts, count('demo:starting'), 'nothing happens before the answer')
  T.wait_notification('restarting demo')
  T.wait(function()
    return count('demo:starting') > starts
  end, 'the demo server to restart')
  T.wait_running('demo')
end)

T.test(':Mcp restart dismissed restarts nothing', function()
  local starts, runs = count('demo:starting'), demo_runs()
  T.script_select(function() end)
  vim.cmd('Mcp restart')
  T.wait_notification('restart cancelled')
  still_connected(runs)
  T.eq(starts, count('demo:starting'))
end)

T.test(':Mcp restart demo restarts without asking', function()
  local starts = count('demo:starting')
  vim.ui.select = function()
    error('must not ask')
  end
  vim.cmd('Mcp restart demo')
  T.wait_notification('restarting demo')
  T.wait(function()
    return count('demo:starting') > starts
  end, 'the demo server to restart')
  T.wait_running('demo')
end)

T.test(
  'cancelling the command makes the sidecar send cancelPrompt: the select closes, null is answered',
  function()
    local client = require('mcp_sidecar').client()
    local starts, runs = count('demo:starting'), demo_runs()
    local calls = T.script_select(T.pick('demo'), { never = true, float = true })
    vim.cmd('Mcp restart')
    T.wait(function()
      return calls[1] and calls[1].win and #require('mcp_sidecar.prompts').list() == 1
    end, 'the select to open')
    T.ok(vim.api.nvim_win_is_valid(calls[1].win))
    local request_id
    for id, request in pairs(client.requests) do
      if request.type == 'pending' and request.method == 'workspace/executeCommand' then
        request_id = id
      end
    end
    T.ok(request_id, 'the restart request is pending')
    client:cancel_request(request_id)
    T.wait(function()
      return not vim.api.nvim_win_is_valid(calls[1].win)
    end, 'cancelPrompt to close the select')
    T.eq({}, require('mcp_sidecar.prompts').list())
    still_connected(runs)
    T.eq(starts, count('demo:starting'), 'nothing was restarted')
  end
)

T.test('cancelPrompt through the client handlers also closes the native multi-select', function()
  -- The sidecar has no multi-select question yet: open one as if it asked, with the real
  -- client's id, and let the real sidecar's cancelPrompt arrive through the client.
  local client = require('mcp_sidecar').client()
  local box = T.request('mcp-sidecar/quickPick', {
    id = 'many1',
    title = 'demo: Extras',
    canPickMany = true,
    items = { { label = 'lounge' }, { label = 'wifi' } },
  }, client.id)
  local buf = T.wait_buf('^mcp://select/many1$')
  client.handlers['mcp-sidecar/cancelPrompt'](nil, { id = 'many1' }, { client_id = client.id })
  T.eq(vim.NIL, T.answer(box))
  T.eq(false, vim.api.nvim_buf_is_valid(buf))
end)
