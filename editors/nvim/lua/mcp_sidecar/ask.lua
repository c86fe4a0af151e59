-- Asking one value for a prompt argument or a resource template's variable: the server's
-- completion suggestions in vim.ui.select when it has some, else vim.ui.input (whose <Tab> asks
-- the server again for what is typed). Inside async.run() only.
local async = require('mcp_sidecar.async')

local M = {}

M.TYPE = 'Type a value…'
M.EMPTY = 'Leave it empty'

--- The suggestions for what the person has typed in the current input (set while it is open).
---@type fun(typed: string): string[]
local current

--- The 'completion' of the input: `customlist,v:lua.require'mcp_sidecar.ask'.complete_input`.
function M.complete_input(_, cmdline)
  if not current then
    return {}
  end
  local ok, values = pcall(current, cmdline or '')
  return ok and type(values) == 'table' and values or {}
end

local function present(s)
  return type(s) == 'string' and s ~= ''
end

--- Asks for one value. Returns the string ('' for an optional one left empty), or nil when the
--- person dismissed the question.
---@param opts { title: string, name: string, description?: string, required?: boolean,
---  suggest?: fun(value: string): string[]|nil }
function M.value(opts)
  local label = ('%s › %s'):format(opts.title, opts.name)
  local hints = {}
  if opts.required then
    table.insert(hints, 'required')
  end
  if present(opts.description) then
    table.insert(hints, opts.description)
  end
  local hint = #hints > 0 and (' (' .. table.concat(hints, '; ') .. ')') or ''
  local suggestions = opts.suggest and opts.suggest('') or nil
  if type(suggestions) == 'table' and #suggestions > 0 then
    local items = vim.list_extend(vim.deepcopy(suggestions), { M.TYPE })
    if not opts.required then
      table.insert(items, M.EMPTY)
    end
    local choice = async.select(items, { prompt = label .. hint, kind = 'mcp_sidecar' })
    if choice == nil then
      return nil
    elseif choice == M.EMPTY then
      return ''
    elseif choice ~= M.TYPE then
      return choice
    end
  end
  local problem
  while true do
    local prompt = label .. hint .. ': '
    if problem then
      prompt = '⚠ ' .. problem .. ' · ' .. prompt
    end
    current = opts.suggest
    local typed = async.input({
      prompt = prompt,
      kind = 'mcp_sidecar',
      completion = opts.suggest and "customlist,v:lua.require'mcp_sidecar.ask'.complete_input" or nil,
    })
    current = nil
    if typed == nil then
      return nil
    elseif typed ~= '' or not opts.required then
      return typed
    end
    problem = opts.name .. ' is required'
  end
end

return M
