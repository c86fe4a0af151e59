-- OAuth sign-in end to end: the real sidecar and an OAuth-protected MCP server (the Python SDK's
-- authorization and resource server, fixtures/python/oauth_server.py, which approves at once).
-- The browser step is the test's: it fetches the authorization URL and then its redirect.
local T = require('helpers')

local SERVER = 'secure'

--- The fixture, on a random port; returns its MCP endpoint's URL.
local fixture = {}

local function start_fixture()
  local python = os.getenv('MCP_PYTHON')
  T.ok(
    python and vim.fn.executable(python) == 1,
    'MCP_PYTHON must name the peers venv python (bash scripts/install-peers.sh; run.sh sources .cache/peers/env.sh)'
  )
  local script = T.repo_root .. '/fixtures/python/oauth_server.py'
  T.ok(vim.uv.fs_stat(script), script .. ' is missing')
  local out = ''
  fixture.stderr = {}
  fixture.proc = vim.system({ python, script, '--port', '0' }, {
    stdout = function(_, data)
      out = out .. (data or '')
    end,
    stderr = function(_, data)
      table.insert(fixture.stderr, data)
    end,
  })
  fixture.url = T.wait(function()
    return out:match('(http://127%.0%.0%.1:%d+/mcp)')
  end, 'the OAuth fixture to print its URL (stderr: ' .. table.concat(fixture.stderr, '') .. ')', 30000)
  fixture.host = fixture.url:match('^http://([^/]+)')
  return fixture.url
end

--- The browser: GET the authorization URL without following it, and return where the
--- authorization server redirects (the sidecar's loopback callback with code, state and iss).
local function authorize(url, on_redirect)
  local argv = { 'curl', '-sS', '-o', '/dev/null', '-w', '%{redirect_url}', url }
  if not on_redirect then
    local done = vim.system(argv, { text = true }):wait(15000)
    T.eq(0, done.code, 'curl the authorization URL: ' .. tostring(done.stderr))
    return done.stdout
  end
  vim.system(argv, { text = true }, function(done)
    on_redirect(done.code == 0 and done.stdout or nil, done.stderr)
  end)
end

--- The whole browser step, asynchronously (as a browser is): the authorization URL, then the
--- redirect, which reaches the sidecar's listener.
local browser = {}
local function browse(url)
  table.insert(browser, { url = url })
  local visit = browser[#browser]
  authorize(url, function(location, err)
    visit.location = location
    if not location or not location:match('^http://127%.0%.0%.1:%d+/callback%?') then
      visit.error = 'no redirect to the loopback callback: ' .. tostring(location) .. ' ' .. tostring(err)
      return
    end
    vim.system({ 'curl', '-sS', location }, { text = true }, function(done)
      visit.page, visit.code = done.stdout, done.code
    end)
  end)
end

--- vim.ui.select scripted by prompt: `answers[needle]` (a substring of the prompt) gives the
--- needle of the line to pick, false to leave the question open (the sidecar closes it), or a
--- function(lines, items, opts). Returns the calls ({ prompt, lines }).
local function selects(answers)
  local calls = {}
  vim.ui.select = function(items, opts, on_choice)
    local lines = vim.tbl_map(opts.format_item or tostring, items)
    table.insert(calls, { prompt = opts.prompt, lines = lines })
    for needle, answer in pairs(answers) do
      if opts.prompt:find(needle, 1, true) then
        if answer == false then
          return
        end
        local index = type(answer) == 'function' and answer(lines, items, opts) or T.pick(answer)(lines)
        vim.schedule(function()
          on_choice(items[index], index)
        end)
        return
      end
    end
    error('unexpected select: ' .. tostring(opts.prompt) .. ' ' .. vim.inspect(lines))
  end
  return calls
end

local function prompts_of(calls)
  return vim.tbl_map(function(c)
    return c.prompt
  end, calls)
end

local function state()
  local row = T.server(SERVER)
  return row and row.state
end

local function wait_state(want, timeout)
  T.wait(function()
    return state() == want
  end, ('%s to be %s (is %s)'):format(SERVER, want, tostring(state())), timeout or 30000)
end

local function health_lines()
  vim.cmd('checkhealth mcp_sidecar')
  local lines = T.lines(0)
  vim.cmd('bwipeout!')
  return lines
end

local function health_line(lines)
  for _, line in ipairs(lines) do
    if line:find('server ' .. SERVER .. ':', 1, true) then
      return line
    end
  end
  error('no health line for ' .. SERVER .. ':\n' .. table.concat(lines, '\n'))
end

local function servers_buffer()
  vim.cmd('Mcp servers')
  local buf = T.wait_buf('^mcp://servers$')
  T.wait(function()
    return table.concat(T.lines(buf), '\n'):find(SERVER, 1, true)
  end, 'the servers buffer to list ' .. SERVER)
  local lines = T.lines(buf)
  vim.cmd('bwipeout!')
  return lines
end

local whoami_count = 0
local function call_whoami()
  whoami_count = whoami_count + 1
  vim.cmd(('Mcp call %s whoami {}'):format(SERVER))
  local pattern = ('^mcp://result/%s/whoami/%%d+$'):format(SERVER)
  local buf
  T.wait(function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local n = vim.api.nvim_buf_get_name(b):match('/(%d+)$')
      if vim.api.nvim_buf_get_name(b):match(pattern) and tonumber(n) and tonumber(n) >= whoami_count then
        buf = b
        return true
      end
    end
  end, 'the whoami result', 20000)
  return T.lines(buf)
end

local the_url -- the authorization URL of the first sign-in

T.test('a 401 asks "needs you to sign in at <host>"; Sign in, Copy URL, Open, the browser: running', function()
  local url = start_fixture()
  local opened = {}
  vim.ui.open = function(uri)
    table.insert(opened, uri)
    browse(uri)
    return { wait = function() end }, nil
  end
  local consent = 0
  local calls = selects({
    [SERVER .. ' needs you to sign in at ' .. fixture.host] = 'Sign in',
    [SERVER .. ': sign in at ' .. fixture.host] = function(lines)
      consent = consent + 1
      return T.pick(consent == 1 and 'Copy URL' or ('Open ' .. fixture.host .. ' in the browser'))(lines)
    end,
    [SERVER .. ': waiting for the sign-in at ' .. fixture.host] = false,
  })
  T.start_sidecar({ servers = { [SERVER] = { url = url } } })
  wait_state('running')

  T.eq(1, #opened, 'the browser opened once')
  the_url = opened[1]
  T.eq(the_url, vim.fn.getreg('"'), 'Copy URL put the authorization URL in the unnamed register')
  local visit = browser[1]
  T.eq(nil, visit.error)
  T.contains(visit.location, 'code=')
  T.contains(visit.location, 'state=')

  T.eq(SERVER .. ' needs you to sign in at ' .. fixture.host, calls[1].prompt)
  T.contains(calls[1].lines[1], 'Sign in — open ' .. fixture.host .. ' in the browser')
  T.eq('Not now', calls[1].lines[2])
  local ask = calls[2].lines
  T.contains(ask[1], 'Open ' .. fixture.host .. ' in the browser — ' .. the_url)
  T.eq('Copy URL', ask[2])
  T.contains(ask[3], 'Paste the address you were redirected to')
  T.eq('Cancel', ask[4])
  T.contains(calls[3].lines[2], 'Copy URL (copied)', 'asked again after copying')
  T.eq({}, require('mcp_sidecar.prompts').list(), 'the waiting prompt was closed by the sidecar')

  T.contains(call_whoami(), '# ' .. SERVER .. ' › whoami')
end)

T.test(':Mcp servers and :checkhealth show the sign-in, never a token', function()
  local lines = servers_buffer()
  local text = table.concat(lines, '\n')
  T.contains(text, 'signed in at ' .. fixture.host)
  T.contains(text, 'token expires in ')
  T.not_contains(text, 'code=')
  local line = health_line(health_lines())
  T.contains(line, '✅ OK server ' .. SERVER .. ': running')
  T.contains(line, 'signed in at ' .. fixture.host)
end)

T.test(':Mcp signout → needsAuth in the servers list, the statusline and :checkhealth', function()
  vim.ui.select = function(_, opts)
    error('signout must not ask: ' .. tostring(opts.prompt))
  end
  vim.cmd('Mcp signout ' .. SERVER)
  local n = T.wait_notification('signed out of ' .. SERVER)
  T.contains(n.message, 'the grant was revoked at the authorization server')
  wait_state('needsAuth')
  T.eq('needs you to sign in at ' .. fixture.host, T.server(SERVER).message)
  T.contains(require('mcp_sidecar').status(), '🔑1')

  local text = table.concat(servers_buffer(), '\n')
  T.contains(text, 'needsAuth')
  T.contains(text, 'needs you to sign in at ' .. fixture.host)
  T.contains(text, ':Mcp signin ' .. SERVER)
  T.contains(text, 'not signed in')

  local lines = health_lines()
  local line = health_line(lines)
  T.contains(line, '⚠️ WARNING server ' .. SERVER .. ': needsAuth')
  T.contains(line, 'needs you to sign in at ' .. fixture.host)
  T.contains(table.concat(lines, '\n'), ':Mcp signin ' .. SERVER, 'the fix is shown')
end)

T.test(':Mcp signin completes the http servers only', function()
  T.eq({ SERVER }, require('mcp_sidecar.commands').complete('', 'Mcp signin ', 11))
  T.eq({ SERVER }, require('mcp_sidecar.commands').complete('s', 'Mcp signout s', 13))
end)

T.test(':Mcp signin without a server picks among the http servers; no question first; paste', function()
  local page_url -- the authorization URL this sign-in shows
  local inputs = T.script_input_fn(function(opts)
    T.contains(opts.prompt, SERVER .. ': paste the address you were redirected to')
    T.contains(opts.prompt, 'http://127.0.0.1:')
    -- The browser on another machine: it follows the URL, and the person copies where it landed.
    return authorize(T.ok(page_url, 'the sign-in page was shown first'))
  end)
  local calls = selects({
    ['Sign in to which MCP server?'] = SERVER,
    [SERVER .. ': sign in at ' .. fixture.host] = function(lines)
      page_url = lines[1]:match(' — (%S+)')
      return T.pick('Paste the address you were redirected to')(lines)
    end,
    [SERVER .. ': waiting for the sign-in at ' .. fixture.host] = false,
  })
  vim.cmd('Mcp signin')
  T.wait_notification(SERVER .. ': running', 30000)
  wait_state('running')
  T.eq(1, #inputs, 'asked for the address once')
  T.eq(1, #calls[1].lines, 'only the http server is offered: ' .. vim.inspect(calls[1].lines))
  T.contains(calls[1].lines[1], SERVER .. ' (needsAuth)')
  T.ok(page_url ~= the_url, 'a new sign-in has a new authorization URL (state)')
  for _, prompt in ipairs(prompts_of(calls)) do
    T.not_contains(prompt, 'needs you to sign in', 'signin goes straight to the sign-in page')
  end
  T.contains(call_whoami(), '# ' .. SERVER .. ' › whoami')
end)
