-- Read-only scratch buffers (mcp://servers, mcp://tools, mcp://result/...) shown in a split.
local config = require('mcp_sidecar.config')

local M = {}

local function find(name)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_get_name(buf) == name then
      return buf
    end
  end
end

--- Shows `lines` in the buffer called `name` (created when needed) and focuses it.
--- `opts.reuse`: a Lua pattern; a window of the current tab showing a buffer whose name matches
--- it is reused instead of opening a split (results replace each other there), and the buffer
--- is kept when hidden (:ls lists it).
---@param opts? { filetype?: string, reuse?: string, keys?: table<string, { fn: function, desc: string }> }
---@return integer buf
function M.show(name, lines, opts)
  opts = opts or {}
  local buf = find(name)
  if not buf then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].bufhidden = opts.reuse and 'hide' or 'wipe'
    vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = buf, nowait = true, desc = 'Close' })
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if opts.filetype and vim.bo[buf].filetype ~= opts.filetype then
    vim.bo[buf].filetype = opts.filetype
  end
  for lhs, key in pairs(opts.keys or {}) do
    vim.keymap.set('n', lhs, key.fn, { buffer = buf, nowait = true, desc = key.desc })
  end
  local win = vim.fn.bufwinid(buf)
  if win == -1 and opts.reuse then
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)):match(opts.reuse) then
        win = w
        vim.api.nvim_win_set_buf(win, buf)
        break
      end
    end
  end
  if win == -1 then
    vim.cmd(config.get().ui.split)
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  return buf
end

return M
