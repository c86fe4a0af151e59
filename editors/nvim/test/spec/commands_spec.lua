-- :Mcp servers / tools / call / trust / sampling-log / log and completion, against the real
-- sidecar and demo (trust and untrust of a workspace server: trust_spec.lua).
local T = require('helpers')

--- Answers the sidecar's argument steps by field name, and the go-ahead ("Call <tool>") in its
--- review.
local function argument_steps(values, review)
  local calls = T.script_input_fn(function(opts)
    for name, value in pairs(values) do
      if opts.prompt:find('› ' .. name .. ' ', 1, true) then
        return value
      end
    end
    error('unexpected input: ' .. opts.prompt)
  end)
  local selects = T.script_select(function(lines, _, opts)
    if opts.prompt:find('Review your answers', 1, true) then
      return T.pick(review or 'Call ')(lines)
    end
    return T.pick(values['@select'])(lines)
  end)
  return calls, selects
end

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
  T.contains(row, '9 tools')
  T.contains(row, 'from editor settings')
  T.contains(lines, 'mcp-sidecar-demo')
  T.eq(buf, vim.api.nvim_get_current_buf(), 'the list has focus')
end)

T.test(':Mcp (no subcommand) is :Mcp servers; an unknown subcommand says what exists', function()
  vim.cmd('Mcp')
  T.wait_buf('^mcp://servers$')
  vim.cmd('Mcp frobnicate')
  local n = T.wait_notification('unknown subcommand "frobnicate"')
  T.contains(
    n.message,
    'app, call, gateway, log, prompt, read, resources, restart, sampling-log, servers, signin, signout, skills, tasks, tools, trust, untrust'
  )
  T.eq(vim.log.levels.ERROR, n.level)
end)

T.test(':Mcp tools lists every tool with its arguments', function()
  vim.cmd('Mcp tools')
  local buf = T.wait_buf('^mcp://tools$')
  local lines = T.lines(buf)
  T.contains(lines, '## demo')
  for _, tool in ipairs({ 'book_trip', 'login', 'analyze_flights', 'list_roots', 'count_down', 'add', 'echo' }) do
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
  argument_steps({ text = 'from the list' })
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

T.test(':Mcp call demo add: the sidecar asks each argument, the result buffer shows the sum', function()
  local calls = argument_steps({ a = '2', b = '40' })
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  local lines = T.lines(buf)
  T.contains(lines, '# demo › add')
  T.contains(lines, '2 + 40 = 42')
  T.contains(lines, '"sum": 42')
  T.eq('markdown', vim.bo[buf].filetype)
  T.contains(calls[1].opts.prompt, '[step 1/2] demo: arguments for add › a — First addend')
  T.contains(calls[2].opts.prompt, '[step 2/2] demo: arguments for add › b — Second addend')
  T.eq(false, calls[1].in_coroutine, 'vim.ui.input is called outside coroutines')
end)

T.test(':Mcp call: Escape on an argument cancels the call (the sidecar answers -32800)', function()
  T.script_input({ false })
  vim.cmd('Mcp call demo add')
  T.wait_notification('demo › add: call cancelled')
  T.eq(nil, T.find_buf('^mcp://result/demo/add/'))
end)

T.test(":Mcp call: the review offers the person's choices, and Cancel there makes no call", function()
  local _, selects = argument_steps({ a = '1', b = '2' }, 'Cancel')
  vim.cmd('Mcp call demo add')
  T.wait_notification('demo › add: call cancelled')
  T.eq(nil, T.find_buf('^mcp://result/demo/add/'))
  local review = selects[#selects].lines
  T.contains(review[1], 'Call add')
  -- The person's own call: nobody to tell no.
  T.not_contains(review, 'Decline')
  T.not_contains(review, 'tell demo no')
end)

T.test(":Mcp call: the call's progress shows in status() while it runs, and goes when it ends", function()
  T.eq('MCP 1/1', require('mcp_sidecar').status())
  local seen = {}
  vim.cmd('Mcp call demo count_down {"steps": 3, "delayMs": 200}')
  T.wait(function()
    local status = require('mcp_sidecar').status()
    if status:find('left', 1, true) then
      seen[status] = true
    end
    return T.find_buf('^mcp://result/demo/count_down/') ~= nil
  end, 'the count_down result', 15000)
  T.ok(seen['MCP 1/1 · demo: count_down 2 left (33%)'], vim.inspect(seen))
  T.wait(function()
    return require('mcp_sidecar').status() == 'MCP 1/1'
  end, 'the progress to end')
end)

T.test(':Mcp call with nothing picks the server and the tool (scripted vim.ui.select)', function()
  local _, selects = argument_steps({ text = 'hi there', ['@select'] = 'echo' })
  vim.cmd('Mcp call')
  local buf = T.wait_buf('^mcp://result/demo/echo/%d+$')
  T.contains(T.lines(buf), 'hi there')
  -- One running server: it is taken without asking; then the tool is picked.
  T.contains(selects[1].opts.prompt, 'Call which tool of demo?')
  T.contains(selects[1].lines, 'add — Adds a and b.')
end)

T.test(':Mcp call answered through the default vim.ui.input and vim.ui.select with typed keys', function()
  -- a, b (input()), then the review (inputlist(): 1 = Call add).
  T.feed('20<CR>22<CR>1<CR>')
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  T.contains(T.lines(buf), '20 + 22 = 42')
end)

T.test("tool_arguments = 'prompt': one JSON object through vim.ui.input", function()
  require('mcp_sidecar').setup({ tool_arguments = 'prompt' })
  local calls = T.script_input({ '{"a": 2, "b": 40}' })
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  T.contains(T.lines(buf), '2 + 40 = 42')
  T.contains(T.lines(buf), 'Arguments: `{"a":2,"b":40}`')
  T.contains(
    calls[1].opts.prompt,
    'demo › add arguments (JSON object; a (number, required), b (number, required))'
  )
  require('mcp_sidecar').setup({})
end)

T.test("tool_arguments = 'prompt': invalid JSON is asked again with the text kept", function()
  require('mcp_sidecar').setup({ tool_arguments = 'prompt' })
  local calls = T.script_input({ '{"a": 1, "b": }', '[1, 2]', '{"a": 1, "b": 2}' })
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  T.contains(T.lines(buf), '1 + 2 = 3')
  T.eq(3, #calls)
  T.contains(calls[2].opts.prompt, '⚠ not valid JSON')
  T.eq('{"a": 1, "b": }', calls[2].opts.default)
  T.contains(calls[3].opts.prompt, 'must be a JSON object')
  require('mcp_sidecar').setup({})
end)

T.test("tool_arguments = 'prompt' typed into the default vim.ui.input", function()
  require('mcp_sidecar').setup({ tool_arguments = 'prompt' })
  T.feed('{"a": 30, "b": 12}<CR>')
  vim.cmd('Mcp call demo add')
  T.contains(T.lines(T.wait_buf('^mcp://result/demo/add/%d+$')), '30 + 12 = 42')
  require('mcp_sidecar').setup({})
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

T.test(':Mcp call of a tool without arguments does not ask', function()
  vim.ui.input = function()
    error('must not ask')
  end
  vim.cmd('Mcp call demo list_roots')
  local buf = T.wait_buf('^mcp://result/demo/list_roots/%d+$')
  T.contains(T.lines(buf), 'listChangedCount')
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
  T.eq({
    'app',
    'call',
    'gateway',
    'log',
    'prompt',
    'read',
    'resources',
    'restart',
    'sampling-log',
    'servers',
    'signin',
    'signout',
    'skills',
    'tasks',
    'tools',
    'trust',
    'untrust',
  }, complete('', 'Mcp ', 4))
  T.eq({ 'read', 'resources', 'restart' }, complete('re', 'Mcp re', 6))
  T.eq({ 'demo' }, complete('', 'Mcp call ', 9))
  T.eq({ 'demo' }, complete('d', 'Mcp tools d', 11))
  T.eq({ 'demo' }, complete('', 'Mcp untrust ', 12))
  T.eq({}, complete('', 'Mcp signin ', 11), 'demo is stdio: it never signs in')
  local tools = complete('', 'Mcp call demo ', 14)
  table.sort(tools)
  T.eq({
    'add',
    'analyze_flights',
    'book_trip',
    'clock',
    'count_down',
    'echo',
    'list_roots',
    'login',
    'slow_task',
  }, tools)
  T.eq({ 'add', 'analyze_flights' }, complete('a', 'Mcp call demo a', 15))
  T.eq({ 'call' }, vim.fn.getcompletion('Mcp ca', 'cmdline'))
  T.eq({ 'close' }, complete('', 'Mcp app ', 8))
  T.eq({}, complete('', 'Mcp app close ', 14))
  T.eq({ 'cancel' }, complete('', 'Mcp tasks ', 10))
  T.eq({ 'demo' }, complete('', 'Mcp skills ', 11))
end)

T.test(':Mcp trust: nothing waiting, and a server that needs no trust is refused clearly', function()
  vim.cmd('Mcp trust')
  T.wait_notification('no server is waiting for trust')
  vim.cmd('Mcp trust demo')
  local n = T.wait_notification('trust failed')
  T.contains(n.message, 'not a server defined in the workspace')
end)

T.test(':Mcp sampling-log: the sidecar has Neovim open its audit log', function()
  local path = vim.fs.joinpath(vim.env.XDG_STATE_HOME, 'mcp-sidecar', 'sampling.jsonl')
  T.not_contains(vim.api.nvim_buf_get_name(0), 'sampling.jsonl')
  vim.cmd('Mcp sampling-log')
  T.wait(function()
    return vim.api.nvim_buf_get_name(0) == path
  end, 'the sampling log in the current window')
  T.ok(vim.uv.fs_stat(path), 'the sidecar created the log')
  T.eq(
    {},
    vim.tbl_filter(function(n)
      return n.message:find('sampling log', 1, true) ~= nil
    end, T.notifications),
    'no problem reported'
  )
end)

T.test(':Mcp log opens the log file', function()
  vim.cmd('Mcp log')
  T.eq(vim.fs.joinpath(vim.fn.stdpath('log'), 'mcp-sidecar.log'), vim.api.nvim_buf_get_name(0))
  T.ok(#T.lines(0) > 1, 'the log has lines')
  T.contains(T.lines(0), 'demo')
end)

T.test(':Mcp signin with no http server says so, without asking', function()
  vim.ui.select = function(_, opts)
    error('must not ask: ' .. tostring(opts.prompt))
  end
  vim.cmd('Mcp signin')
  T.wait_notification('no http server is configured (only they sign in)')
  vim.cmd('Mcp signin demo')
  T.contains(T.wait_notification('sign-in to demo failed').message, '[refused]')
end)

T.test("a listServers row's auth as one line, never more than the row says", function()
  local format = require('mcp_sidecar.format')
  local now = 1796130000
  T.eq(nil, format.auth(nil, now))
  T.eq('not signed in', format.auth({ signedIn = false }, now))
  T.eq(
    'not signed in (auth.example.com)',
    format.auth({ signedIn = false, issuer = 'https://auth.example.com/t' }, now)
  )
  T.eq(
    'signed in at mcp.linear.app · scopes read, write · token expires in 1 h ('
      .. os.date('%H:%M', 1796133600)
      .. ')',
    format.auth({
      signedIn = true,
      issuer = 'https://mcp.linear.app',
      scopes = { 'read', 'write' },
      expiresAt = 1796133600,
    }, now)
  )
  T.eq('signed in', format.auth({ signedIn = true }, now))
  T.contains(format.auth({ signedIn = true, expiresAt = now - 180 }, now), 'token expired 3 min ago')
  T.eq('127.0.0.1:8080', format.host('http://127.0.0.1:8080/'))
end)

T.test('the statusline counts the servers that need a sign-in', function()
  local state = require('mcp_sidecar.state')
  state.update(-1, { name = 'a', state = 'running' })
  state.update(-1, { name = 'b', state = 'needsAuth', message = 'needs you to sign in at auth.example.com' })
  T.eq('MCP 1/2 🔑1', state.status(-1))
  state.clear(-1)
end)
