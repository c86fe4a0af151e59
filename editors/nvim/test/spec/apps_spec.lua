-- MCP Apps (docs/apps.md) in real Neovim: a tool's view opens in the browser, on the sidecar's
-- loopback page. The server is the basic app server of @modelcontextprotocol/ext-apps
-- (server-basic-vanillajs, from scripts/install-peers.sh: MCP_APP_BASIC_JS, run by MCP_APP_NODE);
-- vim.ui.open is the browser here, and curl fetches what it would.
local T = require('helpers')

local SERVER = 'basic'
local TOOL = 'get-time'

local function start()
  if T.server(SERVER) then
    return
  end
  local js, node = os.getenv('MCP_APP_BASIC_JS'), os.getenv('MCP_APP_NODE')
  if not (js and vim.uv.fs_stat(js) and node and vim.fn.executable(node) == 1) then
    T.skip(
      'MCP_APP_BASIC_JS and MCP_APP_NODE must name the basic app server and its Node '
        .. '(bash scripts/install-peers.sh; run.sh sources .cache/peers/env.sh)'
    )
  end
  T.start_sidecar({ servers = { [SERVER] = { command = node, args = { js, '--stdio' } } } })
  T.wait_running(SERVER, 30000)
end

--- vim.ui.open as a browser that only remembers the addresses; returns their list.
local function browser()
  local opened = {}
  vim.ui.open = function(uri)
    table.insert(opened, uri)
    return { wait = function() end }, nil
  end
  return opened
end

--- GET `url`: (status, body).
--- Whether nothing listens at `url` any more (a closed view's page listener stops with it).
local function gone(url)
  local done = vim.system({ 'curl', '-sS', url }, { text = true }):wait(10000)
  return done.code == 7, 'curl exit ' .. done.code .. ': ' .. tostring(done.stderr)
end

local function get(url)
  local done = vim.system({ 'curl', '-sS', '-w', '\n%{http_code}', url }, { text = true }):wait(10000)
  T.eq(0, done.code, 'curl ' .. url .. ': ' .. tostring(done.stderr))
  local body, status = done.stdout:match('^(.*)\n(%d+)$')
  return tonumber(status), body
end

--- The same address with another token (its last hex digit changed).
local function wrong_token(url)
  return url:sub(1, -2) .. (url:sub(-1) == '0' and '1' or '0')
end

local function list_apps()
  return T.exec('mcp-sidecar.listApps')
end

local function views()
  return require('mcp_sidecar.views')
end

-- Without a server ---------------------------------------------------------------------------

T.test('the tool pick of :Mcp call marks a tool with a view', function()
  local line = require('mcp_sidecar.commands.tools').pick_line
  local ui = { resourceUri = 'ui://get-time/mcp-app.html' }
  T.eq(
    'get-time (view) — Returns the time.',
    line({ name = TOOL, description = 'Returns the time.', ui = ui })
  )
  T.eq('add — Adds.', line({ name = 'add', description = 'Adds.' }))
  T.eq('add', line({ name = 'add', ui = vim.NIL }))
  T.eq('add', line({ name = 'add', ui = { resourceUri = vim.NIL } }))
  T.eq('a?b (view)', line({ name = 'a\27b', label = 'a?b', ui = ui }))
end)

T.test('mcp-sidecar/closeApp names the view of a known tool; anything else is one short line', function()
  local rows = views().set(7, {
    {
      view = 'v1',
      server = SERVER,
      tool = TOOL,
      title = 'basic: Get Time',
      url = 'http://127.0.0.1:1/view/00',
    },
    'not a row',
    { view = 2 },
  })
  T.eq(1, #rows, 'malformed rows are left out')
  T.notify_handler('mcp-sidecar/closeApp', { view = 'v1', reason = 'the server stopped' }, 7)
  T.eq('mcp-sidecar: view of basic: Get Time closed: the server stopped', T.notifications[1].message)
  T.eq(nil, views().row(7, 'v1'), 'a closed view is forgotten')
  T.notify_handler('mcp-sidecar/closeApp', { view = 'v1', reason = 'line\nbreak \226\128\174evil' }, 7)
  T.eq('mcp-sidecar: view v1 closed: line break evil', T.notifications[2].message)
  T.notify_handler('mcp-sidecar/closeApp', { view = 3 }, 7)
  T.notify_handler('mcp-sidecar/closeApp', nil, 7)
  T.eq(2, #T.notifications, 'a malformed closeApp is ignored')
end)

T.test("a view's line in :Mcp app: its state, its last message and model context, on one line", function()
  local row = { view = 'v1', server = SERVER, tool = TOOL, title = 'basic: Get Time', initialized = false }
  T.eq('basic: Get Time · the app has not started', views().line(row))
  row.initialized = true
  row.message = 'hello\n\226\128\174there'
  row.modelContext = { structuredContent = { time = '12:00' } }
  T.eq(
    'basic: Get Time · running · message: hello there · model context: {"time":"12:00"}',
    views().line(row)
  )
  row.modelContext = { content = { { type = 'text', text = string.rep('x', 100) } } }
  T.eq(60, vim.fn.strchars(views().summary(row.modelContext)), 'a long text is cut')
  T.eq(nil, views().summary({ content = { { type = 'image', data = 'AAAA' } } }))
  T.eq(nil, views().summary(' \n '))
  T.eq(nil, views().summary(vim.NIL))
  T.eq('hi', views().summary({ content = { type = 'text', text = 'hi' } }), 'one content block')
end)

-- With the basic app server ------------------------------------------------------------------

local first = {}

T.test(':Mcp call of a tool with a view opens its loopback page with vim.ui.open', function()
  start()
  local opened = browser()
  local selects = T.script_select(function(lines, _, opts)
    if opts.prompt:find('Call which tool', 1, true) then
      return T.pick(TOOL)(lines)
    end
    error('unexpected select: ' .. tostring(opts.prompt) .. ' ' .. vim.inspect(lines))
  end)
  vim.cmd('Mcp call ' .. SERVER)
  T.wait_buf('^mcp://result/basic/get%-time/%d+$', 20000)
  T.contains(selects[1].lines, TOOL .. ' (view)')

  local url = T.wait(function()
    return opened[1]
  end, 'the sidecar to open the view', 20000)
  local token = url:match('^http://127%.0%.0%.1:%d+/view/(%x+)$')
  T.ok(token and #token == 64, 'the loopback page with a 32-byte token: ' .. url)
  first.url = url

  local status, page = get(url)
  T.eq(200, status, 'the page')
  T.contains(page, 'host.js')
  T.not_contains(page:lower(), '<iframe', 'the page builds the iframe with its script')
  T.eq(200, (get(url .. '/host.js')), 'the bundle')

  local wrong = wrong_token(url)
  local wrong_status, wrong_body = get(wrong)
  T.eq(404, wrong_status, 'another token')
  T.eq('', wrong_body, 'a 404 has no body')
  T.eq(404, (get(wrong .. '/host.js')), 'the bundle under another token')
end)

T.test(':Mcp app lists the view; choosing it opens the same page again', function()
  start()
  T.ok(first.url, 'the first case opened a view')
  local rows = list_apps()
  T.eq(1, #rows, vim.inspect(rows))
  T.eq(SERVER, rows[1].server)
  T.eq(TOOL, rows[1].tool)
  T.eq(first.url, rows[1].url)
  T.eq(false, rows[1].initialized == true, 'no browser ran the app')

  local opened = browser()
  local selects = T.script_select(function(lines)
    return #lines == 1 and 1 or nil
  end)
  vim.cmd('Mcp app')
  T.wait(function()
    return opened[1]
  end, 'the sidecar to open the view again')
  T.eq({ first.url }, opened)
  T.contains(selects[1].opts.prompt, 'Open which app view')
  T.eq({ views().line(rows[1]) }, selects[1].lines)
  T.contains(selects[1].lines[1], 'the app has not started')
end)

T.test(':Mcp app close closes the view: it is gone from listApps and so is its page', function()
  start()
  T.ok(first.url, 'the first case opened a view')
  local selects = T.script_select(function(lines)
    return #lines == 1 and 1 or nil
  end)
  vim.cmd('Mcp app close')
  T.wait_notification('closed the view of ')
  T.contains(selects[1].opts.prompt, 'Close which app view')
  T.eq({}, list_apps())
  T.ok(gone(first.url))

  vim.cmd('Mcp app')
  T.wait_notification('no app view is open')
end)

T.test('a view the sidecar closes (its browser tab went away) is one message naming the tool', function()
  start()
  local opened = browser()
  T.exec('mcp-sidecar.callTool', { server = SERVER, tool = TOOL, arguments = vim.empty_dict() })
  local url = T.wait(function()
    return opened[1]
  end, 'the sidecar to open the view', 20000)
  local rows = list_apps()
  T.eq(1, #rows, vim.inspect(rows))
  local row = rows[1]
  T.eq(url, row.url)
  local client = require('mcp_sidecar').client()
  T.wait(function()
    return views().row(client.id, row.view)
  end, 'the plugin to learn the view it opened')

  -- What the page sends when its tab closes (pagehide): the sidecar closes the view and says so.
  local done = vim
    .system({ 'curl', '-sS', '-X', 'POST', '-w', '%{http_code}', url .. '/close' }, { text = true })
    :wait(10000)
  T.eq('204', done.stdout, 'POST close: ' .. tostring(done.stderr))
  local told = T.wait_notification(' closed: ')
  T.eq('mcp-sidecar: view of ' .. views().name(row) .. ' closed: its page was closed', told.message)
  T.eq(nil, views().row(client.id, row.view), 'the plugin forgot it')
  T.eq({}, list_apps())
  T.ok(gone(url))
end)
