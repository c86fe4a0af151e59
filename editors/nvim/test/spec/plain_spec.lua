-- Plain LSP in plain Neovim: no plugin of mcp-sidecar, only Neovim 0.11's own LSP client with
-- the configuration below (what docs/editors.md gives a person). Questions come as
-- window/showMessageRequest, answered at Neovim's own prompt (vim.ui.select → inputlist) by
-- typed keys; forms and drafts are files Neovim's window/showDocument handler opens, edited and
-- written with :write; problems are diagnostics; Decline/Cancel are code actions and code lenses.
local T = require('helpers')

-- The plugin stays out: not on 'runtimepath', never required.
vim.opt.rtp:remove(T.plugin_root)

local HOME = assert(vim.env.HOME, 'HOME is not set')
local DOCUMENTS = assert(vim.env.XDG_STATE_HOME, 'XDG_STATE_HOME is not set') .. '/mcp-sidecar/documents'
local PROJECT = HOME .. '/project'

--- The person's configuration (verbatim in docs/editors.md, with `mcp-sidecar` for T.bin and
--- without `--era both`).
local function configure(bin)
  vim.filetype.add({ extension = { mcpform = 'mcpform' } })
  vim.lsp.config('mcp_sidecar', {
    cmd = { bin },
    init_options = {
      servers = { demo = { command = bin, args = { 'demo-server', '--era', 'both' } } },
    },
    root_markers = { '.git' },
    -- One sidecar for every buffer, also for the question, draft and result documents it opens
    -- under $XDG_STATE_HOME/mcp-sidecar/documents, outside the project.
    reuse_client = function(client, config)
      return client.name == config.name
    end,
  })
  vim.lsp.enable('mcp_sidecar')
end

-- Typed answers -------------------------------------------------------------------------------

local original_select = vim.ui.select
local asked = {} -- every vim.ui.select call: { prompt, lines }
local answers = {} -- the titles to pick next, in order

--- Neovim's own vim.ui.select (inputlist) asks; the person types the number of the item titled
--- `answers[1]` and Enter (false: Esc, no choice). The wrapper only reads the list to know
--- which number to type, then hands over to Neovim's own select, which reads the keys.
vim.ui.select = function(items, opts, on_choice)
  local lines = vim.tbl_map(opts.format_item or tostring, items)
  table.insert(asked, { prompt = opts.prompt, lines = lines })
  local want = table.remove(answers, 1)
  local index = want and vim.fn.index(lines, want) + 1 or 0
  T.feed(index > 0 and (index .. '<CR>') or '<Esc>')
  return original_select(items, opts, on_choice)
end

local function wait_asked(count, what)
  T.wait(function()
    return #asked >= count
  end, what)
  return asked[count]
end

-- The client and its buffers --------------------------------------------------------------------

local function client()
  return assert(vim.lsp.get_clients({ name = 'mcp_sidecar' })[1], 'no mcp_sidecar client')
end

local progress = {} -- LspProgress events: { token, value }
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(args)
    table.insert(progress, { token = args.data.params.token, value = args.data.params.value })
  end,
})

local seen = {}

--- The next buffer (not returned before) named like `pattern` that has the focus and the
--- sidecar attached.
local function wait_document(pattern, what)
  local found
  T.wait(function()
    local buf = vim.api.nvim_get_current_buf()
    if not seen[buf] and vim.api.nvim_buf_get_name(buf):match(pattern) then
      found = buf
      return vim.lsp.buf_is_attached(buf, client().id)
    end
  end, what or ('a focused document named like ' .. pattern), 15000)
  seen[found] = true
  return found
end

--- 0-based line of the field `key` in a form buffer.
local function field_line(buf, key)
  for i, line in ipairs(T.lines(buf)) do
    if vim.startswith(line, key .. ':') then
      return i - 1
    end
  end
  error('no field ' .. key .. ' in:\n' .. table.concat(T.lines(buf), '\n'))
end

--- Types values into a form buffer (its `key:` lines), as editing would.
local function fill(buf, values)
  for _, kv in ipairs(values) do
    local at = field_line(buf, kv[1])
    vim.api.nvim_buf_set_lines(buf, at, at + 1, false, { kv[1] .. ': ' .. kv[2] })
  end
end

local function write(buf)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('write')
  end)
end

--- Runs a sidecar command as a person's mapping would (client:exec_cmd); returns a box that
--- gets `done`, `err` and `result`.
local function run(command, argument)
  local box = { done = false }
  client():exec_cmd(
    { title = command, command = command, arguments = { argument } },
    nil,
    function(err, result)
      box.err, box.result, box.done = err, result, true
    end
  )
  return box
end

local function wait_done(box, what)
  T.wait(function()
    return box.done
  end, what or 'the command to answer', 20000)
  T.ok(not box.err, vim.inspect(box.err))
  return box.result
end

--- The code actions offered at the cursor of `buf` (textDocument/codeAction, as Neovim asks).
local function code_action_titles(buf)
  local params = vim.lsp.util.make_range_params(vim.fn.bufwinid(buf), 'utf-16')
  params.context = { diagnostics = {} }
  local response = client():request_sync('textDocument/codeAction', params, 5000, buf)
  assert(response and not response.err, vim.inspect(response))
  return vim.tbl_map(function(a)
    return a.title
  end, response.result or {})
end

--- Picks the code action titled `title` through vim.lsp.buf.code_action (applied at once).
local function code_action(title)
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title == title
    end,
  })
end

local BOOKING = {
  { 'name', 'Ada Lovelace' },
  { 'email', 'ada@example.com' },
  { 'travelers', '2' },
  { 'budget', '1200.75' },
  { 'window_seat', 'no' },
  { 'cabin', 'Business' },
  { 'meal', 'vegetarian' },
  { 'insurance', 'full' },
  { 'extras', 'lounge, wifi' },
  { 'departure', '2026-12-24' },
}

T.after_each = function()
  answers = {}
  vim.cmd('silent! only!')
  local key = vim.fn.getchar(0)
  while key ~= 0 do
    key = vim.fn.getchar(0)
  end
  T.notifications = {}
end

T.teardown = function()
  for _, c in ipairs(vim.lsp.get_clients({ name = 'mcp_sidecar' })) do
    c:stop()
  end
  vim.wait(3000, function()
    return #vim.lsp.get_clients({ name = 'mcp_sidecar' }) == 0
  end, 20)
end

-- Cases ------------------------------------------------------------------------------------------

local notes

T.test(
  'the server from the settings is trusted at a showMessageRequest; tools become code actions',
  function()
    T.ok(T.bin and vim.fn.executable(T.bin) == 1, 'MCP_SIDECAR_BIN must name the built sidecar')
    vim.fn.mkdir(PROJECT .. '/.git', 'p')
    vim.fn.writefile({ '# Notes' }, PROJECT .. '/notes.md')
    vim.cmd.cd(PROJECT)
    vim.cmd('filetype on')
    configure(T.bin)
    answers = { 'Trust' }
    vim.cmd.edit(PROJECT .. '/notes.md')
    notes = vim.api.nvim_get_current_buf()
    local trust = wait_asked(1, 'the trust question')
    T.contains(trust.prompt, 'Trust the MCP server "demo"?')
    T.eq({ 'Trust', "Don't trust", 'Show the whole definition' }, vim.list_slice(trust.lines, 1, 3))
    T.eq(PROJECT, client().root_dir)
    T.ok(client().capabilities.experimental == nil, 'Neovim declares no mcpSidecar')
    local titles
    T.wait(function()
      titles = code_action_titles(notes)
      return vim.tbl_contains(titles, 'MCP: call demo/echo…')
    end, 'the demo tools as code actions', 20000)
    T.ok(vim.tbl_contains(titles, 'MCP: call demo/book_trip…'), vim.inspect(titles))
    T.eq(nil, package.loaded['mcp_sidecar'], 'the plugin is not loaded')
  end
)

T.test(
  'book_trip: the form opens, a wrong value is a diagnostic on its line, the fixed form is sent',
  function()
    local before = #progress
    local box = run(
      'mcp-sidecar.callTool',
      { server = 'demo', tool = 'book_trip', arguments = { destination = 'Oslo' } }
    )
    local form = wait_document('/mcp%-sidecar/documents/[^/]+%-demo%.mcpform$', 'the booking form')
    T.eq('mcpform', vim.bo[form].filetype)
    T.eq(DOCUMENTS, vim.fs.dirname(vim.api.nvim_buf_get_name(form)))
    T.contains(T.lines(form)[1], '# demo: Confirm your trip to Oslo')
    -- Progress: begun cancellable by the sidecar.
    local begin = T.wait(function()
      for i = before + 1, #progress do
        if progress[i].value.kind == 'begin' then
          return progress[i]
        end
      end
    end, 'the progress of the call')
    T.eq(true, begin.value.cancellable)
    T.eq('demo: book_trip', begin.value.title)

    local wrong = vim.deepcopy(BOOKING)
    wrong[2] = { 'email', 'not-an-email' }
    fill(form, wrong)
    write(form)
    local diagnostics = T.wait(function()
      local d = vim.diagnostic.get(form)
      return #d > 0 and d
    end, 'diagnostics on the form')
    T.eq(1, #diagnostics, vim.inspect(diagnostics))
    T.eq(field_line(form, 'email'), diagnostics[1].lnum)
    T.ok(not box.done, 'an invalid form is not sent')

    fill(form, { BOOKING[2] })
    write(form)
    local result = wait_done(box, 'the booking to be sent')
    T.eq({
      action = 'accept',
      content = {
        name = 'Ada Lovelace',
        email = 'ada@example.com',
        travelers = 2,
        budget = 1200.75,
        window_seat = false,
        cabin = 'business',
        meal = 'vegetarian',
        insurance = 'full',
        extras = { 'lounge', 'wifi' },
        departure = '2026-12-24',
      },
    }, result.structuredContent)
    T.eq(0, vim.fn.filereadable(vim.api.nvim_buf_get_name(form)), 'the answered form file is gone')
    local shown = wait_document('%-result%.md$', 'the result document')
    T.contains(T.lines(shown), '"departure": "2026-12-24"')
    T.wait(function()
      for i = before + 1, #progress do
        if progress[i].token == begin.token and progress[i].value.kind == 'end' then
          return true
        end
      end
    end, 'the progress to end')
  end
)

T.test('a second form: Decline is a code action (vim.lsp.buf.code_action)', function()
  local box =
    run('mcp-sidecar.callTool', { server = 'demo', tool = 'book_trip', arguments = vim.empty_dict() })
  local form = wait_document('%-demo%.mcpform$', 'the booking form')
  T.eq({ 'Submit', 'Decline', 'Cancel' }, code_action_titles(form))
  code_action('Decline')
  T.eq('decline', wait_done(box, 'the decline').structuredContent.action)
  wait_document('%-result%.md$', 'the result document')
end)

T.test('a third form: Cancel is a code lens (vim.lsp.codelens.run, chosen at the prompt)', function()
  local box =
    run('mcp-sidecar.callTool', { server = 'demo', tool = 'book_trip', arguments = vim.empty_dict() })
  local form = wait_document('%-demo%.mcpform$', 'the booking form')
  vim.lsp.codelens.refresh({ bufnr = form })
  local lenses = T.wait(function()
    local l = vim.lsp.codelens.get(form)
    return #l > 0 and l
  end, 'the code lenses')
  T.eq(
    { 'Submit', 'Decline', 'Cancel' },
    vim.tbl_map(function(l)
      return l.command.title
    end, lenses)
  )
  local count = #asked
  answers = { 'Cancel' }
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.codelens.run()
  T.eq('Code lenses:', wait_asked(count + 1, 'the choice of lens').prompt)
  T.eq('cancel', wait_done(box, 'the cancel').structuredContent.action)
end)

T.test('a tool from a code action in a file: its arguments are a form, its result a document', function()
  vim.cmd.buffer(notes)
  code_action('MCP: call demo/echo…')
  local form = wait_document('%-demo%.mcpform$', 'the arguments form')
  T.contains(T.lines(form), '# Code actions: Call echo, Cancel. Closing this file cancels.')
  fill(form, { { 'text', 'hello from plain Neovim' } })
  write(form)
  local shown = wait_document('%-result%.md$', 'the result document')
  T.contains(T.lines(shown), 'hello from plain Neovim')
end)

T.test('chooseTool: the tool is a showMessageRequest choice, then its arguments a form', function()
  local count = #asked
  answers = { 'add' }
  local box = run('mcp-sidecar.chooseTool', vim.empty_dict())
  local which = wait_asked(count + 1, 'which tool')
  T.contains(which.prompt, 'Which tool of demo?')
  local form = wait_document('%-demo%.mcpform$', 'the arguments of add')
  fill(form, { { 'a', '2' }, { 'b', '40' } })
  write(form)
  -- Answered at once (editors such as eglot wait for the command), the call goes on: its result
  -- is a document.
  T.eq(true, wait_done(box, 'chooseTool').detached)
  local shown = wait_document('%-result%.md$', 'the result document')
  T.contains(T.lines(shown), '2 + 40 = 42')
end)

T.test('analyze_flights: the request draft and the answer draft are documents, sent by :write', function()
  local box =
    run('mcp-sidecar.callTool', { server = 'demo', tool = 'analyze_flights', arguments = vim.empty_dict() })
  local request = wait_document('%-demo%-request%.md$', 'the request draft')
  T.eq('markdown', vim.bo[request].filetype)
  T.contains(T.lines(request), '5. EX517 Lisbon → Boston, nonstop, 7h10, €389')
  write(request)
  local answer = wait_document('%-demo%-answer%.md$', 'the answer draft')
  local lines = T.lines(answer)
  local heading = vim.fn.index(lines, '### assistant')
  T.ok(heading >= 0, table.concat(lines, '\n'))
  vim.api.nvim_buf_set_lines(answer, heading + 1, -1, false, { '', 'EX517 is the best value.' })
  write(answer)
  local result = wait_done(box, 'analyze_flights')
  T.eq('EX517 is the best value.', result.structuredContent.text)
  T.eq('manual', result.structuredContent.model)
end)

T.test('a long call is cancelled through window/workDoneProgress/cancel', function()
  local before = #progress
  local box = run(
    'mcp-sidecar.callTool',
    { server = 'demo', tool = 'count_down', arguments = { steps = 100, delayMs = 10000 } }
  )
  local begin = T.wait(function()
    for i = before + 1, #progress do
      if progress[i].value.kind == 'begin' and progress[i].value.cancellable then
        return progress[i]
      end
    end
  end, 'the cancellable progress')
  client():notify('window/workDoneProgress/cancel', { token = begin.token })
  T.wait(function()
    return box.done
  end, 'the call to end', 10000)
  T.ok(box.err, 'the call fails as cancelled: ' .. vim.inspect(box.result))
  T.contains(box.err.message:lower(), 'cancel')
end)

T.test('closing a form (:bwipeout) cancels it; the plugin was never loaded', function()
  local box =
    run('mcp-sidecar.callTool', { server = 'demo', tool = 'book_trip', arguments = vim.empty_dict() })
  local form = wait_document('%-demo%.mcpform$', 'the booking form')
  vim.cmd('bwipeout! ' .. form)
  T.eq('cancel', wait_done(box, 'the cancel').structuredContent.action)
  T.eq(nil, package.loaded['mcp_sidecar'])
  T.eq(nil, vim.lsp.handlers['mcp-sidecar/quickPick'])
end)
