-- :Mcp tasks and :Mcp tasks cancel: the tasks of the sidecar (running ones first, then those that
-- ended) in a pick (vim.ui.select); a running one can be cancelled (mcp-sidecar.cancelTask, the
-- server gets tasks/cancel), the result of one that ended opens in a read-only Markdown buffer.
local async = require('mcp_sidecar.async')
local common = require('mcp_sidecar.commands.common')
local exec = require('mcp_sidecar.exec')
local format = require('mcp_sidecar.format')
local scratch = require('mcp_sidecar.ui.scratch')
local tasks = require('mcp_sidecar.tasks')
local util = require('mcp_sidecar.util')

local M = {}

local CMD, notify = exec.CMD, util.notify

--- The sidecar's tasks (kept in tasks.lua), nil after reporting a failure.
local function list_tasks(client)
  if not exec.has_command(client, CMD.list_tasks) then
    notify('this sidecar has no tasks (it is older than the Tasks extension)', vim.log.levels.WARN)
    return nil
  end
  local rows, err = exec.run(client, CMD.list_tasks)
  if err then
    notify('listing the tasks failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
    return nil
  end
  rows = vim.tbl_filter(function(row)
    return type(row) == 'table' and type(row.server) == 'string'
  end, type(rows) == 'table' and rows or {})
  tasks.merge(client.id, rows)
  return tasks.ordered(rows)
end

--- A task as Markdown lines: its state and times, then its result as :Mcp call shows one.
function M.document(task)
  local result = type(task.result) == 'table' and task.result or nil
  local lines = format.tool_result(task.server, tostring(task.tool), nil, result)
  local head = {
    ('Task `%s`: **%s**%s'):format(
      tostring(task.taskId),
      tostring(task.status),
      type(task.statusMessage) == 'string' and (' (' .. task.statusMessage .. ')') or ''
    ),
    ('Started %s, %s %s.'):format(
      tasks.shown_time(task.startedAt),
      tasks.is_running(task.status) and 'updated' or 'ended',
      tasks.shown_time(task.updatedAt)
    ),
    '',
  }
  if type(task.error) == 'string' then
    vim.list_extend(head, { 'Error: ' .. task.error, '' })
  end
  if not result then
    lines = { lines[1], '', 'No result.' }
  end
  for i, line in ipairs(head) do
    table.insert(lines, 2 + i, line)
  end
  return lines
end

--- The task's document in `mcp://task/<server>/<taskId>` (read-only).
local function show_result(task)
  scratch.show(('mcp://task/%s/%s'):format(task.server, tostring(task.taskId)), M.document(task), {
    filetype = 'markdown',
    reuse = '^mcp://task/',
  })
end

local function cancel(client, task)
  tasks.expect(client.id, task.server, task.taskId)
  local now, err = exec.run(client, CMD.cancel_task, { server = task.server, taskId = task.taskId })
  if err then
    notify(
      ('cancelling the task %s › %s failed: %s'):format(
        task.server,
        tostring(task.tool),
        exec.error_message(err)
      ),
      vim.log.levels.ERROR
    )
    return
  end
  if type(now) == 'table' then
    tasks.status(client.id, now)
  end
  notify(('cancelling the task %s › %s'):format(task.server, tostring(task.tool)))
end

--- :Mcp tasks: a pick of the tasks, then what to do with the chosen one. With `sub` = 'cancel',
--- a pick of the running ones, cancelled at once.
function M.show(sub)
  if sub ~= nil and sub ~= 'cancel' then
    notify(
      ('unknown argument "%s": :Mcp tasks lists the tasks, :Mcp tasks cancel cancels a running one'):format(
        sub
      ),
      vim.log.levels.ERROR
    )
    return
  end
  common.with_client(function(client)
    local rows = list_tasks(client)
    if not rows then
      return
    end
    if sub == 'cancel' then
      rows = vim.tbl_filter(function(task)
        return tasks.is_running(task.status)
      end, rows)
    end
    if #rows == 0 then
      notify(
        sub == 'cancel' and 'no task is running'
          or 'no tasks (a tool call a server runs as a task shows here)'
      )
      return
    end
    local task = async.select(rows, {
      prompt = sub == 'cancel' and 'Cancel which MCP task?' or 'MCP tasks',
      kind = 'mcp_sidecar',
      format_item = tasks.line,
    })
    if not task then
      return
    end
    if sub == 'cancel' then
      cancel(client, task)
      return
    end
    local running = tasks.is_running(task.status)
    local action = async.select({ running and 'Cancel task' or 'Show result' }, {
      prompt = ('%s › %s (%s)'):format(task.server, tostring(task.tool), tostring(task.status)),
      kind = 'mcp_sidecar',
    })
    if action == 'Cancel task' then
      cancel(client, task)
    elseif action == 'Show result' then
      show_result(task)
    end
  end)
end

return M
