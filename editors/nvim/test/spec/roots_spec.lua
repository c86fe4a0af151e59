-- Workspace folders are the MCP roots: adding and removing one changes what list_roots reports.
local T = require('helpers')

local extra = vim.fn.tempname()
vim.fn.mkdir(extra, 'p')

local function root_uris()
  local roots = T.call_structured('demo', 'list_roots').roots
  return vim.tbl_map(function(r)
    return r.uri
  end, roots)
end

--- vim.lsp.buf.*_workspace_folder act on the clients attached to the current buffer.
local function in_attached_buffer()
  local client = require('mcp_sidecar').client()
  vim.cmd.buffer(T.workspace() .. '/README.md')
  T.wait(function()
    return vim.lsp.buf_is_attached(0, client.id)
  end, 'README.md to be attached')
end

T.test('the workspace folder is the only root at start', function()
  T.start_sidecar()
  T.eq({ vim.uri_from_fname(T.workspace()) }, root_uris())
end)

T.test('vim.lsp.buf.add_workspace_folder adds a root', function()
  in_attached_buffer()
  vim.lsp.buf.add_workspace_folder(extra)
  local want = { vim.uri_from_fname(T.workspace()), vim.uri_from_fname(extra) }
  T.wait(function()
    return vim.deep_equal(want, root_uris())
  end, 'list_roots to report the new folder', 5000)
end)

T.test('vim.lsp.buf.remove_workspace_folder removes it again', function()
  in_attached_buffer()
  vim.lsp.buf.remove_workspace_folder(extra)
  T.wait(function()
    return vim.deep_equal({ vim.uri_from_fname(T.workspace()) }, root_uris())
  end, 'list_roots to drop the folder', 5000)
end)

T.test(':Mcp call demo list_roots shows the roots in the result buffer', function()
  vim.cmd('Mcp call demo list_roots')
  local buf = T.wait_buf('^mcp://result/demo/list_roots/%d+$')
  T.contains(T.lines(buf), vim.uri_from_fname(T.workspace()))
end)
