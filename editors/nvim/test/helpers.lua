-- Test helpers: cases, assertions, scripted vim.ui, the real sidecar with the demo server.
local T = { cases = {}, notifications = {} }

T.bin = os.getenv('MCP_SIDECAR_BIN')

--- Registers a test case.
function T.test(name, fn)
  table.insert(T.cases, { name = name, fn = fn })
end

--- Ends the case as skipped, with the reason (a peer it needs is not installed): the harness
--- records `SKIP <case>: <reason>`, neither passed nor failed.
function T.skip(reason)
  -- selene: allow(incorrect_standard_library_use)
  error({ skip = reason }) -- a table, which the harness tells from a failure
end

-- Assertions -------------------------------------------------------------------------------------

function T.eq(expected, actual, message)
  if not vim.deep_equal(expected, actual) then
    error(
      ('%s\nexpected: %s\nactual:   %s'):format(
        message or 'values differ',
        vim.inspect(expected),
        vim.inspect(actual)
      ),
      2
    )
  end
end

function T.ok(value, message)
  if not value then
    error(message or 'expected a true value', 2)
  end
  return value
end

--- `haystack` (a string or a list of lines) contains the plain string `needle`.
function T.contains(haystack, needle, message)
  local text = type(haystack) == 'table' and table.concat(haystack, '\n') or tostring(haystack)
  if not text:find(needle, 1, true) then
    error(('%s\nexpected to find: %s\nin:\n%s'):format(message or 'text not found', needle, text), 2)
  end
end

function T.not_contains(haystack, needle, message)
  local text = type(haystack) == 'table' and table.concat(haystack, '\n') or tostring(haystack)
  if text:find(needle, 1, true) then
    error(('%s\ndid not expect: %s\nin:\n%s'):format(message or 'text found', needle, text), 2)
  end
end

--- Runs the event loop until `cond()` is true; fails after `timeout` ms. `cond` runs in the main
--- context between event-loop turns, so it may itself make synchronous requests.
function T.wait(cond, what, timeout)
  local deadline = vim.uv.now() + (timeout or 10000)
  local last_err
  while true do
    local good, value = pcall(cond)
    if good and value then
      return value
    end
    last_err = not good and value or last_err
    if vim.uv.now() > deadline then
      local detail = last_err and ('\nlast error: ' .. tostring(last_err)) or ''
      error('timed out waiting for ' .. (what or 'a condition') .. detail, 2)
    end
    vim.wait(10)
  end
end

--- Runs the event loop until the callbacks scheduled so far (vim.schedule, first in first out)
--- have run: what a handler or an autocommand scheduled has happened once this returns.
function T.flush_scheduled()
  local done = false
  vim.schedule(function()
    done = true
  end)
  T.wait(function()
    return done
  end, 'the callbacks scheduled before')
end

-- Buffers and windows ----------------------------------------------------------------------------

function T.lines(buf)
  return vim.api.nvim_buf_get_lines(buf or 0, 0, -1, false)
end

--- The first buffer whose name matches the Lua pattern, or nil.
function T.find_buf(pattern)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_get_name(buf):match(pattern) then
      return buf
    end
  end
end

function T.wait_buf(pattern, timeout)
  local buf
  T.wait(function()
    buf = T.find_buf(pattern)
    return buf
  end, 'a buffer named like ' .. pattern, timeout)
  return buf
end

--- The draft buffer of the prompt `id` (mcp-sidecar/editDraft).
function T.wait_draft(id, timeout)
  local found
  T.wait(function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      local draft = vim.api.nvim_buf_is_valid(buf) and vim.b[buf].mcp_sidecar_draft
      if draft and draft.id == id then
        found = buf
        return true
      end
    end
  end, 'the draft of ' .. id, timeout)
  return found
end

function T.floats()
  return vim.tbl_filter(function(win)
    return vim.api.nvim_win_get_config(win).relative ~= ''
  end, vim.api.nvim_list_wins())
end

--- The report of `:checkhealth mcp_sidecar`, as lines (its buffer is wiped).
function T.health_lines()
  vim.cmd('checkhealth mcp_sidecar')
  local lines = T.lines(0)
  vim.cmd('bwipeout!')
  return lines
end

-- Notifications ----------------------------------------------------------------------------------

local original = {
  input = vim.ui.input,
  select = vim.ui.select,
  open = vim.ui.open,
  notify = vim.notify,
}

vim.notify = function(message, level)
  table.insert(T.notifications, { message = tostring(message), level = level })
end

--- Waits for a notification containing `needle`; returns it.
function T.wait_notification(needle, timeout)
  local found
  T.wait(function()
    for _, n in ipairs(T.notifications) do
      if n.message:find(needle, 1, true) then
        found = n
        return true
      end
    end
  end, 'a notification containing "' .. needle .. '"', timeout)
  return found
end

-- Scripted vim.ui --------------------------------------------------------------------------------

--- Replaces vim.ui.select: `choose(lines, items, opts)` returns the 1-based index to pick (nil:
--- dismiss). `opts.delay`: answer from a later event-loop turn (vim.defer_fn), like asynchronous
--- UIs; `opts.float`: open a floating window meanwhile (and close it when answering), like them.
--- Returns the list of calls ({ items, opts, lines, in_coroutine }).
function T.script_select(choose, opts)
  opts = opts or {}
  local calls = {}
  vim.ui.select = function(items, o, on_choice)
    local format_item = o and o.format_item or tostring
    local call = {
      items = items,
      opts = o,
      lines = vim.tbl_map(format_item, items),
      in_coroutine = coroutine.running() ~= nil,
    }
    table.insert(calls, call)
    local win
    if opts.float then
      local buf = vim.api.nvim_create_buf(false, true)
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, call.lines)
      win =
        vim.api.nvim_open_win(buf, true, { relative = 'editor', row = 1, col = 1, width = 40, height = 5 })
      call.win = win
    end
    local function answer()
      if win and not vim.api.nvim_win_is_valid(win) then
        return -- closed from outside: this UI then reports nothing
      end
      if win then
        vim.api.nvim_win_close(win, true)
      end
      local index = choose(call.lines, items, o)
      if index then
        on_choice(items[index], index)
      else
        on_choice(nil, nil)
      end
    end
    if opts.never then
      return
    end
    if opts.delay then
      vim.defer_fn(answer, opts.delay)
    else
      answer()
    end
  end
  return calls
end

--- Picks the item whose line contains `needle`.
function T.pick(needle)
  return function(lines)
    for i, line in ipairs(lines) do
      if line:find(needle, 1, true) then
        return i
      end
    end
    error('no item contains "' .. needle .. '": ' .. vim.inspect(lines))
  end
end

--- Replaces vim.ui.input with scripted answers, in order (a string, or false to dismiss).
--- `opts.hold`: answer only when the test calls the call's `reply()`, like an asynchronous UI
--- answering from a later event-loop turn. Returns the list of calls ({ opts, reply }).
function T.script_input(answers, opts)
  opts = opts or {}
  local calls = {}
  vim.ui.input = function(o, on_confirm)
    local answer = table.remove(answers, 1)
    local call = { opts = o, in_coroutine = coroutine.running() ~= nil }
    function call.reply()
      on_confirm(answer ~= false and answer or nil)
    end
    table.insert(calls, call)
    if not opts.hold then
      call.reply()
    end
  end
  return calls
end

--- Replaces vim.ui.input with `answer(opts)` (a string, or nil/false to dismiss). Returns the calls.
function T.script_input_fn(answer, opts)
  opts = opts or {}
  local calls = {}
  vim.ui.input = function(o, on_confirm)
    table.insert(calls, { opts = o, in_coroutine = coroutine.running() ~= nil })
    local function reply()
      local value = answer(o)
      on_confirm(value ~= false and value or nil)
    end
    if opts.delay then
      vim.defer_fn(reply, opts.delay)
    else
      reply()
    end
  end
  return calls
end

--- Types keys as if the person did (they wait in typeahead until a prompt reads them).
function T.feed(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), 't', false)
end

-- Handlers called directly ---------------------------------------------------------------------

--- Calls a contract handler as Neovim does (inside a coroutine). Returns a box that gets
--- `done = true` and `result` when the handler returns.
function T.request(method, params, client_id)
  local handler = assert(require('mcp_sidecar.handlers')[method], 'no handler for ' .. method)
  local box = { done = false }
  local co = coroutine.create(function()
    box.result = handler(nil, params, { method = method, client_id = client_id or 0 })
    box.done = true
  end)
  local ok, err = coroutine.resume(co)
  assert(ok, err)
  return box
end

function T.notify_handler(method, params, client_id)
  return require('mcp_sidecar.handlers')[method](nil, params, { method = method, client_id = client_id or 0 })
end

--- Waits for a box from T.request() and returns its result.
function T.answer(box, what, timeout)
  T.wait(function()
    return box.done
  end, what or 'the handler to answer', timeout)
  return box.result
end

-- The real sidecar -------------------------------------------------------------------------------

function T.workspace()
  return T.repo_root .. '/fixtures/nvim-workspace'
end

--- Configures the plugin with the built sidecar and the demo server, opens a workspace file and
--- waits until the demo server runs. Returns the client.
function T.start_sidecar(extra)
  assert(T.bin and vim.fn.executable(T.bin) == 1, 'MCP_SIDECAR_BIN must name the built sidecar')
  vim.g.mcp_sidecar = vim.tbl_deep_extend('force', {
    cmd = T.bin,
    root_markers = {},
    servers = { demo = { command = T.bin, args = { 'demo-server' } } },
  }, extra or {})
  vim.cmd.cd(T.workspace())
  vim.cmd('filetype on')
  vim.cmd('runtime plugin/mcp_sidecar.lua')
  vim.cmd.edit(T.workspace() .. '/README.md')
  T.wait_running('demo')
  return require('mcp_sidecar').client()
end

function T.server(name)
  for _, row in ipairs(require('mcp_sidecar').servers()) do
    if row.name == name then
      return row
    end
  end
end

function T.wait_running(name, timeout)
  T.wait(function()
    local row = T.server(name)
    return row and row.state == 'running'
  end, name .. ' to be running', timeout or 20000)
end

--- Runs a sidecar command and returns its result (synchronously, for assertions).
function T.exec(command, argument)
  local client = assert(require('mcp_sidecar').client(), 'no sidecar client')
  local response = client:request_sync('workspace/executeCommand', {
    command = command,
    arguments = { argument or vim.empty_dict() },
  }, 15000)
  assert(response, 'no answer to ' .. command)
  assert(not response.err, vim.inspect(response.err))
  return response.result
end

--- Calls a tool through the sidecar and returns its structuredContent.
function T.call_structured(server, tool, arguments)
  local result = T.exec(
    'mcp-sidecar.callTool',
    { server = server, tool = tool, arguments = arguments or vim.empty_dict() }
  )
  return result.structuredContent
end

-- Processes -----------------------------------------------------------------------------------------

--- The processes started with T.spawn, stopped when the spec file ends.
local spawned = {}

--- Stops what T.spawn started and is still running: SIGTERM, then SIGKILL after 3 s.
local function stop_spawned()
  for _, proc in ipairs(spawned) do
    if not proc:is_closing() then
      pcall(proc.kill, proc, 'sigterm')
      proc:wait(3000) -- SIGKILL when it has not exited by then
    end
  end
  spawned = {}
end

-- Also when the file ends early (a failure while loading, :cquit).
vim.api.nvim_create_autocmd('VimLeavePre', { callback = stop_spawned })

--- vim.system for a process that outlives a case (a server fixture): it is stopped when the spec
--- file ends (T.teardown, or Neovim exiting), so that no test leaves it running.
function T.spawn(cmd, opts, on_exit)
  local proc = vim.system(cmd, opts, on_exit)
  table.insert(spawned, proc)
  return proc
end

-- Between cases -------------------------------------------------------------------------------------

function T.after_each()
  vim.ui.input, vim.ui.select, vim.ui.open = original.input, original.select, original.open
  -- Answer whatever is still open, then close extra windows.
  for _, p in ipairs(require('mcp_sidecar.prompts').list()) do
    require('mcp_sidecar.prompts').cancel(p.client_id, p.id)
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if #vim.api.nvim_list_wins() > 1 then
      pcall(vim.api.nvim_win_close, win, true)
    end
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(buf):match('^mcp://') then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
  -- Drop keys a failed case left behind.
  local key = vim.fn.getchar(0)
  while key ~= 0 do
    key = vim.fn.getchar(0)
  end
  T.notifications = {}
end

function T.teardown()
  for _, client in ipairs(vim.lsp.get_clients({ name = 'mcp_sidecar' })) do
    client:stop()
  end
  vim.wait(3000, function()
    return #vim.lsp.get_clients({ name = 'mcp_sidecar' }) == 0
  end, 20)
  stop_spawned()
end

return T
