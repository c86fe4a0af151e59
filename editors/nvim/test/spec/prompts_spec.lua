-- inputBox, single quickPick, cancelPrompt, clipboard and showDocument, called as Neovim calls them.
local T = require('helpers')

vim.cmd('runtime plugin/mcp_sidecar.lua')

T.test(
  'inputBox: the answer of vim.ui.input becomes {value}; the prompt shows step and validation',
  function()
    local calls = T.script_input({ 'me@example.com' })
    local box = T.request('mcp-sidecar/inputBox', {
      id = 'p7',
      server = 'travel',
      title = 'travel: Confirm your trip',
      prompt = 'Email',
      placeholder = 'name@example.com',
      value = 'me@',
      validationMessage = 'Not an email address',
      step = 2,
      totalSteps = 9,
    })
    T.eq({ value = 'me@example.com' }, T.answer(box))
    local opts = calls[1].opts
    T.contains(opts.prompt, '[step 2/9]')
    T.contains(opts.prompt, 'travel: Confirm your trip')
    T.contains(opts.prompt, 'Email')
    T.contains(opts.prompt, 'Not an email address')
    T.contains(opts.prompt, 'name@example.com')
    T.eq('me@', opts.default)
    T.eq(false, calls[1].in_coroutine, 'vim.ui.input must be called outside the handler coroutine')
  end
)

T.test('inputBox: an asynchronous vim.ui.input answering from a later event-loop turn', function()
  local calls = T.script_input({ 'later' }, { hold = true })
  local box = T.request('mcp-sidecar/inputBox', { id = 'a1', title = 'x' })
  T.wait(function()
    return calls[1]
  end, 'vim.ui.input to be called')
  T.flush_scheduled()
  T.eq(false, box.done, 'the handler must wait for the answer')
  vim.schedule(calls[1].reply)
  T.eq({ value = 'later' }, T.answer(box))
end)

T.test('inputBox: Escape answers null', function()
  T.script_input({ false })
  local box = T.request('mcp-sidecar/inputBox', { id = 'e1', title = 'x' })
  T.eq(vim.NIL, T.answer(box))
end)

T.test('inputBox: Escape with canGoBack/canSkip offers Back and Skip', function()
  T.script_input({ false, false })
  local calls = T.script_select(T.pick('Back'))
  local box = T.request('mcp-sidecar/inputBox', { id = 'b1', title = 'x', canGoBack = true, canSkip = true })
  T.eq({ back = true }, T.answer(box))
  T.eq({ '← Back to the previous step', 'Skip this field', 'Cancel' }, calls[1].lines)

  T.script_select(T.pick('Skip'))
  box = T.request('mcp-sidecar/inputBox', { id = 'b2', title = 'x', canSkip = true })
  T.eq({ skip = true }, T.answer(box))
end)

T.test('inputBox: the default vim.ui.input answered with typed keys', function()
  T.feed('hello world<CR>')
  local box = T.request('mcp-sidecar/inputBox', { id = 'k1', title = 'typed' })
  T.eq({ value = 'hello world' }, T.answer(box))
  T.feed('<Esc>')
  box = T.request('mcp-sidecar/inputBox', { id = 'k2', title = 'typed' })
  T.eq(vim.NIL, T.answer(box))
end)

T.test('inputBox: a password is typed into a hidden entry (inputsecret), Escape is null', function()
  local used_ui = false
  vim.ui.input = function()
    used_ui = true
  end
  T.feed('s3cret<CR>')
  local box = T.request('mcp-sidecar/inputBox', { id = 's1', title = 'token', password = true })
  T.eq({ value = 's3cret' }, T.answer(box))
  T.eq(false, used_ui, 'passwords must not go through vim.ui.input')
  T.feed('<Esc>')
  box = T.request('mcp-sidecar/inputBox', { id = 's2', title = 'token', password = true })
  T.eq(vim.NIL, T.answer(box))
  T.feed('<CR>')
  box = T.request('mcp-sidecar/inputBox', { id = 's3', title = 'token', password = true })
  T.eq({ value = '' }, T.answer(box), 'an empty password is an answer, not a dismissal')
end)

T.test('quickPick: vim.ui.select index maps to the 0-based item index', function()
  local calls = T.script_select(T.pick('Business'))
  local box = T.request('mcp-sidecar/quickPick', {
    id = 'p8',
    server = 'travel',
    title = 'travel: Cabin',
    placeholder = 'Pick one',
    items = {
      { label = 'Economy', description = 'economy', detail = 'cheapest', picked = true },
      { label = 'Business' },
    },
    step = 6,
    totalSteps = 9,
    canGoBack = true,
  })
  T.eq({ selected = { 1 } }, T.answer(box))
  local call = calls[1]
  T.eq({ 'Economy — economy · cheapest (current)', 'Business', '← Back' }, call.lines)
  T.contains(call.opts.prompt, '[step 6/9] travel: Cabin')
  T.contains(call.opts.prompt, 'Pick one')
  T.eq(false, call.in_coroutine, 'vim.ui.select must be called outside the handler coroutine')
end)

T.test('quickPick: Back, Skip and dismissal', function()
  local params = { id = 'q2', title = 'x', items = { { label = 'A' } }, canGoBack = true, canSkip = true }
  T.script_select(T.pick('Back'))
  T.eq({ back = true }, T.answer(T.request('mcp-sidecar/quickPick', params)))
  T.script_select(T.pick('Skip'))
  T.eq({ skip = true }, T.answer(T.request('mcp-sidecar/quickPick', params)))
  T.script_select(function() end)
  T.eq(vim.NIL, T.answer(T.request('mcp-sidecar/quickPick', params)))
end)

T.test('quickPick: an asynchronous select (later event-loop turn, floating window)', function()
  local calls = T.script_select(T.pick('B'), { delay = 60, float = true })
  local box = T.request(
    'mcp-sidecar/quickPick',
    { id = 'q3', title = 'x', items = { { label = 'A' }, { label = 'B' } } }
  )
  T.wait(function()
    return calls[1] ~= nil
  end, 'the select to open')
  T.eq(false, box.done)
  T.eq({ selected = { 1 } }, T.answer(box))
end)

T.test('cancelPrompt closes an open asynchronous select and answers null', function()
  local calls = T.script_select(T.pick('A'), { never = true, float = true })
  local box = T.request('mcp-sidecar/quickPick', { id = 'c1', title = 'x', items = { { label = 'A' } } }, 7)
  T.wait(function()
    return calls[1] and calls[1].win
  end, 'the select window')
  T.ok(vim.api.nvim_win_is_valid(calls[1].win))
  T.notify_handler('mcp-sidecar/cancelPrompt', { id = 'other' }, 7)
  T.notify_handler('mcp-sidecar/cancelPrompt', { id = 'c1' }, 8)
  T.flush_scheduled()
  T.eq(false, box.done, 'another id or another client must not cancel it')
  T.ok(vim.api.nvim_win_is_valid(calls[1].win), 'the select stays open')
  T.notify_handler('mcp-sidecar/cancelPrompt', { id = 'c1' }, 7)
  T.eq(vim.NIL, T.answer(box))
  T.eq(false, vim.api.nvim_win_is_valid(calls[1].win), 'the select window must be closed')
  T.eq({}, require('mcp_sidecar.prompts').list())
end)

T.test('cancelPrompt abandons the default vim.ui.input waiting on the command line', function()
  local default_input, returned = vim.ui.input, false
  vim.ui.input = function(opts, on_confirm)
    default_input(opts, function(value)
      returned = true
      on_confirm(value)
    end)
  end
  -- The cancellation arrives while input() waits for keys on the command line.
  vim.api.nvim_create_autocmd('CmdlineEnter', {
    once = true,
    callback = function()
      vim.schedule(function()
        T.notify_handler('mcp-sidecar/cancelPrompt', { id = 'c2' })
      end)
    end,
  })
  local box = T.request('mcp-sidecar/inputBox', { id = 'c2', title = 'waiting' })
  T.eq(vim.NIL, T.answer(box))
  T.wait(function()
    return returned
  end, 'the default vim.ui.input to return')
  T.eq('n', vim.api.nvim_get_mode().mode, 'the command line must be left')
end)

T.test('clipboard sets the + and " registers', function()
  local copied = {}
  vim.g.clipboard = {
    name = 'test',
    copy = {
      ['+'] = function(lines)
        copied['+'] = table.concat(lines, '\n')
      end,
      ['*'] = function(lines)
        copied['*'] = table.concat(lines, '\n')
      end,
    },
    paste = {
      ['+'] = function()
        return { vim.split(copied['+'] or '', '\n'), 'v' }
      end,
      ['*'] = function()
        return { vim.split(copied['*'] or '', '\n'), 'v' }
      end,
    },
  }
  T.notify_handler('mcp-sidecar/clipboard', { text = 'https://example.com/login' })
  T.eq('https://example.com/login', vim.fn.getreg('"'))
  T.eq('https://example.com/login', copied['+'])
  T.contains(T.notifications[#T.notifications].message, 'https://example.com/login')
end)

T.test('window/showDocument with external=true goes through vim.ui.open', function()
  local opened = {}
  vim.ui.open = function(uri)
    table.insert(opened, { uri = uri, in_coroutine = coroutine.running() ~= nil })
    return { wait = function() end }, nil
  end
  local box =
    T.request('window/showDocument', { uri = 'https://example.com/login?session=1', external = true })
  T.eq({ success = true }, T.answer(box))
  T.eq('https://example.com/login?session=1', opened[1].uri)
  T.eq(false, opened[1].in_coroutine)

  vim.ui.open = function()
    return nil, 'no handler found'
  end
  box = T.request('window/showDocument', { uri = 'https://example.com/x', external = true })
  T.eq({ success = false }, T.answer(box))
  T.contains(T.wait_notification('could not open a browser').message, 'https://example.com/x')
end)
