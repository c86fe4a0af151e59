-- The editor contract (docs/lsp-extensions.md), as client-scoped LSP handlers.
local prompts = require('mcp_sidecar.prompts')
local views = require('mcp_sidecar.views')

local M = {}

M['mcp-sidecar/inputBox'] = function(_, params, ctx)
  return prompts.run(ctx, params, function(prompt)
    require('mcp_sidecar.ui.input').open(params, prompt)
  end)
end

M['mcp-sidecar/quickPick'] = function(_, params, ctx)
  return prompts.run(ctx, params, function(prompt)
    require('mcp_sidecar.ui.select').open(params, prompt)
  end)
end

M['mcp-sidecar/editDraft'] = function(_, params, ctx)
  return prompts.run(ctx, params, function(prompt)
    require('mcp_sidecar.ui.draft').open(params, prompt)
  end)
end

M['mcp-sidecar/cancelPrompt'] = function(_, params, ctx)
  if type(params) == 'table' and params.id ~= nil then
    prompts.cancel(ctx.client_id, tostring(params.id))
  end
end

M['mcp-sidecar/clipboard'] = function(_, params)
  if type(params) ~= 'table' or type(params.text) ~= 'string' then
    return
  end
  vim.fn.setreg('"', params.text)
  -- The + register needs a clipboard provider; without one (SSH, headless) the text is still in
  -- the unnamed register.
  local ok = pcall(vim.fn.setreg, '+', params.text)
  local where = ok and 'clipboard' or 'unnamed register'
  vim.notify(('mcp-sidecar: copied to the %s: %s'):format(where, params.text), vim.log.levels.INFO)
end

M['mcp-sidecar/serverStatus'] = function(_, params, ctx)
  require('mcp_sidecar.state').update(ctx.client_id, params)
end

-- Work-done progress as usual (LspProgress, vim.lsp.status()), and the latest report of each
-- running call for the statusline (status()).
M['$/progress'] = function(err, params, ctx)
  require('mcp_sidecar.state').progress(ctx.client_id, params)
  return vim.lsp.handlers['$/progress'](err, params, ctx)
end

M['mcp-sidecar/resourceUpdated'] = function(_, params, ctx)
  require('mcp_sidecar.resources').updated(ctx.client_id, params)
end

M['mcp-sidecar/closeApp'] = function(_, params, ctx)
  views.closed(ctx.client_id, params)
end

-- A task changed: kept for :Mcp tasks and the statusline; announced when it ends and no :Mcp call
-- waits for it.
M['mcp-sidecar/taskStatus'] = function(_, params, ctx)
  require('mcp_sidecar.tasks').status(ctx.client_id, params)
end

-- The log as usual; its gateway lines also set the terminals' environment (gateway.lua).
M['window/logMessage'] = function(err, params, ctx)
  require('mcp_sidecar.gateway').on_log(ctx.client_id, params)
  return vim.lsp.handlers['window/logMessage'](err, params, ctx)
end

-- External URLs (URL elicitation and sign-in after the person's consent, and the loopback page of
-- an MCP App's view) go through vim.ui.open, web addresses only; anything else is Neovim's own
-- showDocument.
M['window/showDocument'] = function(err, params, ctx)
  if type(params) == 'table' and params.external then
    if not require('mcp_sidecar.util').may_open_external(params.uri) then
      vim.notify('mcp-sidecar: refused to open an address that is not http or https', vim.log.levels.WARN)
      return { success = false }
    end
    local ok, cmd, open_err = pcall(prompts.outside, function()
      return vim.ui.open(params.uri)
    end)
    if ok and cmd then
      if views.is_view_page(params.uri) then
        views.refresh(ctx.client_id)
      end
      return { success = true }
    end
    local why = ok and open_err or cmd
    vim.notify(
      ('mcp-sidecar: could not open a browser (%s). Open this address yourself: %s'):format(
        tostring(why),
        tostring(params.uri)
      ),
      vim.log.levels.WARN
    )
    return { success = false }
  end
  return vim.lsp.handlers['window/showDocument'](err, params, ctx)
end

return M
