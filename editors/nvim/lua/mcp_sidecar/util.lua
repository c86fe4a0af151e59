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

--- How a row's `name` is shown: the cleaned `label` the sidecar sends when the name cannot be
--- shown as it is (control or bidirectional characters); the name itself stays exact for sending.
function M.shown_name(row)
  if type(row.label) == 'string' then
    return row.label
  end
  return tostring(row.name)
end

--- Whether `uri` may be opened outside Neovim: web addresses (http, https) only. The sidecar
--- checks first; this is the second line.
function M.may_open_external(uri)
  if type(uri) ~= 'string' then
    return false
  end
  local scheme = uri:match('^(%a[%w+.-]*):')
  scheme = scheme and scheme:lower()
  return scheme == 'https' or scheme == 'http'
end

--- A file name for saving a resource: the URI's last segment (decoded), without its scheme,
--- query or fragment, anything but letters, digits, `_`, `.`, `-` made `_`, no leading dots
--- (as the VS Code extension's `saveName`); `resource` when nothing is left.
function M.save_name(uri)
  if type(uri) ~= 'string' then
    return 'resource'
  end
  local rest = uri:gsub('[?#].*$', ''):gsub('^%a[%w+.-]*:', '')
  local last = ''
  for segment in rest:gmatch('[^/]+') do
    last = segment
  end
  local ok, decoded = pcall(vim.uri_decode, last)
  local name = (ok and decoded or last):gsub('[^%w_.-]+', '_'):gsub('^%.+', '')
  if #name > 100 then
    name = name:sub(1, 100)
  end
  return name ~= '' and name or 'resource'
end

return M
