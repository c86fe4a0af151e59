-- The native multi-select: a small floating checkbox list for `quickPick` with `canPickMany`.
--   <Space>/x/<Tab> toggle · <CR> or :McpAccept confirm · q/<Esc> or :McpReject cancel ·
--   <BS> back (when allowed). Closing the window answers null.
local config = require('mcp_sidecar.config')
local text = require('mcp_sidecar.ui.text')

local M = {}

local function render_line(item, checked)
  return (checked and '[x] ' or '[ ] ') .. text.item(item)
end

---@param params table quickPick params (canPickMany)
---@param prompt mcp_sidecar.Prompt
---@return integer buf, integer win
function M.open(params, prompt)
  local items = params.items or {}
  local checked = {}
  local lines = {}
  for i, item in ipairs(items) do
    checked[i] = item.picked == true
    lines[i] = render_line(item, checked[i])
  end
  if #lines == 0 then
    lines = { '(nothing to pick)' }
  end

  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'mcp_sidecar_select'
  pcall(vim.api.nvim_buf_set_name, buf, 'mcp://select/' .. prompt.id)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false

  local hints = { '<Space> toggle', '<CR> confirm' }
  if params.canGoBack then
    table.insert(hints, '<BS> back')
  end
  if params.canSkip then
    table.insert(hints, 's skip')
  end
  table.insert(hints, 'q cancel')
  local footer = ' ' .. table.concat(hints, ' · ') .. ' '
  local title = ' ' .. text.select_prompt(params) .. ' '

  local width = math.max(vim.fn.strdisplaywidth(title), vim.fn.strdisplaywidth(footer))
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width + 2, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(1, vim.o.lines - 6))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.max(0, math.floor((vim.o.lines - height) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = height,
    style = 'minimal',
    border = config.get().ui.border,
    title = title,
    title_pos = 'center',
    footer = footer,
    footer_pos = 'center',
  })
  vim.wo[win].cursorline = true

  local function close()
    if vim.api.nvim_win_is_valid(win) then
      pcall(vim.api.nvim_win_close, win, true)
    end
    if vim.api.nvim_buf_is_valid(buf) then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end

  local function finish(answer)
    prompt:settle(answer)
    close()
  end

  local function toggle(advance)
    local row = vim.api.nvim_win_get_cursor(win)[1]
    if not items[row] then
      return
    end
    checked[row] = not checked[row]
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, row - 1, row, false, { render_line(items[row], checked[row]) })
    vim.bo[buf].modifiable = false
    vim.bo[buf].modified = false
    if advance and row < #items then
      vim.api.nvim_win_set_cursor(win, { row + 1, 0 })
    end
  end

  local function confirm()
    local selected = {}
    for i = 1, #items do
      if checked[i] then
        table.insert(selected, i - 1)
      end
    end
    finish({ selected = selected })
  end

  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = desc })
  end
  map('<Space>', function()
    toggle(false)
  end, 'Toggle')
  map('x', function()
    toggle(false)
  end, 'Toggle')
  map('<Tab>', function()
    toggle(true)
  end, 'Toggle and go to the next item')
  map('<CR>', confirm, 'Confirm the selection')
  map('q', function()
    finish(nil)
  end, 'Cancel')
  map('<Esc>', function()
    finish(nil)
  end, 'Cancel')
  if params.canGoBack then
    map('<BS>', function()
      finish({ back = true })
    end, 'Back to the previous step')
  end
  if params.canSkip then
    map('s', function()
      finish({ skip = true })
    end, 'Skip')
  end
  vim.api.nvim_buf_create_user_command(buf, 'McpAccept', confirm, { desc = 'Confirm the selection' })
  vim.api.nvim_buf_create_user_command(buf, 'McpReject', function()
    finish(nil)
  end, { desc = 'Cancel' })

  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      prompt:settle(nil)
    end,
  })
  prompt:on_cancel(close)

  -- Expose the internals for the tests and for people who script it.
  M.last = { buf = buf, win = win, toggle = toggle, confirm = confirm, checked = checked }
  return buf, win
end

return M
