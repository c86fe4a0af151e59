-- The :Mcp command: subcommands and their completion.
local async = require('mcp_sidecar.async')
local binary = require('mcp_sidecar.binary')
local browse = require('mcp_sidecar.browse')
local client_mod = require('mcp_sidecar.client')
local config = require('mcp_sidecar.config')
local format = require('mcp_sidecar.format')
local gateway = require('mcp_sidecar.gateway')
local resources = require('mcp_sidecar.resources')
local scratch = require('mcp_sidecar.ui.scratch')
local state = require('mcp_sidecar.state')
local util = require('mcp_sidecar.util')

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
}

local notify, is_null = util.notify, util.is_null

--- Runs `fn(client)` in a coroutine with the workspace's sidecar (started when needed).
local function with_client(fn)
  async.run(function()
    local client, err = client_mod.ensure()
    if not client then
      notify(err, vim.log.levels.ERROR)
      return
    end
    fn(client)
  end)
end

local function list_servers(client)
  local rows, err = client_mod.exec(client, M.CMD.list_servers)
  if err then
    notify('listing servers failed: ' .. client_mod.error_message(err), vim.log.levels.ERROR)
    return nil
  end
  rows = type(rows) == 'table' and rows or {}
  state.replace(client.id, rows)
  return rows
end

local function list_tools(client, server)
  local rows, err = client_mod.exec(client, M.CMD.list_tools, server and { server = server } or nil)
  if err then
    notify('listing tools failed: ' .. client_mod.error_message(err), vim.log.levels.ERROR)
    return nil
  end
  rows = type(rows) == 'table' and rows or {}
  state.set_tools(client.id, rows, server)
  return rows
end

-- :Mcp servers ---------------------------------------------------------------------------------

local function server_lines(client, rows)
  local lines = {
    ('MCP servers of %s'):format(client.root_dir or vim.fn.getcwd()),
    '<CR> tools · r restart · s sign in · S sign out · R refresh · q close',
    '',
  }
  local at = {}
  if #rows == 0 then
    vim.list_extend(lines, {
      'No MCP servers are configured.',
      'Add some with require("mcp_sidecar").setup({ servers = { ... } }) or in',
      '~/.config/mcp-sidecar/mcp.json (see :help mcp-sidecar-servers).',
    })
  end
  for _, row in ipairs(rows) do
    local details = {}
    if not is_null(row.protocolVersion) then
      table.insert(details, 'protocol ' .. row.protocolVersion)
    end
    if not is_null(row.transport) then
      table.insert(details, row.transport)
    end
    if type(row.toolCount) == 'number' then
      table.insert(details, ('%d tool%s'):format(row.toolCount, row.toolCount == 1 and '' or 's'))
    end
    if type(row.restarts) == 'number' and row.restarts > 0 then
      table.insert(details, ('%d restart%s'):format(row.restarts, row.restarts == 1 and '' or 's'))
    end
    if not is_null(row.source) then
      table.insert(details, 'from ' .. row.source)
    end
    table.insert(
      lines,
      ('%-16s %-10s %s'):format(util.shown_name(row), row.state, table.concat(details, ' · '))
    )
    at[#lines] = row.name
    local info = row.serverInfo
    if type(info) == 'table' and info.name then
      table.insert(lines, ('    %s %s'):format(info.name, tostring(info.version or '')))
      at[#lines] = row.name
    end
    if type(row.message) == 'string' and row.message ~= '' then
      for _, line in ipairs(vim.split(row.message, '\n', { plain = true })) do
        table.insert(lines, '    ' .. line)
        at[#lines] = row.name
      end
    end
    local auth = format.auth(row.auth)
    if auth then
      table.insert(lines, '    ' .. auth)
      at[#lines] = row.name
    end
    if row.state == 'needsAuth' then
      table.insert(lines, ('    :Mcp signin %s (or s here) to sign in'):format(row.name))
      at[#lines] = row.name
    end
  end
  return lines, at
end

function M.servers()
  with_client(function(client)
    local rows = list_servers(client)
    if not rows then
      return
    end
    local lines, at = server_lines(client, rows)
    local function under_cursor()
      return at[vim.api.nvim_win_get_cursor(0)[1]]
    end
    scratch.show('mcp://servers', lines, {
      filetype = 'mcp_sidecar_servers',
      keys = {
        ['<CR>'] = {
          desc = 'Tools of the server under the cursor',
          fn = function()
            M.tools(under_cursor())
          end,
        },
        r = {
          desc = 'Restart the server under the cursor',
          fn = function()
            local name = under_cursor()
            if name then
              M.restart(name)
            end
          end,
        },
        s = {
          desc = 'Sign in to the server under the cursor',
          fn = function()
            local name = under_cursor()
            if name then
              M.sign_in(name)
            end
          end,
        },
        S = {
          desc = 'Sign out of the server under the cursor',
          fn = function()
            local name = under_cursor()
            if name then
              M.sign_out(name)
            end
          end,
        },
        R = { desc = 'Refresh', fn = M.servers },
      },
    })
  end)
end

-- :Mcp tools [server] --------------------------------------------------------------------------

function M.tools(server)
  with_client(function(client)
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
      table.insert(lines, ('- %s%s'):format(util.shown_name(row), title))
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
  local rows = list_servers(client)
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

local function show_result(server, tool, arguments, result)
  result_count = result_count + 1
  local name = ('mcp://result/%s/%s/%d'):format(server, tool, result_count)
  return scratch.show(name, format.tool_result(server, tool, arguments, result), {
    filetype = 'markdown',
    reuse = '^mcp://result/',
  })
end

function M.call(server, tool_name, json_text)
  with_client(function(client)
    server = server or pick_server(client)
    if not server then
      return
    end
    local tools = list_tools(client, server)
    if not tools then
      return
    end
    local tool
    if tool_name then
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
        return
      end
    else
      if #tools == 0 then
        notify(server .. ' has no tools', vim.log.levels.WARN)
        return
      end
      tool = async.select(tools, {
        prompt = ('Call which tool of %s?'):format(server),
        kind = 'mcp_sidecar',
        format_item = function(row)
          local desc = (type(row.description) == 'string' and row.description ~= '')
              and (' — ' .. row.description)
            or ''
          return util.shown_name(row) .. desc
        end,
      })
      if not tool then
        return
      end
    end

    local arguments, err
    if json_text and vim.trim(json_text) ~= '' then
      arguments, err = M.parse_arguments(json_text)
      if not arguments then
        notify(err, vim.log.levels.ERROR)
        return
      end
    elseif config.get().tool_arguments == 'prompt' then
      local props = type(tool.inputSchema) == 'table' and tool.inputSchema.properties or nil
      if type(props) == 'table' and next(props) ~= nil then
        arguments = ask_arguments(server, tool)
        if arguments == nil then
          notify('call cancelled')
          return
        end
      else
        arguments = vim.empty_dict()
      end
    end

    vim.api.nvim_echo({ { ('mcp-sidecar: calling %s › %s…'):format(server, tool.name) } }, false, {})
    local argument = { server = server, tool = tool.name, arguments = arguments }
    local result, call_err = client_mod.exec(client, M.CMD.call_tool, argument, { progress = true })
    if client_mod.is_cancelled(call_err) then
      notify(('%s › %s: call cancelled'):format(server, tool.name))
      return
    elseif call_err then
      notify(
        ('%s › %s failed: %s'):format(server, tool.name, client_mod.error_message(call_err)),
        vim.log.levels.ERROR
      )
      return
    end
    show_result(server, tool.name, arguments, not is_null(result) and result or nil)
  end)
end

-- :Mcp restart [server] ------------------------------------------------------------------------

function M.restart(server)
  with_client(function(client)
    local result, err = client_mod.exec(client, M.CMD.restart_server, server and { server = server } or nil)
    if client_mod.is_cancelled(err) or (not err and is_null(result)) then
      notify('restart cancelled')
    elseif err then
      notify('restart failed: ' .. client_mod.error_message(err), vim.log.levels.ERROR)
    else
      notify(('restarting %s'):format(tostring(result.server)))
    end
  end)
end

-- :Mcp trust [server], :Mcp untrust [server] ------------------------------------------------

--- Servers from the person's own config (scope "user" in the settings) never need trust.
local function user_scoped(row)
  local scopes = config.sidecar_settings().serverScopes or {}
  return row.source == 'editor settings' and scopes[row.name] == 'user'
end

--- `command` (trustServer when `trusted`, else untrustServer) for `server`; without it, for one
--- of the servers that could take the decision: those waiting for trust, or the trusted ones the
--- workspace defines.
local function set_trust(server, trusted, command)
  local verb = trusted and 'trust' or 'untrust'
  with_client(function(client)
    if not client_mod.has_command(client, command) then
      notify(('this sidecar has no %s command (it is older than workspace configuration)'):format(verb))
      return
    end
    local function apply(name)
      local result, err = client_mod.exec(client, command, { server = name })
      if err then
        notify(verb .. ' failed: ' .. client_mod.error_message(err), vim.log.levels.ERROR)
      elseif not is_null(result) then
        name = tostring(type(result) == 'table' and result.server or name)
        notify(trusted and ('trusted ' .. name) or (name .. ' is no longer trusted (stopped)'))
      end
    end
    if server then
      return apply(server)
    end
    local candidates = {}
    for _, row in ipairs(state.servers(client.id)) do
      if (row.state == 'needsTrust') == trusted and not user_scoped(row) then
        table.insert(candidates, row.name)
      end
    end
    if #candidates == 0 then
      notify(
        trusted and 'no server is waiting for trust (servers from workspace files ask when they appear)'
          or 'no trusted server is defined by the workspace'
      )
    elseif trusted and #candidates == 1 then
      apply(candidates[1])
    else
      -- Revoking stops the server: always asked, even for one.
      vim.schedule(function()
        local prompt = trusted and 'Trust which MCP server?' or 'Stop trusting which MCP server?'
        vim.ui.select(candidates, { prompt = prompt }, function(choice)
          if choice then
            vim.schedule(function()
              with_client(function()
                apply(choice)
              end)
            end)
          end
        end)
      end)
    end
  end)
end

function M.trust(server)
  set_trust(server, true, M.CMD.trust_server)
end

function M.untrust(server)
  set_trust(server, false, M.CMD.untrust_server)
end

-- :Mcp signin [server], :Mcp signout [server] ------------------------------------------------

--- The server to sign in to (or out of): `server`, else a pick among the http servers (those
--- that need a sign-in first for signin, those signed in first for signout).
local function pick_http_server(client, server, signing_in)
  if server then
    return server
  end
  local rows = list_servers(client)
  if not rows then
    return nil
  end
  local http = vim.tbl_filter(function(row)
    return row.transport == 'http'
  end, rows)
  if #http == 0 then
    notify('no http server is configured (only they sign in)', vim.log.levels.WARN)
    return nil
  end
  local function first(row)
    if signing_in then
      return row.state == 'needsAuth'
    end
    return vim.tbl_get(row, 'auth', 'signedIn') == true
  end
  table.sort(http, function(a, b)
    if first(a) ~= first(b) then
      return first(a)
    end
    return a.name < b.name
  end)
  local row = async.select(http, {
    prompt = signing_in and 'Sign in to which MCP server?' or 'Sign out of which MCP server?',
    kind = 'mcp_sidecar',
    format_item = function(r)
      local auth = format.auth(r.auth)
      return ('%s (%s)%s'):format(r.name, r.state, auth and (' · ' .. auth) or '')
    end,
  })
  return row and row.name
end

--- :Mcp signin / signout: `command` on `server` (or a picked one); `done(result, server)`
--- reports what it did. The sign-in waits for the browser (up to 5 minutes); the sidecar asks
--- how to open the sign-in page meanwhile.
local function sign(server, signing_in, command, done)
  local what = signing_in and 'sign-in to %s' or 'sign-out of %s'
  with_client(function(client)
    if not client_mod.has_command(client, command) then
      notify(
        ('this sidecar has no %s command (it is older than OAuth sign-in)'):format(
          signing_in and 'signin' or 'signout'
        )
      )
      return
    end
    server = pick_http_server(client, server, signing_in)
    if not server then
      return
    end
    local result, err = client_mod.exec(client, command, { server = server })
    if client_mod.is_cancelled(err) or (not err and is_null(result)) then
      notify(what:format(server) .. ' cancelled')
    elseif err then
      notify(what:format(server) .. ' failed: ' .. client_mod.error_message(err), vim.log.levels.ERROR)
    else
      done(result, server)
    end
  end)
end

function M.sign_in(server)
  sign(server, true, M.CMD.sign_in, function(row, name)
    local auth = format.auth(row.auth)
    notify(
      ('%s: %s%s'):format(name, tostring(row.state), auth and (', ' .. auth) or ''),
      row.state == 'running' and vim.log.levels.INFO or vim.log.levels.WARN
    )
  end)
end

function M.sign_out(server)
  sign(server, false, M.CMD.sign_out, function(result, name)
    notify(
      ('signed out of %s (%s)'):format(
        tostring(result.server or name),
        result.revoked and 'the grant was revoked at the authorization server'
          or 'the grant is forgotten; the authorization server offers no revocation'
      )
    )
  end)
end

-- Resources, prompts and completions (issue 15) ---------------------------------------------------

--- Runs a command synchronously (for command-line completion and <Tab> in an input); nil on
--- an error or after `timeout` ms.
local function exec_sync(client, command, argument, timeout)
  local response = client:request_sync('workspace/executeCommand', {
    command = command,
    arguments = { argument or vim.empty_dict() },
  }, timeout or 1000)
  if response and not response.err and type(response.result) == 'table' then
    return response.result
  end
end

--- The resource, prompt and completion commands of one sidecar, for resources.lua and the flows
--- below. Each returns (result, err) and runs inside async.run(); `complete` also outside (then
--- synchronously, for <Tab>), and gives the suggested values.
local function server_api(client)
  local function run(command, argument)
    return client_mod.exec(client, command, argument)
  end
  local function on(server)
    return server and { server = server } or nil
  end
  local no_completions = {}
  return {
    client_id = client.id,
    error_message = client_mod.error_message,
    list_resources = function(server)
      return run(M.CMD.list_resources, on(server))
    end,
    list_templates = function(server)
      return run(M.CMD.list_resource_templates, on(server))
    end,
    read = function(server, uri)
      return run(M.CMD.read_resource, { server = server, uri = uri })
    end,
    subscribe = function(server, uri)
      return run(M.CMD.subscribe_resource, { server = server, uri = uri })
    end,
    unsubscribe = function(server, uri)
      return run(M.CMD.unsubscribe_resource, { server = server, uri = uri })
    end,
    list_prompts = function(server)
      return run(M.CMD.list_prompts, on(server))
    end,
    get_prompt = function(server, name, arguments)
      return run(M.CMD.get_prompt, { server = server, name = name, arguments = arguments })
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
        result, err = run(M.CMD.complete, argument)
      else
        result = exec_sync(client, M.CMD.complete, argument)
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
  with_client(function(client)
    browse.resources(server_api(client), server)
  end)
end

--- :Mcp read <server> <uri>
function M.read(server, uri)
  if not server or not uri or uri == '' then
    notify('usage: :Mcp read <server> <uri> (or :Mcp resources to pick one)', vim.log.levels.ERROR)
    return
  end
  with_client(function(client)
    resources.open(server_api(client), server, uri)
  end)
end

--- :Mcp[!] prompt [server] [name]: the arguments asked, then the messages in a Markdown buffer,
--- or (with !) their text inserted at the cursor of the window it was run from.
function M.prompt(server, name, insert)
  local origin = vim.api.nvim_get_current_win()
  with_client(function(client)
    browse.prompt(server_api(client), server, name, insert and origin or nil)
  end)
end

-- :Mcp gateway (issue 14) --------------------------------------------------------------------------

--- `mcp-sidecar.gatewayInfo` of `client`, inside async.run(): (info, err).
function M.gateway_info(client)
  return client_mod.exec(client, M.CMD.gateway_info)
end

--- :Mcp gateway: ready configurations for agents; y yanks the one under the cursor.
function M.gateway()
  with_client(function(client)
    local info, err = M.gateway_info(client)
    if err then
      notify('the gateway is not available: ' .. client_mod.error_message(err), vim.log.levels.WARN)
      return
    end
    if type(info) == 'table' then
      gateway.set(client.id, info.env)
    end
    gateway.show(binary.resolve() or 'mcp-sidecar', info)
  end)
end

-- :Mcp sampling-log ----------------------------------------------------------------------------

function M.sampling_log()
  with_client(function(client)
    -- The sidecar asks Neovim to show the file (window/showDocument).
    local result, err = client_mod.exec(client, M.CMD.open_sampling_log)
    if err then
      notify('opening the sampling log failed: ' .. client_mod.error_message(err), vim.log.levels.ERROR)
    elseif type(result) == 'table' and result.opened == false then
      notify('could not open the sampling log ' .. tostring(result.path), vim.log.levels.WARN)
    end
  end)
end

-- :Mcp log -------------------------------------------------------------------------------------

function M.log()
  -- With log_file = false the sidecar's stderr is in Neovim's own LSP log.
  local path = config.log_file() or vim.lsp.get_log_path()
  if not vim.uv.fs_stat(path) then
    notify('no log yet at ' .. path .. ' (the sidecar has not started)', vim.log.levels.WARN)
    return
  end
  vim.cmd(config.get().ui.split .. ' ' .. vim.fn.fnameescape(path))
  vim.bo.readonly = true
  vim.bo.autoread = true
  vim.cmd('normal! G')
end

-- Dispatch and completion -----------------------------------------------------------------------

M.subcommands = {
  servers = function()
    M.servers()
  end,
  tools = function(args)
    M.tools(args[1])
  end,
  call = function(args)
    local json = #args > 2 and table.concat(vim.list_slice(args, 3), ' ') or nil
    M.call(args[1], args[2], json)
  end,
  restart = function(args)
    M.restart(args[1])
  end,
  trust = function(args)
    M.trust(args[1])
  end,
  untrust = function(args)
    M.untrust(args[1])
  end,
  signin = function(args)
    M.sign_in(args[1])
  end,
  signout = function(args)
    M.sign_out(args[1])
  end,
  ['sampling-log'] = function()
    M.sampling_log()
  end,
  log = function()
    M.log()
  end,
  resources = function(args)
    M.resources(args[1])
  end,
  read = function(args)
    M.read(args[1], #args > 1 and table.concat(vim.list_slice(args, 2), ' ') or nil)
  end,
  prompt = function(args, opts)
    M.prompt(args[1], args[2], opts.bang)
  end,
  gateway = function()
    M.gateway()
  end,
}

function M.run(opts)
  local args = vim.deepcopy(opts.fargs or {})
  local sub = table.remove(args, 1) or 'servers'
  local fn = M.subcommands[sub]
  if not fn then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    notify(
      ('unknown subcommand "%s"; use one of: %s'):format(sub, table.concat(names, ', ')),
      vim.log.levels.ERROR
    )
    return
  end
  fn(args, { bang = opts.bang == true })
end

local function server_names()
  local names = {}
  for _, row in ipairs(state.servers()) do
    names[row.name] = true
  end
  for name in pairs(config.get().servers or {}) do
    names[name] = true
  end
  local list = vim.tbl_keys(names)
  table.sort(list)
  return list
end

--- The http servers (only they sign in), from listServers rows: asked again when a row only
--- came from a serverStatus notification (which has no transport).
local function http_server_names()
  local client = client_mod.get()
  if not client then
    return {}
  end
  local rows = state.servers(client.id)
  local unknown = #rows == 0
  for _, row in ipairs(rows) do
    unknown = unknown or row.transport == nil
  end
  if unknown then
    local response = client:request_sync('workspace/executeCommand', {
      command = M.CMD.list_servers,
      arguments = { vim.empty_dict() },
    }, 1000)
    if response and type(response.result) == 'table' then
      state.replace(client.id, response.result)
      rows = state.servers(client.id)
    end
  end
  local names = {}
  for _, row in ipairs(rows) do
    if row.transport == 'http' then
      table.insert(names, row.name)
    end
  end
  return names
end

local function tool_names(server)
  local client = client_mod.get()
  if not client then
    return {}
  end
  local names = state.tools(client.id, server)
  if names then
    return names
  end
  local response = client:request_sync('workspace/executeCommand', {
    command = M.CMD.list_tools,
    arguments = { { server = server } },
  }, 1000)
  if response and type(response.result) == 'table' then
    state.set_tools(client.id, response.result, server)
  end
  return state.tools(client.id, server) or {}
end

--- Resource URIs or prompt names of `server` for completion: asked again each time (the
--- sidecar keeps the lists), the last answer when it does not answer within a second.
local function listed_names(kind, command, field, server)
  local client = client_mod.get()
  if not client or not server then
    return {}
  end
  local rows = exec_sync(client, command, { server = server })
  if rows then
    state.set_names(client.id, kind, rows, server, field)
  end
  return state.names(client.id, kind, server) or {}
end

function M.complete(arglead, cmdline, cursorpos)
  local words = vim.split(cmdline:sub(1, cursorpos), '%s+')
  local index = #words - 1 -- 1: the subcommand
  local candidates = {}
  if index <= 1 then
    candidates = vim.tbl_keys(M.subcommands)
    table.sort(candidates)
  else
    local sub = words[2]
    local takes_server = {
      tools = true,
      call = true,
      restart = true,
      trust = true,
      untrust = true,
      resources = true,
      read = true,
      prompt = true,
    }
    if index == 2 and takes_server[sub] then
      candidates = server_names()
    elseif index == 2 and (sub == 'signin' or sub == 'signout') then
      candidates = http_server_names()
    elseif index == 3 and sub == 'call' then
      candidates = tool_names(words[3])
    elseif index == 3 and sub == 'read' then
      candidates = listed_names('resources', M.CMD.list_resources, 'uri', words[3])
    elseif index == 3 and sub == 'prompt' then
      candidates = listed_names('prompts', M.CMD.list_prompts, 'name', words[3])
    end
  end
  table.sort(candidates)
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, candidates)
end

return M
