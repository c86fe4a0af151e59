-- Server states from `mcp-sidecar/serverStatus`, per sidecar client, for statuslines, completion
-- and :checkhealth. Each change fires `User McpSidecarStatus` (data = the notification's params
-- plus `client_id`).
local M = {}

---@type table<integer, table<string, table>>
local by_client = {}
---@type table<integer, table<string, string[]>>
local tool_names = {}
--- Other names seen in list answers (resource URIs, prompt names), by client, kind and server.
---@type table<integer, table<string, table<string, string[]>>>
local listed = {}
--- The running calls' progress (from $/progress), by client and token: the begin's title and
--- the latest report's message.
---@type table<integer, table<string, { title: string, message?: string, at: integer }>>
local progress = {}

function M.update(client_id, params)
  if type(params) ~= 'table' or type(params.name) ~= 'string' then
    return
  end
  by_client[client_id] = by_client[client_id] or {}
  local row = vim.deepcopy(params)
  row.updated = vim.uv.now()
  -- serverStatus has no transport: keep the one a listServers row told.
  local previous = by_client[client_id][params.name]
  if previous and row.transport == nil then
    row.transport = previous.transport
  end
  by_client[client_id][params.name] = row
  if params.state ~= 'running' and tool_names[client_id] then
    tool_names[client_id][params.name] = nil
  end
  if params.state ~= 'running' then
    for _, by_server in pairs(listed[client_id] or {}) do
      by_server[params.name] = nil
    end
  end
  vim.schedule(function()
    vim.api.nvim_exec_autocmds('User', {
      pattern = 'McpSidecarStatus',
      modeline = false,
      data = vim.tbl_extend('force', vim.deepcopy(params), { client_id = client_id }),
    })
    vim.cmd.redrawstatus({ bang = true, mods = { emsg_silent = true } })
  end)
end

--- Replaces a client's known servers (from mcp-sidecar.listServers rows).
function M.replace(client_id, rows)
  by_client[client_id] = {}
  for _, row in ipairs(rows or {}) do
    if type(row) == 'table' and type(row.name) == 'string' then
      by_client[client_id][row.name] = vim.deepcopy(row)
    end
  end
end

--- Keeps a call's latest progress (`$/progress` params): begin and report set it, end drops it.
function M.progress(client_id, params)
  local value = type(params) == 'table' and params.value
  if type(value) ~= 'table' or params.token == nil then
    return
  end
  local calls = progress[client_id] or {}
  progress[client_id] = calls
  local token = tostring(params.token)
  if value.kind == 'begin' then
    calls[token] = { title = tostring(value.title or ''), at = vim.uv.hrtime() }
  elseif value.kind == 'report' and calls[token] and type(value.message) == 'string' then
    calls[token].message = value.message
    calls[token].at = vim.uv.hrtime()
  elseif value.kind == 'end' then
    calls[token] = nil
  else
    return
  end
  vim.schedule(function()
    vim.cmd.redrawstatus({ bang = true, mods = { emsg_silent = true } })
  end)
end

--- The running call last heard from, as "demo: count_down 2 left (33%)"; nil when none runs.
local function latest_progress(client_id)
  local latest
  for id, calls in pairs(progress) do
    if client_id == nil or id == client_id then
      for _, call in pairs(calls) do
        if not latest or call.at > latest.at then
          latest = call
        end
      end
    end
  end
  if not latest then
    return nil
  end
  return latest.message and (latest.title .. ' ' .. latest.message) or latest.title
end

function M.clear(client_id)
  progress[client_id] = nil
  by_client[client_id] = nil
  tool_names[client_id] = nil
  listed[client_id] = nil
end

--- Servers of one client (or of every client), sorted by name.
function M.servers(client_id)
  local rows = {}
  for id, servers in pairs(by_client) do
    if client_id == nil or id == client_id then
      for _, row in pairs(servers) do
        table.insert(rows, vim.tbl_extend('force', row, { client_id = id }))
      end
    end
  end
  table.sort(rows, function(a, b)
    if a.name == b.name then
      return a.client_id < b.client_id
    end
    return a.name < b.name
  end)
  return rows
end

--- Tool names seen in listTools answers, for completion. With `server`, only its list changes.
function M.set_tools(client_id, rows, server)
  local names = tool_names[client_id] or {}
  if server then
    names[server] = {}
  else
    names = {}
  end
  for _, row in ipairs(rows or {}) do
    if type(row) == 'table' and type(row.server) == 'string' then
      names[row.server] = names[row.server] or {}
      table.insert(names[row.server], row.name)
    end
  end
  tool_names[client_id] = names
end

function M.tools(client_id, server)
  local names = vim.tbl_get(tool_names, client_id, server)
  return names and vim.deepcopy(names) or nil
end

--- Names of `kind` ('resources', 'prompts') from list rows (`field` of each), for completion.
--- With `server`, only its names change.
function M.set_names(client_id, kind, rows, server, field)
  listed[client_id] = listed[client_id] or {}
  local names = server and (listed[client_id][kind] or {}) or {}
  if server then
    names[server] = {}
  end
  for _, row in ipairs(rows or {}) do
    if type(row) == 'table' and type(row.server) == 'string' and type(row[field]) == 'string' then
      names[row.server] = names[row.server] or {}
      table.insert(names[row.server], row[field])
    end
  end
  listed[client_id][kind] = names
end

function M.names(client_id, kind, server)
  local names = vim.tbl_get(listed, client_id, kind, server)
  return names and vim.deepcopy(names) or nil
end

local marks = { starting = '…', failed = '✗', needsTrust = '?', needsAuth = '🔑', stopped = '-' }

--- A short statusline text: "MCP 2/3 ✗1" (running/configured, then failed, starting, needs
--- trust, needs a sign-in, stopped), the running tasks ("⧗1"), then the progress of the call
--- last heard from ("· demo: count_down 2 left (33%)"). Empty when no sidecar is running or no
--- server is configured.
function M.status(client_id)
  local rows = M.servers(client_id)
  if #rows == 0 then
    return ''
  end
  local running = latest_progress(client_id)
  local counts = {}
  for _, row in ipairs(rows) do
    counts[row.state] = (counts[row.state] or 0) + 1
  end
  local parts = { ('MCP %d/%d'):format(counts.running or 0, #rows) }
  for _, state in ipairs({ 'failed', 'starting', 'needsTrust', 'needsAuth', 'stopped' }) do
    if counts[state] then
      table.insert(parts, marks[state] .. counts[state])
    end
  end
  local tasks = #require('mcp_sidecar.tasks').running(client_id)
  if tasks > 0 then
    table.insert(parts, '⧗' .. tasks)
  end
  if running then
    table.insert(parts, '· ' .. running)
  end
  return table.concat(parts, ' ')
end

return M
