-- :Mcp app and :Mcp app close: the open views of MCP Apps (docs/apps.md) in a pick. A view runs in
-- the browser, on the sidecar's loopback page: opening one again makes the sidecar send that page
-- again (window/showDocument, so vim.ui.open); closing one ends it in the sidecar.
local async = require('mcp_sidecar.async')
local common = require('mcp_sidecar.commands.common')
local exec = require('mcp_sidecar.exec')
local util = require('mcp_sidecar.util')
local views = require('mcp_sidecar.views')

local M = {}

local CMD, notify = exec.CMD, util.notify

--- A pick among the open views, nil (after saying why) when there is none or it was dismissed.
local function pick_view(client, prompt)
  if not exec.has_command(client, CMD.list_apps) then
    notify('this sidecar has no app views (it is older than MCP Apps)', vim.log.levels.WARN)
    return nil
  end
  local rows, err = exec.run(client, CMD.list_apps)
  if err then
    notify('listing the app views failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
    return nil
  end
  rows = views.set(client.id, rows)
  if #rows == 0 then
    notify('no app view is open (calling a tool that has one opens it)')
    return nil
  end
  return async.select(rows, { prompt = prompt, kind = 'mcp_sidecar', format_item = views.line })
end

--- :Mcp app: the chosen view opened again in the browser.
function M.open()
  common.with_client(function(client)
    local row = pick_view(client, 'Open which app view in the browser?')
    if not row then
      return
    end
    local result, err = exec.run(client, CMD.open_app, { view = row.view })
    if err then
      notify(
        ('opening the view of %s failed: %s'):format(views.name(row), exec.error_message(err)),
        vim.log.levels.ERROR
      )
    elseif type(result) == 'table' and result.opened == false then
      notify(('the view of %s was not opened'):format(views.name(row)), vim.log.levels.WARN)
    end
  end)
end

--- :Mcp app close: the chosen view closed (its state is gone; its browser tab says so).
function M.close()
  common.with_client(function(client)
    local row = pick_view(client, 'Close which app view?')
    if not row then
      return
    end
    local _, err = exec.run(client, CMD.close_app, { view = row.view })
    if err then
      notify(
        ('closing the view of %s failed: %s'):format(views.name(row), exec.error_message(err)),
        vim.log.levels.ERROR
      )
      return
    end
    views.drop(client.id, row.view)
    notify('closed the view of ' .. views.name(row))
  end)
end

return M
