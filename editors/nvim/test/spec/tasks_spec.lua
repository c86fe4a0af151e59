-- Tasks end to end (the Tasks extension): the real sidecar and FastMCP's tasks fixture
-- (fixtures/python/fastmcp_tasks_server.py, MCP_PYTHON from scripts/install-peers.sh). A :Mcp call
-- that becomes a task shows its progress and the task in the statusline, answers the server's
-- question mid-task through vim.ui, and opens its result; :Mcp tasks lists it and shows its
-- result again; :Mcp tasks cancel sends tasks/cancel (the fixture writes down what it got); a task
-- no :Mcp call waits for is announced when it ends.
local T = require('helpers')

local cancel_log = vim.fn.tempname()

local function server()
  local python = os.getenv('MCP_PYTHON')
  T.ok(
    python and vim.fn.executable(python) == 1,
    'MCP_PYTHON must name the peers venv python (bash scripts/install-peers.sh; run.sh sources .cache/peers/env.sh)'
  )
  return {
    command = python,
    args = { T.repo_root .. '/fixtures/python/fastmcp_tasks_server.py' },
    env = { TASKS_WORK_MS = '1200', TASKS_POLL_MS = '100', TASKS_CANCEL_LOG = cancel_log },
  }
end

local tasks = require('mcp_sidecar.tasks')

local function task_of(tool)
  for _, task in ipairs(tasks.running()) do
    if task.server == 'tasks' and task.tool == tool then
      return task
    end
  end
end

local function status_of(task)
  local client = require('mcp_sidecar').client()
  return (tasks.get(client.id, task.server, task.taskId) or {}).status
end

T.test(':Mcp call of a task: progress, the question mid-task, the result; :Mcp tasks shows it', function()
  T.start_sidecar({ servers = { tasks = server() } })
  T.wait_running('tasks', 30000)
  local progress = {}
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(ev)
      local value = vim.tbl_get(ev, 'data', 'params', 'value') or {}
      table.insert(progress, value)
    end,
  })
  local asked = {}
  T.script_select(function(lines, _, opts)
    table.insert(asked, { prompt = opts.prompt, lines = lines })
    if opts.prompt:find('Depth', 1, true) then
      return T.pick('long')(lines)
    elseif opts.prompt:find('Review', 1, true) then
      return T.pick('Submit')(lines)
    end
    error('unexpected select: ' .. opts.prompt .. ' ' .. vim.inspect(lines))
  end, { delay = 50 })
  vim.cmd('Mcp call tasks slow_report {"topic": "q3"}')

  -- Running: the statusline counts it while the call waits.
  local task = T.wait(function()
    return task_of('slow_report')
  end, 'the task to be reported (mcp-sidecar/taskStatus)', 20000)
  T.contains(require('mcp_sidecar').status(), '⧗1')

  local lines = T.lines(T.wait_buf('^mcp://result/tasks/slow_report/%d+$', 30000))
  T.contains(lines, 'report on q3: depth long')
  T.ok(
    #asked >= 1 and asked[1].prompt:find('How deep should the report on q3 go?', 1, true),
    vim.inspect(asked)
  )
  T.wait(function()
    return status_of(task) == 'completed'
  end, 'the task to be completed')
  T.not_contains(require('mcp_sidecar').status(), '⧗')
  -- Its progress was the call's work-done progress: begun and ended.
  local kinds = vim.tbl_map(function(v)
    return v.kind
  end, progress)
  T.eq('begin', kinds[1])
  T.eq('end', kinds[#kinds])
  -- The call waited for it: no announcement.
  T.flush_scheduled()
  for _, n in ipairs(T.notifications) do
    T.not_contains(n.message, 'task tasks › slow_report completed')
  end

  -- :Mcp tasks lists it as completed; Show result opens its result read-only.
  vim.cmd('bwipeout! ' .. vim.fn.bufnr('^mcp://result/'))
  local picks = T.script_select(function(items, _, opts)
    if opts.prompt == 'MCP tasks' then
      return T.pick('tasks › slow_report')(items)
    end
    return T.pick('Show result')(items)
  end)
  vim.cmd('Mcp tasks')
  local buf = T.wait_buf('^mcp://task/tasks/')
  T.contains(picks[1].lines, '✓ tasks › slow_report  completed · started ')
  T.eq({ 'Show result' }, picks[2].lines)
  T.contains(T.lines(buf), 'report on q3: depth long')
  T.contains(T.lines(buf), 'Task `' .. task.taskId .. '`: **completed**')
  T.eq(false, vim.bo[buf].modifiable)
end)

T.test(':Mcp tasks cancel: the server gets tasks/cancel; the task ends cancelled', function()
  local done = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'McpSidecarTask',
    callback = function(ev)
      done = done or (ev.data.tool == 'never_finishes' and ev.data.status == 'cancelled')
    end,
  })
  vim.cmd('Mcp call tasks never_finishes')
  local task = T.wait(function()
    return task_of('never_finishes')
  end, 'never_finishes to run as a task', 20000)
  local picks = T.script_select(T.pick('tasks › never_finishes'))
  vim.cmd('Mcp tasks cancel')
  T.wait(function()
    local f = io.open(cancel_log)
    local text = f and f:read('*a') or ''
    if f then
      f:close()
    end
    return text:find('cancelled never_finishes ' .. task.taskId, 1, true)
  end, 'the fixture to see tasks/cancel', 20000)
  T.wait(function()
    return done
  end, 'taskStatus cancelled (User McpSidecarTask)', 20000)
  T.eq('Cancel which MCP task?', picks[1].opts.prompt)
  T.eq(1, #picks[1].lines, 'only running tasks are offered')
  T.wait_notification('cancelling the task tasks › never_finishes')
end)

T.test('a task no :Mcp call waits for is announced when it ends, once', function()
  -- An agent's call, say: sent to the sidecar directly, not through :Mcp call.
  local result = T.exec('mcp-sidecar.callTool', { server = 'tasks', tool = 'quick', arguments = { x = 7 } })
  T.eq(7, result.structuredContent.result)
  local n = T.wait_notification('task tasks › quick completed (:Mcp tasks shows it)')
  T.eq(vim.log.levels.INFO, n.level)
  T.flush_scheduled()
  local count = 0
  for _, m in ipairs(T.notifications) do
    if m.message:find('task tasks › quick completed', 1, true) then
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
    for _, t in ipairs(tasks.running(first.id)) do
      if t.tool == 'slow_report' then
        return t
      end
    end
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
