-- The :Mcp command: the table of subcommands, dispatch and completion. Each group of subcommands
-- is a module of its own beside this one.
local apps = require('mcp_sidecar.commands.apps')
local config = require('mcp_sidecar.config')
local gateway = require('mcp_sidecar.commands.gateway')
local logs = require('mcp_sidecar.commands.logs')
local resources = require('mcp_sidecar.commands.resources')
local servers = require('mcp_sidecar.commands.servers')
local signin = require('mcp_sidecar.commands.signin')
local skills = require('mcp_sidecar.commands.skills')
local state = require('mcp_sidecar.state')
local tasks = require('mcp_sidecar.commands.tasks')
local tools = require('mcp_sidecar.commands.tools')
local trust = require('mcp_sidecar.commands.trust')
local util = require('mcp_sidecar.util')

local M = {}

--- The rest of the command line from the `n`th word on, as one text (nil when there is none).
local function rest(args, n)
  return #args >= n and table.concat(vim.list_slice(args, n), ' ') or nil
end

M.subcommands = {
  servers = function()
    servers.show()
  end,
  tools = function(args)
    tools.show(args[1])
  end,
  call = function(args)
    tools.call(args[1], args[2], rest(args, 3))
  end,
  restart = function(args)
    servers.restart(args[1])
  end,
  trust = function(args)
    trust.trust(args[1])
  end,
  untrust = function(args)
    trust.untrust(args[1])
  end,
  signin = function(args)
    signin.sign_in(args[1])
  end,
  signout = function(args)
    signin.sign_out(args[1])
  end,
  ['sampling-log'] = function()
    logs.sampling_log()
  end,
  log = function()
    logs.log()
  end,
  resources = function(args)
    resources.resources(args[1])
  end,
  read = function(args)
    resources.read(args[1], rest(args, 2))
  end,
  prompt = function(args, opts)
    resources.prompt(args[1], args[2], opts.bang)
  end,
  gateway = function()
    gateway.show()
  end,
  tasks = function(args)
    tasks.show(args[1])
  end,
  skills = function(args)
    skills.show(args[1])
  end,
  app = function(args)
    if args[1] == nil then
      apps.open()
    elseif args[1] == 'close' then
      apps.close()
    else
      util.notify(
        ('unknown argument "%s": :Mcp app opens a view again, :Mcp app close closes one'):format(args[1]),
        vim.log.levels.ERROR
      )
    end
  end,
}

function M.run(opts)
  local args = vim.deepcopy(opts.fargs or {})
  local sub = table.remove(args, 1) or 'servers'
  local fn = M.subcommands[sub]
  if not fn then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    util.notify(
      ('unknown subcommand "%s"; use one of: %s'):format(sub, table.concat(names, ', ')),
      vim.log.levels.ERROR
    )
    return
  end
  fn(args, { bang = opts.bang == true })
end

-- Completion ---------------------------------------------------------------------------------------

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

local takes_server = {
  tools = true,
  call = true,
  restart = true,
  trust = true,
  untrust = true,
  resources = true,
  read = true,
  prompt = true,
  skills = true,
}

--- The candidates of the word at `index` (1: the subcommand) of `words` (the first is :Mcp).
local function candidates(words, index)
  if index <= 1 then
    return vim.tbl_keys(M.subcommands)
  end
  local sub = words[2]
  if index == 2 and takes_server[sub] then
    return server_names()
  elseif index == 2 and (sub == 'signin' or sub == 'signout') then
    return signin.server_names()
  elseif index == 2 and sub == 'app' then
    return { 'close' }
  elseif index == 2 and sub == 'tasks' then
    return { 'cancel' }
  elseif index == 3 and sub == 'call' then
    return tools.names(words[3])
  elseif index == 3 and sub == 'read' then
    return resources.resource_uris(words[3])
  elseif index == 3 and sub == 'prompt' then
    return resources.prompt_names(words[3])
  end
  return {}
end

function M.complete(arglead, cmdline, cursorpos)
  local words = vim.split(cmdline:sub(1, cursorpos), '%s+')
  local list = candidates(words, #words - 1)
  table.sort(list)
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, list)
end

return M
