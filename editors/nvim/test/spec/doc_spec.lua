-- The help file: tags build without duplicates and every |reference| resolves.
local T = require('helpers')

local doc_dir = vim.fn.tempname() .. '/mcp-sidecar-doc'

T.test(':helptags builds the tags and :help mcp-sidecar opens the page', function()
  vim.fn.mkdir(doc_dir .. '/doc', 'p')
  vim.fn.writefile(
    vim.fn.readfile(T.plugin_root .. '/doc/mcp-sidecar.txt'),
    doc_dir .. '/doc/mcp-sidecar.txt'
  )
  vim.cmd('helptags ' .. vim.fn.fnameescape(doc_dir .. '/doc'))
  vim.opt.rtp:append(doc_dir)
  vim.cmd('help mcp-sidecar')
  T.eq('help', vim.bo.buftype)
  T.contains(vim.api.nvim_buf_get_name(0), 'mcp-sidecar.txt')
  vim.cmd('helpclose')
end)

T.test('every |reference| in the help file names a tag', function()
  local missing = {}
  for _, line in ipairs(vim.fn.readfile(T.plugin_root .. '/doc/mcp-sidecar.txt')) do
    for ref in line:gmatch('|([^|%s]+)|') do
      if not pcall(vim.cmd.help, ref) then
        table.insert(missing, ref)
      end
      pcall(vim.cmd.helpclose)
    end
  end
  T.eq({}, missing)
end)

T.test('every option and subcommand is documented', function()
  local doc = table.concat(vim.fn.readfile(T.plugin_root .. '/doc/mcp-sidecar.txt'), '\n')
  for key in pairs(require('mcp_sidecar.config').defaults) do
    if key ~= 'ui' then
      T.contains(doc, '*mcp-sidecar-option-' .. key .. '*')
    end
  end
  for sub in pairs(require('mcp_sidecar.commands').subcommands) do
    T.contains(doc, '*:Mcp-' .. sub .. '*')
  end
end)
