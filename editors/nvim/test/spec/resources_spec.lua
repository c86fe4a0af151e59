-- Resources, prompts and completions (issue 15) in real Neovim: server-everything (the peer from
-- scripts/install-peers.sh; run.sh sources .cache/peers/env.sh) through the real sidecar.
local T = require('helpers')

local SERVER = 'everything'

--- The sidecar with server-everything and the resource templates fixture
--- (fixtures/node/resource_templates_server.mjs) beside the demo; the server's MCP log lines as
--- they come.
local logged = {}
local NOTES = 'notes'
local function start()
  if T.server(SERVER) then
    return
  end
  local js = os.getenv('MCP_EVERYTHING_JS')
  T.ok(
    js and vim.uv.fs_stat(js),
    'MCP_EVERYTHING_JS must name server-everything (bash scripts/install-peers.sh; run.sh sources .cache/peers/env.sh)'
  )
  local modules = os.getenv('MCP_PEERS_NODE_MODULES')
  T.ok(
    modules and vim.uv.fs_stat(modules .. '/@modelcontextprotocol/sdk'),
    'MCP_PEERS_NODE_MODULES must hold the TypeScript SDK (bash scripts/install-peers.sh)'
  )
  local default = vim.lsp.handlers['window/logMessage']
  vim.lsp.handlers['window/logMessage'] = function(err, params, ctx)
    table.insert(logged, params.message)
    return default(err, params, ctx)
  end
  local fixture = T.repo_root .. '/fixtures/node/resource_templates_server.mjs'
  T.start_sidecar({
    servers = {
      [SERVER] = { command = 'node', args = { js, 'stdio' } },
      [NOTES] = { command = 'node', args = { fixture, modules } },
    },
  })
  T.wait_running(SERVER, 30000)
  T.wait_running(NOTES, 30000)
end

local function wait_logged(needle)
  return T.wait(function()
    for _, line in ipairs(logged) do
      if line:find(needle, 1, true) then
        return line
      end
    end
  end, 'a log line containing "' .. needle .. '"')
end

local function resource_buf_of(server, uri)
  return T.wait_buf('^' .. vim.pesc('mcp://resource/' .. server .. '/' .. uri) .. '$', 20000)
end

local function resource_buf(uri)
  return resource_buf_of(SERVER, uri)
end

--- `mcp-sidecar.expandUriTemplate` as the plugin sends it, run to its end: (result, err).
local function expand(template, values)
  local exec = require('mcp_sidecar.exec')
  local client = require('mcp_sidecar').client()
  local done
  require('mcp_sidecar.async').run(function()
    done = { exec.run(client, exec.CMD.expand_uri_template, { uriTemplate = template, values = values }) }
  end)
  T.wait(function()
    return done
  end, 'the expansion of ' .. template)
  return done[1], done[2]
end

T.test('URI templates: the sidecar names the variables and expands all four levels', function()
  start()
  local template = 'api://s/{seg}{/path*}{?q,n}{&keys*}{#frag:3}'
  local named = assert(expand(template))
  T.eq({ 'seg', 'path', 'q', 'n', 'keys', 'frag' }, named.variables)
  T.eq('api://s/', named.uri)
  local expanded =
    assert(expand(template, { seg = 'a b', path = 'x/y', q = 'x&y', n = '2', frag = 'abcdef' }))
  T.eq('api://s/a%20b/x%2Fy?q=x%26y&n=2#abc', expanded.uri)
  T.eq('file:///a/b/c', assert(expand('file:///{+path}', { path = 'a/b/c' })).uri)
  for bad, needle in pairs({
    ['demo://{unclosed'] = 'the "{" at character 8 of the URI template is not closed',
    ['demo://a}b'] = 'has no "{" before it',
    ['demo://{bad name}'] = 'is not a variable name',
    ['demo://{}'] = 'names no variable',
    ['demo://{=x}'] = 'reserves for future extensions',
  }) do
    local result, err = expand(bad)
    T.eq(nil, result, bad)
    T.eq('refused', vim.tbl_get(err, 'data', 'kind'), bad)
    T.contains(err.message, needle)
  end
end)

T.test('filetypes from the mimeType, else from the URI', function()
  local ft = require('mcp_sidecar.resources').filetype
  T.eq('markdown', ft('text/markdown', 'demo://x'))
  T.eq('json', ft('application/json; charset=utf-8', 'demo://x'))
  T.eq('json', ft('application/vnd.api+json', 'demo://x'))
  T.eq('lua', ft(nil, 'file:///tmp/init.lua'))
  T.eq('text', ft('text/plain', 'demo://x/1'))
  T.eq('', ft('application/octet-stream', 'demo://x/1'))
end)

T.test(':Mcp read opens a read-only markdown buffer and subscribes to it', function()
  start()
  local listed = T.exec('mcp-sidecar.listResources', { server = SERVER })
  local doc = vim.tbl_filter(function(r)
    return r.mimeType == 'text/markdown'
  end, listed)[1]
  T.ok(doc, vim.inspect(listed))
  vim.cmd('Mcp read ' .. SERVER .. ' ' .. doc.uri)
  local buf = resource_buf(doc.uri)
  T.eq('markdown', vim.bo[buf].filetype)
  T.eq('nofile', vim.bo[buf].buftype)
  T.eq(false, vim.bo[buf].modifiable)
  T.eq(true, vim.bo[buf].readonly)
  local read = T.exec('mcp-sidecar.readResource', { server = SERVER, uri = doc.uri })
  T.eq(vim.split(read.contents[1].text:gsub('\n$', ''), '\n', { plain = true }), T.lines(buf))
  T.wait(function()
    return vim.b[buf].mcp_sidecar_resource.subscribed == true
  end, 'the subscription')
  wait_logged('Received Subscribe Resource request for URI: ' .. doc.uri)
  -- Wiping the buffer ends the subscription.
  vim.cmd('bwipeout ' .. buf)
  wait_logged('Received Unsubscribe Resource request: ' .. doc.uri)
end)

T.test(':Mcp resources: a template asked with its variable, then read', function()
  start()
  local picked = T.script_select(T.pick('Dynamic Text Resource [template]'))
  local inputs = T.script_input({ '3' })
  vim.cmd('Mcp resources ' .. SERVER)
  local buf = resource_buf('demo://resource/dynamic/text/3')
  T.contains(T.lines(buf), 'Resource 3: This is a plaintext resource')
  T.eq('text', vim.bo[buf].filetype)
  T.contains(
    picked[1].lines,
    SERVER .. ' › Dynamic Text Resource [template] — demo://resource/dynamic/text/{resourceId}'
  )
  local static = vim.tbl_filter(function(l)
    return l:find('demo://resource/static/document/', 1, true) ~= nil
  end, picked[1].lines)
  T.ok(#static > 0, 'the static documents are listed too: ' .. vim.inspect(picked[1].lines))
  -- Any variable may be left undefined (RFC 6570): none is marked required.
  T.eq(SERVER .. ': Dynamic Text Resource › resourceId: ', inputs[1].opts.prompt)
  -- <Tab> in that input asks the server (its completer echoes a valid id).
  T.eq("customlist,v:lua.require'mcp_sidecar.ask'.complete_input", inputs[1].opts.completion)
end)

T.test(':Mcp resources: a level 3 and 4 template asked variable by variable, read as expanded', function()
  start()
  local picked = T.script_select(T.pick('Notes [template]'))
  local inputs = T.script_input({ 'me', '2026 plans', 'a&b', 'en' })
  vim.cmd('Mcp resources ' .. NOTES)
  local uri = 'notes://me/notes/2026%20plans?q=a%26b&lang=en'
  local buf = resource_buf_of(NOTES, uri)
  local lines = T.lines(buf)
  T.contains(lines, 'read ' .. uri)
  -- The TypeScript SDK's own RFC 6570 reading of what the sidecar expanded.
  for _, line in ipairs({ 'owner = me', 'path = 2026 plans', 'q = a&b', 'lang = en' }) do
    T.contains(lines, line)
  end
  T.contains(
    picked[1].lines,
    NOTES .. ' › Notes [template] — notes://{owner}/notes{/path*}{?q,lang} (text/plain)'
  )
  local asked = vim.tbl_map(function(call)
    return call.opts.prompt
  end, inputs)
  T.eq({
    'notes: Notes › owner: ',
    'notes: Notes › path: ',
    'notes: Notes › q: ',
    'notes: Notes › lang: ',
  }, asked)
  vim.cmd('bwipeout ' .. buf)

  -- Left empty, a variable is undefined: the query drops it.
  T.script_select(T.pick('Notes [template]'))
  T.script_input({ 'me', '', 'x', '' })
  vim.cmd('Mcp resources ' .. NOTES)
  buf = resource_buf_of(NOTES, 'notes://me/notes?q=x')
  T.contains(T.lines(buf), 'read notes://me/notes?q=x')
  vim.cmd('bwipeout ' .. buf)
end)

T.test('a malformed template is named with the reason the sidecar gives, nothing asked', function()
  start()
  T.script_select(T.pick('Broken [template]'))
  local inputs = T.script_input({})
  vim.cmd('Mcp resources ' .. NOTES)
  local n = T.wait_notification('notes: cannot use the template notes://{owner}/broken{/path: ')
  T.eq(vim.log.levels.ERROR, n.level)
  T.contains(n.message, 'the "{" at character 23 of the URI template is not closed by a "}" [refused]')
  T.eq(0, #inputs, 'nothing asked')
  T.eq(nil, T.find_buf('^mcp://resource/notes/'))
end)

T.test('a binary blob is described and its bytes can be written to a file', function()
  start()
  local path = vim.fn.tempname() .. '.bin'
  local asked = T.script_select(T.pick('Write the'))
  T.script_input({ path })
  vim.cmd('Mcp read ' .. SERVER .. ' demo://resource/dynamic/blob/2')
  local buf = resource_buf('demo://resource/dynamic/blob/2')
  T.contains(T.lines(buf), 'Binary content: ')
  T.contains(T.lines(buf), 'Press S to write the bytes to a file.')
  T.wait_notification('bytes to ' .. path)
  local f = assert(io.open(path, 'rb'))
  local bytes = f:read('*a')
  f:close()
  T.contains(bytes, 'Resource 2: This is a base64 blob')
  T.contains(asked[1].opts.prompt, 'demo://resource/dynamic/blob/2 is binary')
end)

T.test('an update from the server reads the buffer again', function()
  start()
  local uri = 'demo://resource/dynamic/text/1'
  vim.cmd('Mcp read ' .. SERVER .. ' ' .. uri)
  local buf = resource_buf(uri)
  T.wait(function()
    return vim.b[buf].mcp_sidecar_resource.subscribed == true
  end, 'the subscription')
  T.eq(1, vim.b[buf].mcp_sidecar_resource.reads)
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  T.exec(
    'mcp-sidecar.callTool',
    { server = SERVER, tool = 'toggle-subscriber-updates', arguments = vim.empty_dict() }
  )
  T.wait(function()
    return vim.b[buf].mcp_sidecar_resource.reads >= 2
  end, 'a second read after resourceUpdated', 20000)
  T.ok(vim.api.nvim_buf_get_changedtick(buf) > tick, 'the lines were replaced')
  T.contains(T.lines(buf), 'Resource 1: This is a plaintext resource')
  T.exec(
    'mcp-sidecar.callTool',
    { server = SERVER, tool = 'toggle-subscriber-updates', arguments = vim.empty_dict() }
  )
end)

T.test('an unknown URI is a clear error and opens nothing', function()
  start()
  vim.cmd('Mcp read ' .. SERVER .. ' demo://no/such/thing')
  local n = T.wait_notification('reading demo://no/such/thing of everything failed')
  T.eq(vim.log.levels.ERROR, n.level)
  T.eq(nil, T.find_buf('^mcp://resource/'))
end)

T.test(':Mcp prompt: a required argument is insisted on, the messages open as Markdown', function()
  start()
  local inputs = T.script_input({ '', 'Paris', '' })
  vim.cmd('Mcp prompt ' .. SERVER .. ' args-prompt')
  local buf = T.wait_buf('^mcp://prompt/everything/args%-prompt/%d+$', 20000)
  local lines = T.lines(buf)
  T.contains(lines, '# everything › args-prompt')
  T.contains(lines, 'Arguments: `{"city":"Paris"}`')
  T.contains(lines, '## user')
  T.contains(lines, "What's weather in Paris?")
  T.eq('markdown', vim.bo[buf].filetype)
  T.contains(inputs[1].opts.prompt, 'everything: args-prompt › city (required; Name of the city)')
  T.contains(inputs[2].opts.prompt, '⚠ city is required')
  T.contains(inputs[3].opts.prompt, 'everything: args-prompt › state: ')
end)

T.test(':Mcp prompt: completion suggestions, the earlier argument as context', function()
  start()
  local selects = T.script_select(function(lines, _, opts)
    if opts.prompt:find('› department', 1, true) then
      return T.pick('Sales')(lines)
    end
    return T.pick('Eve')(lines)
  end)
  vim.cmd('Mcp prompt ' .. SERVER .. ' completable-prompt')
  local buf = T.wait_buf('^mcp://prompt/everything/completable%-prompt/%d+$', 20000)
  T.contains(T.lines(buf), 'Please promote Eve to the head of the Sales team.')
  T.eq({ 'Engineering', 'Sales', 'Marketing', 'Support', 'Type a value…' }, selects[1].lines)
  T.eq({ 'David', 'Eve', 'Frank', 'Type a value…' }, selects[2].lines)
end)

T.test('<Tab> in the value input completes from the server (a real vim.fn.input)', function()
  start()
  local selects = T.script_select(function(lines, _, opts)
    if opts.prompt:find('› department', 1, true) then
      return T.pick('Type a value…')(lines)
    end
    return T.pick('Bob')(lines)
  end)
  -- The default vim.ui.input (vim.fn.input), fed keys as a person types them once it opens.
  local real = vim.ui.input
  local prompts = {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(prompts, opts.prompt)
    T.feed('Eng<Tab><CR>')
    return real(opts, on_confirm)
  end
  vim.cmd('Mcp prompt ' .. SERVER .. ' completable-prompt')
  local buf = T.wait_buf('^mcp://prompt/everything/completable%-prompt/%d+$', 20000)
  T.contains(T.lines(buf), 'Please promote Bob to the head of the Engineering team.')
  T.eq(1, #prompts)
  T.contains(prompts[1], '› department (required; Choose the department.)')
  T.eq({ 'Alice', 'Bob', 'Charlie', 'Type a value…' }, selects[2].lines)
end)

T.test(':Mcp! prompt inserts the text at the cursor', function()
  start()
  vim.cmd('enew')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'before X', 'after' })
  vim.api.nvim_win_set_cursor(0, { 1, 7 })
  local target = vim.api.nvim_get_current_buf()
  T.script_input({ 'Oslo', 'Norway' })
  vim.cmd('Mcp! prompt ' .. SERVER .. ' args-prompt')
  T.wait(function()
    return T.lines(target)[1] ~= 'before X'
  end, 'the text in the buffer')
  T.eq({ "before What's weather in Oslo, Norway?X", 'after' }, T.lines(target))
  T.eq(nil, T.find_buf('^mcp://prompt/'), 'no prompt buffer')
  vim.cmd('bwipeout! ' .. target)
end)

T.test('the command line completes servers, resource URIs and prompt names', function()
  start()
  local complete = require('mcp_sidecar.commands').complete
  local function got(line)
    return complete(line:match('(%S*)$'), line, #line)
  end
  T.ok(vim.tbl_contains(got('Mcp '), 'resources'))
  T.ok(vim.tbl_contains(got('Mcp '), 'prompt'))
  T.ok(vim.tbl_contains(got('Mcp '), 'gateway'))
  T.eq({ 'everything' }, got('Mcp read ev'))
  T.ok(vim.tbl_contains(got('Mcp resources '), SERVER))
  local uris = got('Mcp read everything demo://resource/static/')
  T.ok(#uris > 0, 'resource URIs')
  for _, uri in ipairs(uris) do
    T.ok(vim.startswith(uri, 'demo://resource/static/document/'), uri)
  end
  local prompts = got('Mcp prompt everything ')
  T.ok(vim.tbl_contains(prompts, 'args-prompt'), vim.inspect(prompts))
  T.ok(vim.tbl_contains(prompts, 'completable-prompt'), vim.inspect(prompts))
  T.eq({ 'args-prompt' }, got('Mcp prompt everything arg'))
  -- The value completion of an input asks the server with what is typed.
  local api_done = require('mcp_sidecar.ask').complete_input('', '')
  T.eq({}, api_done, 'no input open: nothing')
end)

T.test('the demo server has no resources and says so', function()
  start()
  vim.cmd('Mcp resources demo')
  T.wait_notification('demo has no resources (a server without the resources capability has none)')
  vim.cmd('Mcp prompt demo nothing')
  T.wait_notification('demo has no prompt "nothing"')
end)
