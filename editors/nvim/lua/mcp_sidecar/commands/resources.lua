-- :Mcp resources [server], :Mcp read <server> <uri> and :Mcp[!] prompt [server] [name]: the
-- flows are browse.lua's and the resource buffers resources.lua's; both send their commands
-- through the table of functions built here (server_api).
local browse = require('mcp_sidecar.browse')
local client_mod = require('mcp_sidecar.client')
local common = require('mcp_sidecar.commands.common')
local exec = require('mcp_sidecar.exec')
local resource_buffers = require('mcp_sidecar.resources')
local state = require('mcp_sidecar.state')
local util = require('mcp_sidecar.util')

local M = {}

local CMD = exec.CMD
local notify = util.notify

--- The resource, prompt, completion and URI-template commands of one sidecar, for resources.lua
--- and browse.lua.
--- Each returns (result, err) and runs inside async.run(); `complete` also outside (then
--- synchronously, for <Tab>), and gives the suggested values.
local function server_api(client)
  local function run(command, argument)
    return exec.run(client, command, argument)
  end
  local function on(server)
    return server and { server = server } or nil
  end
  local no_completions = {}
  return {
    client_id = client.id,
    error_message = exec.error_message,
    is_cancelled = exec.is_cancelled,
    list_resources = function(server)
      return run(CMD.list_resources, on(server))
    end,
    list_templates = function(server)
      return run(CMD.list_resource_templates, on(server))
    end,
    read = function(server, uri)
      return run(CMD.read_resource, { server = server, uri = uri })
    end,
    subscribe = function(server, uri)
      return run(CMD.subscribe_resource, { server = server, uri = uri })
    end,
    unsubscribe = function(server, uri)
      return run(CMD.unsubscribe_resource, { server = server, uri = uri })
    end,
    list_prompts = function(server)
      return run(CMD.list_prompts, on(server))
    end,
    get_prompt = function(server, name, arguments)
      return run(CMD.get_prompt, { server = server, name = name, arguments = arguments })
    end,
    --- The sidecar parses and expands `template` (RFC 6570, all four levels) with `values`
    --- (variable -> string; absent: undefined): `{ variables, uri }`, the variables in order,
    --- each once; a malformed template is refused with the reason.
    expand_template = function(template, values)
      local argument = { uriTemplate = template }
      if values and next(values) ~= nil then
        argument.values = values
      end
      return run(CMD.expand_uri_template, argument)
    end,
    --- Suggested values for argument `name` (typed so far: `value`), [] when there are none or
    --- the server has no completions.
    complete = function(server, ref, name, value, context)
      if no_completions[server] then
        return {}
      end
      local argument = { server = server, ref = ref, argument = { name = name, value = value } }
      if context and next(context) ~= nil then
        argument.context = { arguments = context }
      end
      local result, err
      if coroutine.running() then
        result, err = run(CMD.complete, argument)
      else
        result = exec.sync(client, CMD.complete, argument)
      end
      if vim.tbl_get(err or {}, 'data', 'kind') == 'refused' then
        no_completions[server] = true
      end
      local values = vim.tbl_get(result or {}, 'completion', 'values')
      return type(values) == 'table'
          and vim.tbl_filter(function(v)
            return type(v) == 'string'
          end, values)
        or {}
    end,
  }
end

--- :Mcp resources [server]: a pick over the resources and templates, then the chosen one read.
function M.resources(server)
  common.with_client(function(client)
    browse.resources(server_api(client), server)
  end)
end

--- :Mcp read <server> <uri>
function M.read(server, uri)
  if not server or not uri or uri == '' then
    notify('usage: :Mcp read <server> <uri> (or :Mcp resources to pick one)', vim.log.levels.ERROR)
    return
  end
  common.with_client(function(client)
    resource_buffers.open(server_api(client), server, uri)
  end)
end

--- :Mcp[!] prompt [server] [name]: the arguments asked, then the messages in a Markdown buffer,
--- or (with !) their text inserted at the cursor of the window it was run from.
function M.prompt(server, name, insert)
  local origin = vim.api.nvim_get_current_win()
  common.with_client(function(client)
    browse.prompt(server_api(client), server, name, insert and origin or nil)
  end)
end

--- Resource URIs or prompt names of `server` for completion: asked again each time (the
--- sidecar keeps the lists), the last answer when it does not answer within a second.
local function listed_names(kind, command, field, server)
  local client = client_mod.get()
  if not client or not server then
    return {}
  end
  local rows = exec.sync(client, command, { server = server })
  if rows then
    state.set_names(client.id, kind, rows, server, field)
  end
  return state.names(client.id, kind, server) or {}
end

function M.resource_uris(server)
  return listed_names('resources', CMD.list_resources, 'uri', server)
end

function M.prompt_names(server)
  return listed_names('prompts', CMD.list_prompts, 'name', server)
end

return M
