-- Small helpers the :Mcp flows share.
local M = {}

--- A message for the person, prefixed with the plugin's name.
function M.notify(message, level)
  vim.notify('mcp-sidecar: ' .. message, level or vim.log.levels.INFO)
end

--- True for a missing value and for JSON null.
function M.is_null(value)
  return value == nil or value == vim.NIL
end

return M
