-- `mcp-sidecar/quickPick` with one choice → vim.ui.select; Back and Skip are extra items.
-- `canPickMany` goes to the native multi-select buffer.
-- Result: { selected = { index } } (0-based) | { back = true } | { skip = true } | nil.
local text = require('mcp_sidecar.ui.text')
local track = require('mcp_sidecar.ui.track')

local M = {}

--- The entries shown: the items (with their 0-based index), then Back / Skip when allowed.
function M.entries(params)
  local entries = {}
  for i, item in ipairs(params.items or {}) do
    local line = text.item(item)
    if item.picked then
      line = line .. ' (current)'
    end
    table.insert(entries, { line = line, answer = { selected = { i - 1 } } })
  end
  if params.canGoBack then
    table.insert(entries, { line = '← Back', answer = { back = true } })
  end
  if params.canSkip then
    table.insert(entries, { line = 'Skip', answer = { skip = true } })
  end
  return entries
end

---@param params table quickPick params
---@param prompt mcp_sidecar.Prompt
function M.open(params, prompt)
  if params.canPickMany then
    require('mcp_sidecar.ui.multiselect').open(params, prompt)
    return
  end
  local entries = M.entries(params)
  track.call(prompt, function()
    vim.ui.select(entries, {
      prompt = text.select_prompt(params),
      kind = 'mcp_sidecar',
      format_item = function(entry)
        return entry.line
      end,
    }, function(entry)
      prompt:settle(entry and entry.answer or nil)
    end)
  end)
end

return M
