-- Tasks end to end (the Tasks extension): the real sidecar and the demo server's slow_task (a
-- task when the client declares the extension, as the sidecar does). A :Mcp call that becomes a
-- task shows its progress and the task in the statusline, answers the server's question mid-task
-- through vim.ui, and opens its result; :Mcp tasks lists it and shows its result again; :Mcp tasks
-- cancel sends tasks/cancel (the server's own last status message says it was cancelled); a task
-- no :Mcp call waits for is announced when it ends. And FastMCP's tasks fixture over HTTP
-- (fixtures/python/fastmcp_tasks_server.py, MCP_PYTHON from scripts/install-peers.sh), which
-- outlives a sidecar: the next sidecar follows the task to its end and announces it.
local T = require('helpers')

local tasks = require('mcp_sidecar.tasks')

local function task_of(tool, server)
  for _, task in ipairs(tasks.running()) do
    if task.server == (server or 'demo') and task.tool == tool then
      return task
    end
  end
end

local function get(task)
  local client = require('mcp_sidecar').client()
  return tasks.get(client.id, task.server, task.taskId) or {}
end

--- Answers the demo's question ("Keep the details?") with `keep` and submits the review.
local function answer_keep(keep, asked)
  return T.script_select(function(items, _, opts)
    table.insert(asked, { prompt = opts.prompt, lines = items })
    if opts.prompt:find('Review your answers', 1, true) then
      return T.pick('Submit')(items)
    elseif opts.prompt:find('› Keep the details', 1, true) then
      return T.pick(keep)(items)
    end
    error('unexpected select: ' .. opts.prompt .. ' ' .. vim.inspect(items))
  end, { delay = 50 })
end

T.test(':Mcp call of a task: progress, the question mid-task, the result; :Mcp tasks shows it', function()
  T.start_sidecar()
  local progress = {}
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      table.insert(progress, vim.tbl_get(ev, 'data', 'params', 'value') or {})
    end,
  })
  local asked = {}
  answer_keep('Yes', asked)
  vim.cmd('Mcp call demo slow_task {"steps": 4, "stepMs": 150}')

  -- Running: the statusline counts it while the call waits, with the task's status message.
  local task = T.wait(function()
    return task_of('slow_task')
  end, 'the task to be reported (mcp-sidecar/taskStatus)', 20000)
  T.contains(require('mcp_sidecar').status(), '⧗1')

  local lines = T.lines(T.wait_buf('^mcp://result/demo/slow_task/%d+$', 30000))
  T.contains(lines, 'Done after 4 steps: you chose to keep the details.')
  T.ok(asked[1] and asked[1].prompt:find('Keep the details?', 1, true), vim.inspect(asked))
  -- The question says which task asks.
  T.ok(
    asked[1].prompt:find('demo, for the task started %d%d:%d%d UTC, asks: Keep the details%?'),
    asked[1].prompt
  )
  T.wait(function()
    return get(task).status == 'completed'
  end, 'the task to be completed')
  T.not_contains(require('mcp_sidecar').status(), '⧗')
  -- Its progress was the call's work-done progress, the task's steps in it: begun, reported, ended.
  local kinds, messages = {}, {}
  for _, v in ipairs(progress) do
    table.insert(kinds, v.kind)
    table.insert(messages, tostring(v.message))
  end
  T.eq('begin', kinds[1])
  T.eq('end', kinds[#kinds])
  T.contains(messages, 'step 1 of 4')
  -- The call waited for it: no announcement.
  T.flush_scheduled()
  for _, n in ipairs(T.notifications) do
    T.not_contains(n.message, 'task demo › slow_task completed')
  end

  -- :Mcp tasks lists it as completed; Show result opens its result read-only.
  vim.cmd('bwipeout! ' .. vim.fn.bufnr('^mcp://result/'))
  local picks = T.script_select(function(items, _, opts)
    if opts.prompt == 'MCP tasks' then
      return T.pick('demo › slow_task')(items)
    end
    return T.pick('Show result')(items)
  end)
  vim.cmd('Mcp tasks')
  local buf = T.wait_buf('^mcp://task/demo/')
  T.contains(picks[1].lines, '✓ demo › slow_task  completed · done · started ')
  T.eq({ 'Show result' }, picks[2].lines)
  T.contains(T.lines(buf), 'Done after 4 steps: you chose to keep the details.')
  T.contains(T.lines(buf), 'Task `' .. task.taskId .. '`: **completed** (done)')
  T.eq(false, vim.bo[buf].modifiable)
end)

T.test(':Mcp tasks cancel: the server gets tasks/cancel; the task and the call end cancelled', function()
  local ended = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'McpSidecarTask',
    callback = function(ev)
      ended = ended or (ev.data.tool == 'slow_task' and ev.data.status == 'cancelled')
    end,
  })
  vim.cmd('Mcp call demo slow_task {"forever": true, "stepMs": 100}')
  local task = T.wait(function()
    return task_of('slow_task')
  end, 'slow_task to run as a task', 20000)
  local picks = T.script_select(T.pick('demo › slow_task'))
  vim.cmd('Mcp tasks cancel')
  T.wait(function()
    return ended
  end, 'taskStatus cancelled (User McpSidecarTask)', 20000)
  -- The server's own last word: it ran its cancellation.
  T.eq('cancelled', get(task).statusMessage)
  T.eq('Cancel which MCP task?', picks[1].opts.prompt)
  T.eq(1, #picks[1].lines, 'only running tasks are offered')
  T.wait_notification('cancelling the task demo › slow_task')
  T.wait_notification('demo › slow_task: call cancelled')
  T.flush_scheduled()
  for _, n in ipairs(T.notifications) do
    T.not_contains(n.message, 'task demo › slow_task was cancelled')
  end
end)

T.test('a task no :Mcp call waits for is announced when it ends, once', function()
  answer_keep('No', {})
  -- An agent's call, say: sent to the sidecar directly, not through :Mcp call.
  local result = T.exec('mcp-sidecar.callTool', {
    server = 'demo',
    tool = 'slow_task',
    arguments = { steps = 2, stepMs = 50 },
  })
  T.eq(false, result.structuredContent.keep)
  local n = T.wait_notification('task demo › slow_task completed (:Mcp tasks shows it)')
  T.eq(vim.log.levels.INFO, n.level)
  T.flush_scheduled()
  local count = 0
  for _, m in ipairs(T.notifications) do
    if m.message:find('task demo › slow_task completed', 1, true) then
      count = count + 1
    end
  end
  T.eq(1, count)
end)

T.test('times: the local time of day of an RFC 3339 time', function()
  local now = os.time()
  local utc = os.date('!%Y-%m-%dT%H:%M:%SZ', now)
  T.eq(os.date('%H:%M:%S', now), tasks.shown_time(utc))
  T.eq(os.date('%H:%M:%S', now), tasks.shown_time(os.date('!%Y-%m-%dT%H:%M:%S.123+00:00', now)))
  T.eq('not a time', tasks.shown_time('not a time'))
  -- Another day: with its date.
  T.eq(
    os.date('%Y-%m-%d %H:%M:%S', now - 3 * 86400),
    tasks.shown_time(os.date('!%Y-%m-%dT%H:%M:%SZ', now - 3 * 86400))
  )
end)

--- The fixture over HTTP (it outlives a sidecar), on a random port; returns its URL.
local function http_fixture()
  local out = ''
  T.spawn(
    { os.getenv('MCP_PYTHON'), T.repo_root .. '/fixtures/python/fastmcp_tasks_server.py', '--http', '0' },
    {
      env = { TASKS_WORK_MS = '3000', TASKS_POLL_MS = '100' },
      stdout = function(_, data)
        out = out .. (data or '')
      end,
    }
  )
  return T.wait(function()
    return out:match('ready (http://127%.0%.0%.1:%d+/mcp)')
  end, 'the HTTP tasks fixture to listen', 30000)
end

T.test('a sidecar restarted mid-task follows the task again and announces its end', function()
  T.teardown()
  local url = http_fixture()
  T.start_sidecar({ servers = { remote = { url = url } } })
  T.wait_running('remote', 30000)
  local first = require('mcp_sidecar').client()
  vim.cmd('Mcp call remote slow_report {"topic": "restart"}')
  local task = T.wait(function()
    return task_of('slow_report', 'remote')
  end, 'the task to run', 20000)
  -- The sidecar goes away in the task's first half (before its question).
  first:stop()
  -- A stopped sidecar leaves no task behind here.
  T.wait(function()
    return first:is_stopped() and tasks.get(first.id, 'remote', task.taskId) == nil
  end, 'the first sidecar to stop, and its tasks to go')

  local asked = T.script_select(function(items, _, opts)
    if opts.prompt:find('Depth', 1, true) then
      return T.pick('short')(items)
    end
    return T.pick('Submit')(items)
  end)
  require('mcp_sidecar.async').run(function()
    require('mcp_sidecar.client').ensure()
  end)
  local n = T.wait_notification('task remote › slow_report completed (:Mcp tasks shows it)', 30000)
  T.eq(vim.log.levels.INFO, n.level)
  T.ok(#asked >= 1, 'the question was asked after the restart')
  T.contains(asked[1].opts.prompt, 'How deep should the report on restart go?')

  local picks = T.script_select(function(items, _, opts)
    if opts.prompt == 'MCP tasks' then
      return T.pick('remote › slow_report')(items)
    end
    return T.pick('Show result')(items)
  end)
  vim.cmd('Mcp tasks')
  local buf = T.wait_buf('^mcp://task/remote/' .. vim.pesc(task.taskId) .. '$')
  T.contains(T.lines(buf), 'report on restart: depth short')
  T.ok(#picks == 2)
end)
