-- The native multi-select (quickPick with canPickMany), driven with real keys.
local T = require('helpers')

vim.cmd('runtime plugin/mcp_sidecar.lua')

local function params(extra)
  return vim.tbl_extend('force', {
    id = 'm1',
    server = 'travel',
    title = 'travel: Extras',
    placeholder = 'At most two',
    canPickMany = true,
    items = {
      { label = 'lounge', description = 'Lounge access' },
      { label = 'wifi', picked = true },
      { label = 'extra_bag' },
    },
  }, extra or {})
end

--- Opens the multi-select through the handler and returns (box, buf, win).
local function open(extra)
  local box = T.request('mcp-sidecar/quickPick', params(extra))
  local buf = T.wait_buf('^mcp://select/')
  T.wait(function()
    return vim.api.nvim_get_current_buf() == buf
  end, 'the multi-select to get focus')
  return box, buf, vim.api.nvim_get_current_win()
end

--- Runs normal-mode keys in the multi-select now.
local function keys(k)
  vim.api.nvim_feedkeys(vim.keycode(k), 'mx', false)
end

T.test('shows a checkbox per item with picked ones checked, in a float titled with the step', function()
  local box, buf, win = open({ step = 9, totalSteps = 10, canGoBack = true })
  T.eq({ '[ ] lounge — Lounge access', '[x] wifi', '[ ] extra_bag' }, T.lines(buf))
  local cfg = vim.api.nvim_win_get_config(win)
  T.ok(cfg.relative ~= '', 'a floating window')
  local title = table.concat(vim.tbl_map(function(chunk)
    return chunk[1]
  end, cfg.title))
  T.contains(title, '[step 9/10] travel: Extras')
  local footer = table.concat(vim.tbl_map(function(chunk)
    return chunk[1]
  end, cfg.footer))
  T.contains(footer, '<Space> toggle')
  T.contains(footer, '<BS> back')
  keys('q')
  T.eq(vim.NIL, T.answer(box))
end)

T.test('<Space> toggles, <CR> confirms the checked indexes', function()
  local box, buf = open()
  keys('<Space>') -- lounge on
  keys('j<Space>') -- wifi off
  keys('jx') -- extra_bag on
  T.eq({ '[x] lounge — Lounge access', '[ ] wifi', '[x] extra_bag' }, T.lines(buf))
  keys('<CR>')
  T.eq({ selected = { 0, 2 } }, T.answer(box))
  T.eq(false, vim.api.nvim_buf_is_valid(buf), 'the buffer is wiped')
end)

T.test('confirming nothing answers an empty selection', function()
  local box = open()
  keys('j<Space>') -- wifi off
  keys('<CR>')
  local answer = T.answer(box)
  T.eq({ selected = {} }, answer)
  T.eq('{"selected":[]}', vim.json.encode(answer), 'an empty list, not an object')
end)

T.test('q and <Esc> cancel (null); :McpReject too; :McpAccept confirms', function()
  local box = open()
  keys('<Esc>')
  T.eq(vim.NIL, T.answer(box))
  box = open()
  vim.cmd('McpReject')
  T.eq(vim.NIL, T.answer(box))
  box = open()
  vim.cmd('McpAccept')
  T.eq({ selected = { 1 } }, T.answer(box))
end)

T.test('<BS> goes back when allowed, and only then', function()
  local box = open({ canGoBack = true })
  keys('<BS>')
  T.eq({ back = true }, T.answer(box))
  box = open()
  T.eq('', vim.fn.maparg('<BS>', 'n'), 'no Back key without canGoBack')
  keys('q')
  T.eq(vim.NIL, T.answer(box))
end)

T.test('closing the window answers null', function()
  local box, _, win = open()
  vim.api.nvim_win_close(win, true)
  T.eq(vim.NIL, T.answer(box))
end)

T.test('cancelPrompt closes the multi-select and answers null', function()
  local box, buf, win = open()
  T.notify_handler('mcp-sidecar/cancelPrompt', { id = 'm1' })
  T.eq(vim.NIL, T.answer(box))
  T.eq(false, vim.api.nvim_win_is_valid(win))
  T.eq(false, vim.api.nvim_buf_is_valid(buf))
end)
