-- How prompts are worded: one line that names who asks, the step and what is wanted.
local M = {}

local function present(s)
  return type(s) == 'string' and s ~= ''
end

--- "[2/9] travel: Confirm your trip" (the sidecar puts the server's name in the title).
function M.title(params)
  local parts = {}
  if type(params.step) == 'number' then
    if type(params.totalSteps) == 'number' then
      table.insert(parts, ('[step %d/%d]'):format(params.step, params.totalSteps))
    else
      table.insert(parts, ('[step %d]'):format(params.step))
    end
  end
  local title = present(params.title) and params.title or 'MCP'
  if present(params.server) and not title:find(params.server, 1, true) then
    title = params.server .. ': ' .. title
  end
  table.insert(parts, title)
  return table.concat(parts, ' ')
end

--- The vim.ui.input prompt: "⚠ Not an email address · [step 2/9] travel: Trip › Email (name@…): "
function M.input_prompt(params)
  local line = M.title(params)
  if present(params.prompt) then
    line = line .. ' › ' .. params.prompt
  end
  if present(params.placeholder) then
    line = line .. ' (' .. params.placeholder .. ')'
  end
  if params.password then
    line = line .. ' [hidden]'
  end
  if present(params.validationMessage) then
    line = '⚠ ' .. params.validationMessage .. ' · ' .. line
  end
  return line .. ': '
end

--- The vim.ui.select prompt: "[step 6/9] travel: Cabin › Pick one".
function M.select_prompt(params)
  local line = M.title(params)
  if present(params.placeholder) then
    line = line .. ' › ' .. params.placeholder
  end
  return line
end

--- One quickPick item as a line: "Economy — economy · cheapest".
function M.item(item)
  local line = tostring(item.label or '')
  if present(item.description) then
    line = line .. ' — ' .. item.description
  end
  if present(item.detail) then
    line = line .. ' · ' .. item.detail
  end
  return line
end

return M
