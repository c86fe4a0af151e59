-- :Mcp signin [server] and :Mcp signout [server] (OAuth, http servers only).
local async = require('mcp_sidecar.async')
local client_mod = require('mcp_sidecar.client')
local common = require('mcp_sidecar.commands.common')
local exec = require('mcp_sidecar.exec')
local format = require('mcp_sidecar.format')
local state = require('mcp_sidecar.state')
local util = require('mcp_sidecar.util')

local M = {}

local notify, is_null = util.notify, util.is_null

--- The server to sign in to (or out of): `server`, else a pick among the http servers (those
--- that need a sign-in first for signin, those signed in first for signout).
local function pick_http_server(client, server, signing_in)
  if server then
    return server
  end
  local rows = common.list_servers(client)
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
  common.with_client(function(client)
    if not exec.has_command(client, command) then
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
    local result, err = exec.run(client, command, { server = server })
    if exec.is_cancelled(err) or (not err and is_null(result)) then
      notify(what:format(server) .. ' cancelled')
    elseif err then
      notify(what:format(server) .. ' failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
    else
      done(result, server)
    end
  end)
end

function M.sign_in(server)
  sign(server, true, exec.CMD.sign_in, function(row, name)
    local auth = format.auth(row.auth)
    notify(
      ('%s: %s%s'):format(name, tostring(row.state), auth and (', ' .. auth) or ''),
      row.state == 'running' and vim.log.levels.INFO or vim.log.levels.WARN
    )
  end)
end

function M.sign_out(server)
  sign(server, false, exec.CMD.sign_out, function(result, name)
    notify(
      ('signed out of %s (%s)'):format(
        tostring(result.server or name),
        result.revoked and 'the grant was revoked at the authorization server'
          or 'the grant is forgotten; the authorization server offers no revocation'
      )
    )
  end)
end

--- The http servers (only they sign in) for completion, from listServers rows: asked again when
--- a row only came from a serverStatus notification (which has no transport).
function M.server_names()
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
    local listed = exec.sync(client, exec.CMD.list_servers)
    if listed then
      state.replace(client.id, listed)
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

return M
