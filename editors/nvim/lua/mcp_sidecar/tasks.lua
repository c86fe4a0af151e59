-- Tasks (a tool call a server answered with a task): what `mcp-sidecar/taskStatus` and
-- `mcp-sidecar.listTasks` say of each, per sidecar client; which of them a `:Mcp call` waits for
-- (its progress shows those, and their result opens when the call returns); a task that ends
-- while no call waits for it (it ended while the sidecar restarted, an agent's) is announced
-- with vim.notify, once. Each change fires `User McpSidecarTask` (data = the task plus
-- `client_id`), and the statusline counts the running ones (state.status).
local util = require('mcp_sidecar.util')

local M = {}

---@type table<integer, table<string, table>>
local by_client = {}
--- The :Mcp calls in flight: { client_id, key = server\ntool, task? }.
local calls = {}
--- Tasks a call waits for (or got, or the person cancelled), and ended tasks announced, by
--- client and server\ntaskId.
---@type table<integer, table<string, true>>
local awaited, announced = {}, {}

local function key(server, task_id)
  return tostring(server) .. '\n' .. tostring(task_id)
end

local function set(tbl, client_id, k)
  tbl[client_id] = tbl[client_id] or {}
  tbl[client_id][k] = true
end

local function has(tbl, client_id, k)
  return tbl[client_id] ~= nil and tbl[client_id][k] == true
end

function M.is_running(status)
  return status == 'working' or status == 'input_required'
end

local function valid(task)
  return type(task) == 'table' and type(task.server) == 'string' and task.taskId ~= nil
end

--- A `:Mcp call` of `tool` of `server` starts: the task it becomes is waited for there.
function M.call_started(client_id, server, tool)
  local call = { client_id = client_id, key = key(server, tool) }
  table.insert(calls, call)
  return call
end

--- The call has its answer (a result, an error, a cancellation): the person saw it.
function M.call_ended(call)
  for i, c in ipairs(calls) do
    if c == call then
      table.remove(calls, i)
      return
    end
  end
end

--- The person acts on the task (cancels it): its end is not announced.
function M.expect(client_id, server, task_id)
  set(awaited, client_id, key(server, task_id))
end

local function changed(client_id, task)
  vim.schedule(function()
    vim.api.nvim_exec_autocmds('User', {
      pattern = 'McpSidecarTask',
      modeline = false,
      data = vim.tbl_extend('force', vim.deepcopy(task), { client_id = client_id }),
    })
    vim.cmd.redrawstatus({ bang = true, mods = { emsg_silent = true } })
  end)
end

--- What an ended task came to, in one line.
function M.ended_message(task)
  local what = ('task %s › %s'):format(task.server, tostring(task.tool))
  local why = type(task.error) == 'string' and task.error or nil
  if task.status == 'completed' then
    local is_error = type(task.result) == 'table' and task.result.isError == true
    return what .. ' completed' .. (is_error and ' (the tool reported an error)' or '')
  elseif task.status == 'cancelled' then
    return what .. ' was cancelled'
  elseif task.status == 'lost' then
    return what .. ' is lost: ' .. (why or 'the server no longer knows it')
  end
  return what .. ' ' .. tostring(task.status) .. (why and (': ' .. why) or '')
end

--- `mcp-sidecar/taskStatus`: kept; announced when it ended and no call of this Neovim waits for it.
function M.status(client_id, task)
  if not valid(task) then
    return
  end
  local tasks = by_client[client_id] or {}
  by_client[client_id] = tasks
  local k = key(task.server, task.taskId)
  -- A task that ended never runs again: a report older than its end changes nothing.
  if tasks[k] and not M.is_running(tasks[k].status) and M.is_running(task.status) then
    return
  end
  if not tasks[k] and not has(awaited, client_id, k) then
    local tool_key = key(task.server, task.tool)
    for _, call in ipairs(calls) do
      if call.client_id == client_id and call.key == tool_key and not call.task then
        call.task = k
        set(awaited, client_id, k)
        break
      end
    end
  end
  tasks[k] = vim.deepcopy(task)
  changed(client_id, task)
  if M.is_running(task.status) or has(awaited, client_id, k) or has(announced, client_id, k) then
    return
  end
  set(announced, client_id, k)
  local level = task.status == 'completed' and vim.log.levels.INFO or vim.log.levels.WARN
  vim.schedule(function()
    util.notify(M.ended_message(task) .. ' (:Mcp tasks shows it)', level)
  end)
end

--- The rows of `mcp-sidecar.listTasks` replace what was known of these tasks.
function M.merge(client_id, rows)
  local tasks = by_client[client_id] or {}
  by_client[client_id] = tasks
  for _, task in ipairs(type(rows) == 'table' and rows or {}) do
    local known = valid(task) and tasks[key(task.server, task.taskId)]
    if valid(task) and not (known and not M.is_running(known.status) and M.is_running(task.status)) then
      tasks[key(task.server, task.taskId)] = vim.deepcopy(task)
    end
  end
  vim.schedule(function()
    vim.cmd.redrawstatus({ bang = true, mods = { emsg_silent = true } })
  end)
end

--- The sidecar stopped: its tasks, and the calls waiting on it, are forgotten here.
function M.clear(client_id)
  by_client[client_id], awaited[client_id], announced[client_id] = nil, nil, nil
  calls = vim.tbl_filter(function(call)
    return call.client_id ~= client_id
  end, calls)
end

function M.get(client_id, server, task_id)
  local task = vim.tbl_get(by_client, client_id, key(server, task_id))
  return task and vim.deepcopy(task) or nil
end

--- The running tasks of one client (or of every client).
function M.running(client_id)
  local out = {}
  for id, tasks in pairs(by_client) do
    if client_id == nil or id == client_id then
      for _, task in pairs(tasks) do
        if M.is_running(task.status) then
          table.insert(out, vim.tbl_extend('force', vim.deepcopy(task), { client_id = id }))
        end
      end
    end
  end
  return out
end

-- Rows and documents ------------------------------------------------------------------------------

--- An RFC 3339 time as the local time of day ("10:30:04"), with the date when it is not today.
function M.shown_time(text)
  if type(text) ~= 'string' then
    return '?'
  end
  local y, mo, d, h, mi, s, zone = text:match('^(%d+)-(%d+)-(%d+)[Tt ](%d+):(%d+):(%d+)[%.%d]*(.*)$')
  if not y then
    return text
  end
  local offset = 0
  local sign, zh, zm = zone:match('^([+-])(%d%d):?(%d%d)$')
  if sign then
    offset = (tonumber(zh) * 3600 + tonumber(zm) * 60) * (sign == '-' and -1 or 1)
  elseif zone ~= 'Z' and zone ~= 'z' then
    return text
  end
  -- os.time reads a table as local time (isdst left to the C library): correct by the local
  -- offset from UTC at that moment.
  local as_local = os.time({
    year = tonumber(y),
    month = tonumber(mo),
    day = tonumber(d),
    hour = tonumber(h),
    min = tonumber(mi),
    sec = tonumber(s),
  })
  local utc = os.date('!*t', as_local)
  utc.isdst = nil
  local at = as_local + os.difftime(as_local, os.time(utc)) - offset
  local today = os.date('%Y-%m-%d') == os.date('%Y-%m-%d', at)
  return os.date(today and '%H:%M:%S' or '%Y-%m-%d %H:%M:%S', at)
end

local marks = {
  working = '⟳',
  input_required = '?',
  completed = '✓',
  failed = '✗',
  cancelled = '⊘',
  lost = '⚠',
}

--- A task's line in the :Mcp tasks pick: "⟳ demo › slow_task  working · halfway · started 10:30:00".
function M.line(task)
  local parts = { tostring(task.status) }
  if type(task.statusMessage) == 'string' and task.statusMessage ~= '' then
    table.insert(parts, task.statusMessage)
  end
  table.insert(parts, 'started ' .. M.shown_time(task.startedAt))
  if not M.is_running(task.status) then
    table.insert(parts, 'ended ' .. M.shown_time(task.updatedAt))
  end
  if type(task.error) == 'string' then
    table.insert(parts, task.error)
  end
  return ('%s %s › %s  %s'):format(
    marks[task.status] or '·',
    task.server,
    tostring(task.tool),
    table.concat(parts, ' · ')
  )
end

--- Running tasks first, then those that ended, each group in the sidecar's order.
function M.ordered(rows)
  local running, ended = {}, {}
  for _, task in ipairs(rows) do
    table.insert(M.is_running(task.status) and running or ended, task)
  end
  return vim.list_extend(running, ended)
end

return M
