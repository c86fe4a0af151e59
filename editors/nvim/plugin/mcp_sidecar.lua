if vim.g.loaded_mcp_sidecar then
  return
end
vim.g.loaded_mcp_sidecar = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify('mcp-sidecar needs Neovim 0.11 or newer', vim.log.levels.ERROR)
  return
end

vim.api.nvim_create_user_command('Mcp', function(opts)
  require('mcp_sidecar.commands').run(opts)
end, {
  nargs = '*',
  bang = true,
  desc = 'MCP: servers, tools, call, resources, read, prompt, gateway, restart, trust, untrust, log',
  complete = function(arglead, cmdline, cursorpos)
    return require('mcp_sidecar.commands').complete(arglead, cmdline, cursorpos)
  end,
})

require('mcp_sidecar').autostart()
