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
  fixture.proc = T.spawn({ python, script, '--port', '0' }, {
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
  -- The sidecar names the authorization server by its host; the auth rows by the issuer's
  -- authority (with the port).
  fixture.authority = fixture.url:match('^http://([^/]+)')
  fixture.host = fixture.authority:match('^[^:]+')
  return fixture.url
end

--- Every token string the fixture issued so far (its /test/events endpoint).
local function issued_tokens()
  local events = fixture.url:gsub('/mcp$', '/test/events')
  local done = vim.system({ 'curl', '-sS', events }, { text = true }):wait(10000)
  T.eq(0, done.code, 'GET /test/events: ' .. tostring(done.stderr))
  local tokens = vim.json.decode(done.stdout).tokens
  local all = vim.list_extend(vim.list_extend({}, tokens.access), tokens.refresh)
  T.ok(#all > 0, 'the fixture issued tokens')
  return all
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
--- redirect, which reaches the sidecar's listener. Like a person, it gets there after the
--- sidecar shows that it waits (`browser.waiting()`), so that prompt is seen and then closed.
local browser = { visits = {} }
local function deliver(visit)
  if visit.delivered or not visit.location or not browser.waited then
    return
  end
  visit.delivered = true
  if not visit.location:match('^http://127%.0%.0%.1:%d+/callback%?') then
    visit.error = 'no redirect to the loopback callback: ' .. visit.location
    return
  end
  vim.system({ 'curl', '-sS', visit.location }, { text = true }, function(done)
    visit.page, visit.code = done.stdout, done.code
  end)
end

function browser.open(url)
  local visit = { url = url }
  table.insert(browser.visits, visit)
  authorize(url, function(location, err)
    vim.schedule(function()
      visit.location = location or ('(curl failed: ' .. tostring(err) .. ')')
      deliver(visit)
    end)
  end)
end

--- Replaces vim.ui.open (the plugin's showDocument handler opens external URLs with it) by
--- this browser, for a new sign-in; returns the list of the URLs opened.
function browser.intercept()
  local opened = {}
  browser.visits, browser.waited = {}, false
  vim.ui.open = function(uri)
    table.insert(opened, uri)
    browser.open(uri)
    return { wait = function() end }, nil
  end
  return opened
end

function browser.waiting()
  browser.waited = true
  for _, visit in ipairs(browser.visits) do
    deliver(visit)
  end
end

--- What the case saw so far, for a failure's message: the prompts (and the notifications).
local seen = {}

--- vim.ui.select scripted by prompt: `answers[needle]` (a substring of the prompt) gives the
--- needle of the line to pick, false to leave the question open (the sidecar closes it), or a
--- function(lines, items, opts) returning an index (or false). Returns the calls ({ prompt, lines }).
local function selects(answers)
  local calls = {}
  seen.calls = calls
  vim.ui.select = function(items, opts, on_choice)
    local lines = vim.tbl_map(opts.format_item or tostring, items)
    table.insert(calls, { prompt = opts.prompt, lines = lines })
    for needle, answer in pairs(answers) do
      if opts.prompt:find(needle, 1, true) then
        if answer == false then
          return
        end
        local index
        if type(answer) == 'function' then
          index = answer(lines, items, opts)
        else
          index = T.pick(answer)(lines)
        end
        if index == false then
          return
        end
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
  local ok, err = pcall(T.wait, function()
    return state() == want
  end, ('%s to be %s'):format(SERVER, want), timeout or 30000)
  if not ok then
    local notes = vim.tbl_map(function(n)
      return n.message
    end, T.notifications)
    error(
      ('%s (is %s)\nprompts: %s\nnotifications: %s'):format(
        err,
        tostring(state()),
        vim.inspect(seen.calls),
        vim.inspect(notes)
      ),
      2
    )
  end
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

T.test(
  'a 401 asks "needs you to sign in at <host>"; Sign in, Copy URL, Open, the browser: running',
  function()
    local url = start_fixture()
    local opened = browser.intercept()
    local consent = 0
    local calls = selects({
      [SERVER .. ' needs you to sign in at ' .. fixture.host] = 'Sign in',
      [SERVER .. ': sign in at ' .. fixture.host] = function(lines)
        consent = consent + 1
        return T.pick(consent == 1 and 'Copy URL' or ('Open ' .. fixture.host .. ' in the browser'))(lines)
      end,
      [SERVER .. ': waiting for the sign-in at ' .. fixture.host] = function()
        browser.waiting()
        return false
      end,
    })
    T.start_sidecar({ servers = { [SERVER] = { url = url } } })
    wait_state('running')

    T.eq(1, #opened, 'the browser opened once')
    the_url = opened[1]
    T.eq(the_url, vim.fn.getreg('"'), 'Copy URL put the authorization URL in the unnamed register')
    local visit = browser.visits[1]
    T.eq(nil, visit.error)
    T.contains(visit.location, 'code=')
    T.contains(visit.location, 'state=')
    T.wait(function()
      return visit.code ~= nil
    end, 'the callback page')
    T.eq(0, visit.code, 'the listener answered the browser')
    T.contains(visit.page, 'close this')

    T.eq(SERVER .. ' needs you to sign in at ' .. fixture.host, calls[1].prompt)
    T.contains(calls[1].lines[1], 'Sign in — asks before it opens the sign-in page in the browser')
    T.eq('Not now', calls[1].lines[2])
    local ask = calls[2].lines
    -- The URL is shown once, cut to a line; Copy URL copies it whole.
    T.contains(ask[1], 'Open ' .. fixture.host .. ' in the browser — ' .. the_url:sub(1, 150))
    T.eq('Copy URL — the whole address, to paste into a browser', ask[2])
    T.contains(
      ask[3],
      'Paste the address you were redirected to — when the browser could not reach http://127.0.0.1:'
    )
    T.contains(ask[4], 'Cancel')
    T.contains(calls[3].lines[2], 'Copy URL (copied)', 'asked again after copying')
    T.eq(
      SERVER .. ': waiting for the sign-in at ' .. fixture.host,
      calls[4].prompt,
      'then it waits for the browser'
    )
    T.eq({}, require('mcp_sidecar.prompts').list(), 'the waiting prompt was closed by the sidecar')

    T.contains(call_whoami(), '# ' .. SERVER .. ' › whoami')
  end
)

T.test(':Mcp servers and :checkhealth show the sign-in, never a token', function()
  local text = table.concat(servers_buffer(), '\n')
  T.contains(text, 'signed in at ' .. fixture.authority)
  T.contains(text, 'token expires in ')
  local health = T.health_lines()
  local line = health_line(health)
  T.contains(line, '✅ OK server ' .. SERVER .. ': running')
  T.contains(line, 'signed in at ' .. fixture.authority)
  local shown = table.concat({ text, table.concat(health, '\n'), vim.inspect(T.server(SERVER)) }, '\n')
  for _, token in ipairs(issued_tokens()) do
    T.not_contains(shown, token, 'a token is shown')
  end
end)

T.test(':Mcp signout → needsAuth in the servers list, the statusline and :checkhealth', function()
  vim.ui.select = function(_, opts)
    error('signout must not ask: ' .. tostring(opts.prompt))
  end
  vim.cmd('Mcp signout ' .. SERVER)
  local n = T.wait_notification('signed out of ' .. SERVER)
  T.contains(n.message, 'the grant was revoked at the authorization server')
  wait_state('needsAuth')
  T.contains(T.server(SERVER).message, 'needs you to sign in at ' .. fixture.host)
  T.contains(require('mcp_sidecar').status(), '🔑1')

  local text = table.concat(servers_buffer(), '\n')
  T.contains(text, 'needsAuth')
  T.contains(text, 'needs you to sign in at ' .. fixture.host)
  T.contains(text, ':Mcp signin ' .. SERVER)
  T.contains(text, 'not signed in')

  local lines = T.health_lines()
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
  local page_url -- the authorization URL of this sign-in
  local consent = 0
  local inputs = T.script_input_fn(function(opts)
    T.contains(opts.prompt, SERVER .. ': paste the address you were redirected to')
    T.contains(opts.prompt, 'http://127.0.0.1:')
    -- The browser on another machine: it follows the URL, and the person copies where it landed.
    return authorize(T.ok(page_url, 'the sign-in page was shown first'))
  end)
  local calls = selects({
    ['Sign in to which MCP server?'] = SERVER,
    [SERVER .. ': sign in at ' .. fixture.host] = function(lines)
      consent = consent + 1
      if consent == 1 then
        return T.pick('Copy URL')(lines)
      end
      -- The whole URL, as Copy URL left it in the unnamed register (the prompt shows it cut).
      page_url = vim.fn.getreg('"')
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

T.test(':Mcp signin while signed in restarts on the grant, without asking', function()
  local calls = selects({})
  vim.cmd('Mcp signin ' .. SERVER)
  T.contains(T.wait_notification(SERVER .. ': running', 20000).message, 'signed in at ' .. fixture.authority)
  T.eq({}, calls, 'nothing asked')
end)

T.test('signed out, :Mcp signin then Cancel: "sign-in to <server> cancelled", needsAuth', function()
  vim.cmd('Mcp signout ' .. SERVER)
  wait_state('needsAuth')
  local calls = selects({ [SERVER .. ': sign in at ' .. fixture.host] = 'Cancel' })
  vim.cmd('Mcp signin ' .. SERVER)
  T.wait_notification('sign-in to ' .. SERVER .. ' cancelled', 20000)
  T.eq({ SERVER .. ': sign in at ' .. fixture.host }, prompts_of(calls), 'only the sign-in page was asked')
  wait_state('needsAuth') -- its serverStatus may come after the command's answer
end)

T.test('a restart asks again; Not now → needsAuth, counted in the statusline', function()
  local calls = selects({ [SERVER .. ' needs you to sign in at ' .. fixture.host] = 'Not now' })
  vim.cmd('Mcp restart ' .. SERVER)
  T.wait(function()
    return #calls > 0
  end, 'the sign-in question after the restart')
  wait_state('needsAuth')
  T.contains(T.server(SERVER).message, 'needs you to sign in at ' .. fixture.host)
  T.eq('MCP 1/2 🔑1', require('mcp_sidecar').status())
end)

T.test('s on a server in :Mcp servers signs in to it: Open, the browser, running', function()
  local opened = browser.intercept()
  selects({
    [SERVER .. ': sign in at ' .. fixture.host] = 'Open ' .. fixture.host .. ' in the browser',
    [SERVER .. ': waiting for the sign-in at ' .. fixture.host] = function()
      browser.waiting()
      return false
    end,
  })
  vim.cmd('Mcp servers')
  local buf = T.wait_buf('^mcp://servers$')
  T.wait(function()
    return vim.api.nvim_get_current_buf() == buf
      and table.concat(T.lines(buf), '\n'):find('needsAuth', 1, true)
  end, 'the servers buffer with the server that needs a sign-in')
  for i, line in ipairs(T.lines(buf)) do
    if vim.startswith(line, SERVER .. ' ') then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
    end
  end
  vim.api.nvim_feedkeys('s', 'mx', false)
  T.wait_notification(SERVER .. ': running', 30000)
  T.eq(1, #opened, 'the browser opened once')
  T.contains(call_whoami(), '# ' .. SERVER .. ' › whoami')
end)
