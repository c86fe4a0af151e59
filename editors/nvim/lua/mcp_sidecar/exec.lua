-- The sidecar's commands (workspace/executeCommand): their names, sending one to a client, and
-- what an error means. Finding or starting the client is client.lua's.
local async = require('mcp_sidecar.async')

local M = {}

M.CMD = {
  list_servers = 'mcp-sidecar.listServers',
  list_tools = 'mcp-sidecar.listTools',
  call_tool = 'mcp-sidecar.callTool',
  restart_server = 'mcp-sidecar.restartServer',
  trust_server = 'mcp-sidecar.trustServer',
  untrust_server = 'mcp-sidecar.untrustServer',
  open_sampling_log = 'mcp-sidecar.openSamplingLog',
  sign_in = 'mcp-sidecar.signIn',
  sign_out = 'mcp-sidecar.signOut',
  list_resources = 'mcp-sidecar.listResources',
  list_resource_templates = 'mcp-sidecar.listResourceTemplates',
  read_resource = 'mcp-sidecar.readResource',
  subscribe_resource = 'mcp-sidecar.subscribeResource',
  unsubscribe_resource = 'mcp-sidecar.unsubscribeResource',
  list_prompts = 'mcp-sidecar.listPrompts',
  get_prompt = 'mcp-sidecar.getPrompt',
  complete = 'mcp-sidecar.complete',
  gateway_info = 'mcp-sidecar.gatewayInfo',
  expand_uri_template = 'mcp-sidecar.expandUriTemplate',
  list_apps = 'mcp-sidecar.listApps',
  open_app = 'mcp-sidecar.openApp',
  close_app = 'mcp-sidecar.closeApp',
  list_tasks = 'mcp-sidecar.listTasks',
  cancel_task = 'mcp-sidecar.cancelTask',
  list_skills = 'mcp-sidecar.listSkills',
  read_skill = 'mcp-sidecar.readSkill',
}

local progress_count = 0

M.CANCELLED = -32800

--- Neovim drops responses with the error code RequestCancelled (-32800) without calling the
--- handler: it takes them for acknowledgements of its own $/cancelRequest. The sidecar also
--- answers -32800 when the person dismissed a question it asked during the command, so the
--- request's completion is watched (LspRequest) and reported as cancelled when no answer follows.
local function on_swallowed(client, request_id, done)
  vim.api.nvim_create_autocmd('LspRequest', {
    callback = function(args)
      local data = args.data or {}
      local request = data.request or {}
      if data.client_id ~= client.id or data.request_id ~= request_id then
        return false
      end
      if request.type == 'complete' or request.type == 'cancel' then
        vim.schedule(function()
          done(nil, { code = M.CANCELLED, message = 'cancelled', data = { kind = 'cancelled' } })
        end)
        return true
      end
      return false
    end,
  })
end

--- Runs a `workspace/executeCommand` and returns (result, err). Inside async.run() only.
---@param opts? { progress?: boolean, on_request?: fun(request_id: integer) }
function M.run(client, command, argument, opts)
  opts = opts or {}
  return async.wait(function(done)
    local params = { command = command, arguments = { argument or vim.empty_dict() } }
    if opts.progress then
      progress_count = progress_count + 1
      params.workDoneToken = ('mcp-sidecar-%d'):format(progress_count)
    end
    local ok, request_id = client:request('workspace/executeCommand', params, function(err, result)
      done(result, err)
    end, vim.api.nvim_get_current_buf())
    if not ok then
      done(nil, { message = 'the sidecar has stopped' })
      return
    end
    on_swallowed(client, request_id, done)
    if opts.on_request then
      opts.on_request(request_id)
    end
  end)
end

--- True for the error of a command the person (or the editor) cancelled.
function M.is_cancelled(err)
  return type(err) == 'table' and (err.code == M.CANCELLED or vim.tbl_get(err, 'data', 'kind') == 'cancelled')
end

--- An LSP error as one sentence, with its `data.kind` when there is one.
function M.error_message(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local message = tostring(err.message or 'error')
  local kind = type(err.data) == 'table' and err.data.kind or nil
  if kind and kind ~= vim.NIL then
    message = message .. ' [' .. tostring(kind) .. ']'
  end
  return message
end

--- Whether the sidecar advertises a command (for commands that land later, like trustServer).
function M.has_command(client, command)
  local commands = vim.tbl_get(client.server_capabilities or {}, 'executeCommandProvider', 'commands')
  return type(commands) == 'table' and vim.tbl_contains(commands, command)
end

--- Runs a command synchronously (for command-line completion and <Tab> in an input): the result
--- when it is a table, nil on an error or after `timeout` ms.
function M.sync(client, command, argument, timeout)
  local response = client:request_sync('workspace/executeCommand', {
    command = command,
    arguments = { argument or vim.empty_dict() },
  }, timeout or 1000)
  if response and not response.err and type(response.result) == 'table' then
    return response.result
  end
end

return M
