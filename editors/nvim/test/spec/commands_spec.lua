-- :Mcp servers / tools / call / trust / log and completion, against the real sidecar and demo.
local T = require('helpers')

T.test(':Mcp servers shows each server with its state', function()
  T.start_sidecar()
  vim.cmd('Mcp servers')
  local buf = T.wait_buf('^mcp://servers$')
  local lines = T.lines(buf)
  T.contains(lines, 'MCP servers of ' .. T.workspace())
  local row = vim.tbl_filter(function(l)
    return l:match('^demo ')
  end, lines)[1]
  T.ok(row, vim.inspect(lines))
  T.contains(row, 'running')
  T.contains(row, '6 tools')
  T.contains(row, 'from editor settings')
  T.contains(lines, 'mcp-sidecar-demo')
  T.eq(buf, vim.api.nvim_get_current_buf(), 'the list has focus')
end)

T.test(':Mcp (no subcommand) is :Mcp servers; an unknown subcommand says what exists', function()
  vim.cmd('Mcp')
  T.wait_buf('^mcp://servers$')
  vim.cmd('Mcp frobnicate')
  local n = T.wait_notification('unknown subcommand "frobnicate"')
  T.contains(n.message, 'call, log, restart, servers, tools, trust')
  T.eq(vim.log.levels.ERROR, n.level)
end)

T.test(':Mcp tools lists every tool with its arguments', function()
  vim.cmd('Mcp tools')
  local buf = T.wait_buf('^mcp://tools$')
  local lines = T.lines(buf)
  T.contains(lines, '## demo')
  for _, tool in ipairs({ 'book_trip', 'login', 'analyze_flights', 'list_roots', 'add', 'echo' }) do
    T.contains(lines, '- ' .. tool)
  end
  T.contains(lines, 'arguments: a (number, required), b (number, required)')
end)

T.test('<CR> on a tool in :Mcp tools calls it', function()
  vim.cmd('Mcp tools demo')
  local buf = T.wait_buf('^mcp://tools$')
  T.wait(function()
    return vim.api.nvim_get_current_buf() == buf
  end, 'the tools buffer to get focus')
  local row = vim.fn.search('^- echo', 'n')
  T.ok(row > 0, 'the echo line')
  vim.api.nvim_win_set_cursor(0, { row + 1, 0 }) -- its description line works too
  T.script_input({ '{"text": "from the list"}' })
  vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'mx', false)
  T.contains(T.lines(T.wait_buf('^mcp://result/demo/echo/%d+$')), 'from the list')
end)

T.test('r on a server in :Mcp servers restarts it', function()
  vim.cmd('Mcp servers')
  local buf = T.wait_buf('^mcp://servers$')
  T.wait(function()
    return vim.api.nvim_get_current_buf() == buf
  end, 'the servers buffer to get focus')
  vim.api.nvim_win_set_cursor(0, { vim.fn.search('^demo ', 'n'), 0 })
  local restarted = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'McpSidecarStatus',
    callback = function(args)
      restarted = restarted or args.data.state == 'starting'
      return restarted
    end,
  })
  vim.api.nvim_feedkeys('r', 'mx', false)
  T.wait_notification('restarting demo')
  T.wait(function()
    return restarted
  end, 'the demo server to restart')
  T.wait_running('demo')
end)

T.test(':Mcp call demo add asks for the arguments and shows the sum', function()
  local calls = T.script_input({ '{"a": 2, "b": 40}' })
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  local lines = T.lines(buf)
  T.contains(lines, '# demo › add')
  T.contains(lines, '2 + 40 = 42')
  T.contains(lines, '"sum": 42')
  T.eq('markdown', vim.bo[buf].filetype)
  T.contains(
    calls[1].opts.prompt,
    'demo › add arguments (JSON object; a (number, required), b (number, required))'
  )
  T.eq(false, calls[1].in_coroutine, 'vim.ui.input is called outside coroutines')
end)

T.test(':Mcp call re-asks after invalid JSON, keeping what was typed', function()
  local calls = T.script_input({ '{"a": 1, "b": }', '[1, 2]', '{"a": 1, "b": 2}' })
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  T.contains(T.lines(buf), '1 + 2 = 3')
  T.eq(3, #calls)
  T.contains(calls[2].opts.prompt, '⚠ not valid JSON')
  T.eq('{"a": 1, "b": }', calls[2].opts.default)
  T.contains(calls[3].opts.prompt, 'must be a JSON object')
end)

T.test(':Mcp call with nothing picks the server and the tool (scripted vim.ui.select)', function()
  local selects = T.script_select(T.pick('echo'))
  T.script_input({ '{"text": "hi there"}' })
  vim.cmd('Mcp call')
  local buf = T.wait_buf('^mcp://result/demo/echo/%d+$')
  T.contains(T.lines(buf), 'hi there')
  -- One running server: it is taken without asking; then the tool is picked.
  T.eq(1, #selects)
  T.contains(selects[1].opts.prompt, 'Call which tool of demo?')
  T.contains(selects[1].lines, 'add — Returns a + b.')
end)

T.test(':Mcp call answered through the default vim.ui.input with typed keys', function()
  T.feed('{"a": 20, "b": 22}<CR>')
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  T.contains(T.lines(buf), '20 + 22 = 42')
end)

T.test(':Mcp call demo add {json} takes the arguments from the command line', function()
  vim.ui.input = function()
    error('must not ask')
  end
  vim.cmd('Mcp call demo add {"a": 5, "b": 6}')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  T.contains(T.lines(buf), '5 + 6 = 11')
end)

T.test('results replace each other in one window and stay listed', function()
  vim.cmd('Mcp call demo add {"a": 1, "b": 1}')
  local first = T.wait_buf('^mcp://result/demo/add/%d+$')
  local windows = #vim.api.nvim_list_wins()
  vim.cmd('wincmd p') -- back to the file, as a person would
  vim.cmd('Mcp call demo echo {"text": "second"}')
  local second = T.wait_buf('^mcp://result/demo/echo/%d+$')
  T.eq(windows, #vim.api.nvim_list_wins(), 'no new split')
  T.eq(second, vim.api.nvim_get_current_buf())
  T.ok(vim.api.nvim_buf_is_valid(first) and vim.bo[first].buflisted, 'the first result is still in :ls')
  T.contains(T.lines(first), '1 + 1 = 2')
end)

T.test(':Mcp call of a tool without arguments does not ask; Escape cancels', function()
  vim.ui.input = function()
    error('must not ask')
  end
  vim.cmd('Mcp call demo list_roots')
  local buf = T.wait_buf('^mcp://result/demo/list_roots/%d+$')
  T.contains(T.lines(buf), 'listChangedCount')
  vim.api.nvim_buf_delete(buf, { force = true })

  T.script_input({ false })
  vim.cmd('Mcp call demo add')
  T.wait_notification('call cancelled')
  T.eq(nil, T.find_buf('^mcp://result/demo/add/'))
end)

T.test(':Mcp call of an unknown tool, and a failing call, say so', function()
  vim.cmd('Mcp call demo nope')
  T.contains(T.wait_notification('has no tool').message, 'demo has no tool "nope"')
  vim.cmd('Mcp call nosuch add {}')
  local n = T.wait_notification('failed')
  T.eq(vim.log.levels.ERROR, n.level)
end)

T.test('completion: subcommands, servers, tools', function()
  local complete = require('mcp_sidecar.commands').complete
  T.eq({ 'call', 'log', 'restart', 'servers', 'tools', 'trust' }, complete('', 'Mcp ', 4))
  T.eq({ 'restart' }, complete('re', 'Mcp re', 6))
  T.eq({ 'demo' }, complete('', 'Mcp call ', 9))
  T.eq({ 'demo' }, complete('d', 'Mcp tools d', 11))
  local tools = complete('', 'Mcp call demo ', 14)
  table.sort(tools)
  T.eq({ 'add', 'analyze_flights', 'book_trip', 'echo', 'list_roots', 'login' }, tools)
  T.eq({ 'add', 'analyze_flights' }, complete('a', 'Mcp call demo a', 15))
  T.eq({ 'call' }, vim.fn.getcompletion('Mcp ca', 'cmdline'))
end)

T.test(':Mcp trust explains that trust comes with workspace configuration', function()
  vim.cmd('Mcp trust')
  local n = T.wait_notification('trust comes with workspace configuration')
  T.contains(n.message, '.vscode/mcp.json')
end)

T.test(':Mcp log opens the log file', function()
  vim.cmd('Mcp log')
  T.eq(vim.fs.joinpath(vim.fn.stdpath('log'), 'mcp-sidecar.log'), vim.api.nvim_buf_get_name(0))
  T.ok(#T.lines(0) > 1, 'the log has lines')
  T.contains(T.lines(0), 'demo')
end)
