-- The draft buffer (mcp-sidecar/editDraft): accept, reject, close, problems, header.
local T = require('helpers')

vim.cmd('runtime plugin/mcp_sidecar.lua')

local count = 0

local function open(extra)
  count = count + 1
  local params = vim.tbl_extend('force', {
    id = 'd' .. count,
    server = 'flights',
    kind = 'samplingRequest',
    title = 'flights wants a model answer',
    language = 'markdown',
    text = '# Request\n\nWhich flight is cheapest?\n',
  }, extra or {})
  local box = T.request('mcp-sidecar/editDraft', params)
  local buf = T.wait_draft(params.id)
  T.wait(function()
    return vim.api.nvim_get_current_buf() == buf
  end, 'the draft to get focus')
  return box, buf
end

T.test('opens a scratch acwrite buffer named mcp://draft/<server>/<n> in a split', function()
  local windows = #vim.api.nvim_list_wins()
  local box, buf = open()
  T.ok(vim.api.nvim_buf_get_name(buf):match('^mcp://draft/flights/%d+$'), vim.api.nvim_buf_get_name(buf))
  T.eq('acwrite', vim.bo[buf].buftype)
  T.eq('markdown', vim.bo[buf].filetype)
  T.eq(false, vim.bo[buf].modified)
  T.eq(windows + 1, #vim.api.nvim_list_wins(), 'a split')
  T.eq({ '# Request', '', 'Which flight is cheapest?' }, T.lines(buf))
  vim.cmd('McpReject')
  T.eq({ action = 'reject' }, T.answer(box))
end)

T.test(':w accepts with the edited text (final newline kept, header not included)', function()
  local box, buf = open()
  vim.api.nvim_buf_set_lines(buf, 2, 3, false, { 'Which flight is best value?', 'Answer briefly.' })
  vim.cmd('write')
  T.eq(
    { action = 'accept', text = '# Request\n\nWhich flight is best value?\nAnswer briefly.\n' },
    T.answer(box)
  )
  T.wait(function()
    return not vim.api.nvim_buf_is_valid(buf)
  end, 'the draft to be closed')
end)

T.test('the header is virtual text that tells what the keys do', function()
  local box, buf = open()
  local ns = vim.api.nvim_get_namespaces()['mcp_sidecar.draft']
  local marks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })
  local header = {}
  for _, mark in ipairs(marks) do
    for _, line in ipairs(mark[4].virt_lines or {}) do
      table.insert(header, line[1][1])
    end
  end
  -- The sidecar's title as it is: the server named once, not 'flights: flights wants ...'.
  T.eq('flights wants a model answer', header[1])
  T.contains(header, ':w or :McpAccept accepts')
  T.contains(header, ':McpReject rejects')
  vim.cmd('McpAccept')
  local answer = T.answer(box)
  T.eq('# Request\n\nWhich flight is cheapest?\n', answer.text)
  T.not_contains(answer.text, 'McpAccept')
end)

T.test('text without a final newline comes back without one; the language sets the filetype', function()
  local box, buf = open({ language = 'json', kind = 'toolArguments', text = '{"a": 1}' })
  T.eq('json', vim.bo[buf].filetype)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '{"a": 2}' })
  vim.cmd('McpAccept')
  T.eq({ action = 'accept', text = '{"a": 2}' }, T.answer(box))
end)

T.test('closing the buffer without choosing answers null; :q refuses to drop edits', function()
  local box, buf = open()
  vim.cmd('quit')
  T.eq(vim.NIL, T.answer(box))
  T.eq(false, vim.api.nvim_buf_is_valid(buf))

  box, buf = open()
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { '# Edited' })
  local ok, err = pcall(vim.cmd, 'quit')
  T.eq(false, ok)
  T.contains(tostring(err), 'E37')
  vim.cmd('quit!')
  T.eq(vim.NIL, T.answer(box))
end)

T.test('problems are shown as diagnostics on their (0-based) lines', function()
  local box, buf = open({
    problems = { { line = 2, message = 'unknown header key' }, { line = 99, message = 'past the end' } },
  })
  local diagnostics = vim.diagnostic.get(buf)
  table.sort(diagnostics, function(a, b)
    return a.message > b.message
  end)
  T.eq(2, #diagnostics)
  T.eq('unknown header key', diagnostics[1].message)
  T.eq(2, diagnostics[1].lnum)
  T.eq(vim.diagnostic.severity.ERROR, diagnostics[1].severity)
  T.eq(2, diagnostics[2].lnum, 'a line past the end goes on the last line')
  vim.cmd('McpReject')
  T.eq({ action = 'reject' }, T.answer(box))
end)

T.test('cancelPrompt closes the draft and answers null', function()
  local box, buf = open({ id = 'd9' })
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { '# Edited, then cancelled' })
  T.notify_handler('mcp-sidecar/cancelPrompt', { id = 'd9' })
  T.eq(vim.NIL, T.answer(box))
  T.eq(false, vim.api.nvim_buf_is_valid(buf))
end)

T.test('two drafts at once get their own names and answers', function()
  local first = T.request('mcp-sidecar/editDraft', {
    id = 'x1',
    server = 'a',
    kind = 'form',
    title = 'one',
    language = 'markdown',
    text = 'one\n',
  })
  local second = T.request('mcp-sidecar/editDraft', {
    id = 'x2',
    server = 'b',
    kind = 'form',
    title = 'two',
    language = 'markdown',
    text = 'two\n',
  })
  local a = T.wait_draft('x1')
  local b = T.wait_draft('x2')
  T.ok(vim.fn.bufwinid(a) ~= vim.fn.bufwinid(b), 'each in its own window')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(a))
  vim.cmd('McpReject')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(b))
  vim.cmd('write')
  T.eq({ action = 'reject' }, T.answer(first))
  T.eq({ action = 'accept', text = 'two\n' }, T.answer(second))
end)
