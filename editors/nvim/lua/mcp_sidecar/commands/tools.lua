-- :Mcp tools [server] and :Mcp call [server] [tool] [json].
local async = require('mcp_sidecar.async')
local client_mod = require('mcp_sidecar.client')
local common = require('mcp_sidecar.commands.common')
local config = require('mcp_sidecar.config')
local exec = require('mcp_sidecar.exec')
local format = require('mcp_sidecar.format')
local scratch = require('mcp_sidecar.ui.scratch')
local state = require('mcp_sidecar.state')
local tasks = require('mcp_sidecar.tasks')
local util = require('mcp_sidecar.util')

local M = {}

local CMD = exec.CMD
local notify, is_null = util.notify, util.is_null

--- Whether a listTools row has a view (MCP Apps: `ui.resourceUri`), which opens in the browser
--- when the tool is called.
local function has_view(row)
  return type(row.ui) == 'table' and type(row.ui.resourceUri) == 'string'
end

local function list_tools(client, server)
  local rows, err = exec.run(client, CMD.list_tools, server and { server = server } or nil)
  if err then
    notify('listing tools failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
    return nil
  end
  rows = type(rows) == 'table' and rows or {}
  state.set_tools(client.id, rows, server)
  return rows
end

-- :Mcp tools [server] --------------------------------------------------------------------------

function M.show(server)
  common.with_client(function(client)
    local rows = list_tools(client, server)
    if not rows then
      return
    end
    local lines = { server and ('# Tools of %s'):format(server) or '# MCP tools', '' }
    local at = {}
    local current
    for _, row in ipairs(rows) do
      if row.server ~= current then
        current = row.server
        vim.list_extend(lines, { '## ' .. row.server, '' })
      end
      local title = (not is_null(row.title) and row.title ~= row.name) and (' — ' .. row.title) or ''
      local view = has_view(row) and ' (view)' or ''
      table.insert(lines, ('- %s%s%s'):format(util.shown_name(row), title, view))
      at[#lines] = row
      if type(row.description) == 'string' and row.description ~= '' then
        for _, line in ipairs(vim.split(row.description, '\n', { plain = true })) do
          table.insert(lines, '  ' .. line)
          at[#lines] = row
        end
      end
      local args = format.arguments(row.inputSchema)
      if args then
        table.insert(lines, '  arguments: ' .. args)
        at[#lines] = row
      end
    end
    if #rows == 0 then
      table.insert(lines, 'No tools (is a server running? See :Mcp servers).')
    end
    table.insert(lines, '')
    table.insert(lines, '<CR> call the tool under the cursor · q close')
    scratch.show('mcp://tools', lines, {
      filetype = 'markdown',
      keys = {
        ['<CR>'] = {
          desc = 'Call the tool under the cursor',
          fn = function()
            local row = at[vim.api.nvim_win_get_cursor(0)[1]]
            if row then
              M.call(row.server, row.name)
            end
          end,
        },
      },
    })
  end)
end

-- :Mcp call [server] [tool] [json] ---------------------------------------------------------------

local result_count = 0

--- Parses the arguments a person typed: a JSON object (empty text = {}).
function M.parse_arguments(text)
  text = vim.trim(text or '')
  if text == '' then
    return vim.empty_dict()
  end
  local ok, value = pcall(vim.json.decode, text)
  if not ok then
    return nil, 'not valid JSON: ' .. tostring(value):gsub('^.-: ', '')
  end
  if type(value) ~= 'table' or (vim.islist(value) and next(value) ~= nil) then
    return nil, 'the arguments must be a JSON object, like {"a": 1}'
  end
  if next(value) == nil then
    return vim.empty_dict()
  end
  return value
end

local function ask_arguments(server, tool)
  local described = format.arguments(tool.inputSchema)
  local text, problem = '', nil
  while true do
    local prompt = ('%s › %s arguments (JSON object; %s): '):format(
      server,
      tool.name,
      described or 'none needed'
    )
    if problem then
      prompt = '⚠ ' .. problem .. ' · ' .. prompt
    end
    local typed = async.input({ prompt = prompt, default = text, kind = 'mcp_sidecar' })
    if typed == nil then
      return nil
    end
    local value, err = M.parse_arguments(typed)
    if value then
      return value
    end
    text, problem = typed, err
  end
end

local function pick_server(client)
  local rows = common.list_servers(client)
  if not rows then
    return nil
  end
  local running = vim.tbl_filter(function(row)
    return row.state == 'running'
  end, rows)
  if #running == 0 then
    notify('no MCP server is running (see :Mcp servers)', vim.log.levels.WARN)
    return nil
  end
  if #running == 1 then
    return running[1].name
  end
  local row = async.select(running, {
    prompt = 'Call a tool of which MCP server?',
    kind = 'mcp_sidecar',
    format_item = function(r)
      return r.name
    end,
  })
  return row and row.name
end

--- A tool's line in the pick of :Mcp call: its name, "(view)" when it has one, its description.
function M.pick_line(row)
  local view = has_view(row) and ' (view)' or ''
  local desc = (type(row.description) == 'string' and row.description ~= '') and (' — ' .. row.description)
    or ''
  return util.shown_name(row) .. view .. desc
end

local function pick_tool(server, tools, tool_name)
  if tool_name then
    local tool
    for _, row in ipairs(tools) do
      if row.name == tool_name then
        tool = row
      end
    end
    if not tool then
      notify(
        ('%s has no tool "%s" (see :Mcp tools %s)'):format(server, tool_name, server),
        vim.log.levels.ERROR
      )
    end
    return tool
  end
  if #tools == 0 then
    notify(server .. ' has no tools', vim.log.levels.WARN)
    return nil
  end
  return async.select(tools, {
    prompt = ('Call which tool of %s?'):format(server),
    kind = 'mcp_sidecar',
    format_item = M.pick_line,
  })
end

--- The arguments of the call: from the command line, asked as one JSON object (tool_arguments =
--- 'prompt'), or nil for the sidecar to ask each. `false` when the person cancelled or the
--- command line's JSON was wrong (both already reported).
local function call_arguments(server, tool, json_text)
  if json_text and vim.trim(json_text) ~= '' then
    local arguments, err = M.parse_arguments(json_text)
    if not arguments then
      notify(err, vim.log.levels.ERROR)
      return false
    end
    return arguments
  elseif config.get().tool_arguments == 'prompt' then
    local props = type(tool.inputSchema) == 'table' and tool.inputSchema.properties or nil
    if type(props) ~= 'table' or next(props) == nil then
      return vim.empty_dict()
    end
    local arguments = ask_arguments(server, tool)
    if arguments == nil then
      notify('call cancelled')
      return false
    end
    return arguments
  end
  return nil
end

local function show_result(server, tool, arguments, result)
  result_count = result_count + 1
  local name = ('mcp://result/%s/%s/%d'):format(server, tool, result_count)
  return scratch.show(name, format.tool_result(server, tool, arguments, result), {
    filetype = 'markdown',
    reuse = '^mcp://result/',
  })
end

function M.call(server, tool_name, json_text)
  common.with_client(function(client)
    server = server or pick_server(client)
    if not server then
      return
    end
    local tools = list_tools(client, server)
    if not tools then
      return
    end
    local tool = pick_tool(server, tools, tool_name)
    if not tool then
      return
    end
    local arguments = call_arguments(server, tool, json_text)
    if arguments == false then
      return
    end

    vim.api.nvim_echo({ { ('mcp-sidecar: calling %s › %s…'):format(server, tool.name) } }, false, {})
    local argument = { server = server, tool = tool.name, arguments = arguments }
    -- A task the call becomes is this call's: its progress shows here, its result opens here.
    local watch = tasks.call_started(client.id, server, tool.name)
    local result, call_err = exec.run(client, CMD.call_tool, argument, { progress = true })
    tasks.call_ended(watch)
    if exec.is_cancelled(call_err) then
      notify(('%s › %s: call cancelled'):format(server, tool.name))
      return
    elseif call_err then
      notify(
        ('%s › %s failed: %s'):format(server, tool.name, exec.error_message(call_err)),
        vim.log.levels.ERROR
      )
      return
    end
    show_result(server, tool.name, arguments, not is_null(result) and result or nil)
  end)
end

--- The tool names of `server` for completion: the kept list, else asked (within a second).
function M.names(server)
  local client = client_mod.get()
  if not client then
    return {}
  end
  local names = state.tools(client.id, server)
  if names then
    return names
  end
  local rows = exec.sync(client, CMD.list_tools, { server = server })
  if rows then
    state.set_tools(client.id, rows, server)
  end
  return state.tools(client.id, server) or {}
end

return M
