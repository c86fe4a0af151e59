-- The open views of MCP Apps (docs/apps.md) per sidecar client, as `mcp-sidecar.listApps` last
-- told: `mcp-sidecar/closeApp` names only the view, so this is how its message names the tool.
-- The views themselves run in the browser, on the sidecar's loopback page.
local exec = require('mcp_sidecar.exec')
local format = require('mcp_sidecar.format')
local util = require('mcp_sidecar.util')

local M = {}

---@type table<integer, table<string, table>>
local by_client = {}

--- Keeps the listApps `rows` of a client (every open view); returns the well-formed ones.
function M.set(client_id, rows)
  local kept, by_view = {}, {}
  for _, row in ipairs(type(rows) == 'table' and rows or {}) do
    if type(row) == 'table' and type(row.view) == 'string' then
      table.insert(kept, row)
      by_view[row.view] = row
    end
  end
  by_client[client_id] = by_view
  return kept
end

function M.forget(client_id)
  by_client[client_id] = nil
end

--- The row of a view, when known.
function M.row(client_id, view)
  return (by_client[client_id] or {})[view]
end

--- Forgets one view; returns its row when it was known.
function M.drop(client_id, view)
  local known = by_client[client_id] or {}
  local row = known[view]
  known[view] = nil
  return row
end

--- Whether `uri` is a view's loopback page (`http://127.0.0.1:<port>/view/<token>`).
function M.is_view_page(uri)
  return type(uri) == 'string' and uri:match('^http://127%.0%.0%.1:%d+/view/%x+$') ~= nil
end

--- Learns the views of a client in the background (after one opened in the browser).
function M.refresh(client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or not exec.has_command(client, exec.CMD.list_apps) then
    return
  end
  client:request('workspace/executeCommand', {
    command = exec.CMD.list_apps,
    arguments = { vim.empty_dict() },
  }, function(err, rows)
    if not err then
      M.set(client_id, rows)
    end
  end)
end

-- Bidirectional controls (U+061C, U+200E-F, U+202A-E, U+2066-9): text an app wrote is shown
-- without them, and without control characters, on one line.
local BIDI = { '\216\156', '\226\128[\142\143]', '\226\128[\170-\174]', '\226\129[\166-\169]' }

--- Text from an app (or a server) for one line of a pick: cleaned and at most `width` characters.
function M.one_line(text, width)
  text = tostring(text)
  for _, pattern in ipairs(BIDI) do
    text = text:gsub(pattern, '')
  end
  text = vim.trim(text:gsub('%c', ' '):gsub('%s+', ' '))
  width = width or 60
  if vim.fn.strchars(text) > width then
    text = vim.fn.strcharpart(text, 0, width - 1) .. '…'
  end
  return text
end

--- What a view's `message` (the text of its last `ui/message`) or `modelContext` (`{content?,
--- structuredContent?}`) says, on one line; nil when there is nothing.
function M.summary(value)
  if type(value) == 'string' then
    value = M.one_line(value)
    return value ~= '' and value or nil
  elseif type(value) ~= 'table' then
    return nil
  end
  local content = value.content
  if type(content) == 'table' and not vim.islist(content) then
    content = { content }
  end
  local texts = {}
  for _, block in ipairs(type(content) == 'table' and content or {}) do
    if type(block) == 'table' and block.type == 'text' and type(block.text) == 'string' then
      table.insert(texts, block.text)
    end
  end
  if #texts == 0 and type(value.structuredContent) == 'table' then
    table.insert(texts, format.inline_json(value.structuredContent))
  end
  local text = M.one_line(table.concat(texts, ' '))
  return text ~= '' and text or nil
end

--- How a view is named: its title (the sidecar cleaned it), else server › tool.
function M.name(row)
  if type(row.title) == 'string' and row.title ~= '' then
    return M.one_line(row.title, 80)
  end
  return M.one_line(('%s › %s'):format(tostring(row.server), tostring(row.tool)), 80)
end

--- The line of a view in :Mcp app's pick.
function M.line(row)
  local parts = { M.name(row), row.initialized == true and 'running' or 'the app has not started' }
  local message = M.summary(row.message)
  if message then
    table.insert(parts, 'message: ' .. message)
  end
  local context = M.summary(row.modelContext)
  if context then
    table.insert(parts, 'model context: ' .. context)
  end
  return table.concat(parts, ' · ')
end

--- `mcp-sidecar/closeApp`: the sidecar closed a view (its server stopped, its app never started,
--- too many were open); the browser tab learns it from the page itself.
function M.closed(client_id, params)
  if type(params) ~= 'table' or type(params.view) ~= 'string' then
    return
  end
  local row = M.drop(client_id, params.view)
  local reason = type(params.reason) == 'string' and M.one_line(params.reason, 120) or 'closed'
  local what = row and ('view of ' .. M.name(row)) or ('view ' .. M.one_line(params.view, 40))
  util.notify(('%s closed: %s'):format(what, reason))
end

return M
