-- Plugin managers put the repository root on 'runtimepath'; the Neovim plugin lives in
-- editors/nvim (next to the VS Code extension, with its own tests). This adds that folder to
-- 'runtimepath' and loads it, so one plugin spec installs it. See docs/neovim.md.
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h:h')
local home = vim.fs.normalize(root .. '/editors/nvim')
local on_rtp = vim.tbl_contains(vim.tbl_map(vim.fs.normalize, vim.api.nvim_list_runtime_paths()), home)
if not on_rtp then
  vim.opt.runtimepath:append(home)
end
dofile(home .. '/plugin/mcp_sidecar.lua')
