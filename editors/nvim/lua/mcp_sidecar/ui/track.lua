-- Makes any vim.ui.input / vim.ui.select call closable by `mcp-sidecar/cancelPrompt`.
--
-- Replacements (dressing.nvim, snacks.nvim, telescope-ui-select, ...) open floating windows and
-- return at once: the windows the call opened are closed. The built-in ones block in the command
-- line (input(), inputlist()) while Neovim keeps processing events: they are abandoned with CTRL-C.
local M = {}

local function window_set()
  local set = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    set[win] = true
  end
  return set
end

--- Calls `fn()` (which shows a UI) and registers its closing on `prompt`.
---@param prompt mcp_sidecar.Prompt
---@param fn fun()
function M.call(prompt, fn)
  local before = window_set()
  local opened = {}
  local blocking = true
  prompt:on_cancel(function()
    if blocking then
      -- Still inside the call: a built-in prompt is waiting for keys on the command line.
      local mode = vim.api.nvim_get_mode().mode
      if mode:sub(1, 1) == 'c' or mode:sub(1, 1) == 'r' then
        vim.api.nvim_feedkeys(vim.keycode('<C-c>'), 'n', false)
      end
    end
    local closed = false
    for _, win in ipairs(opened) do
      if vim.api.nvim_win_is_valid(win) then
        closed = pcall(vim.api.nvim_win_close, win, true) or closed
      end
    end
    if closed and vim.api.nvim_get_mode().mode:sub(1, 1) == 'i' then
      vim.cmd.stopinsert()
    end
  end)
  fn()
  blocking = false
  for win in pairs(window_set()) do
    if not before[win] then
      table.insert(opened, win)
    end
  end
end

return M
