-- Sampling end to end: the demo's analyze_flights asks for a model answer; the real sidecar
-- (default provider `manual`) opens the request draft, then the answer draft, as
-- mcp-sidecar/editDraft buffers. Every case runs in both protocol eras: `legacy` is pinned to 2025-11-25 (a real
-- sampling/createMessage during the call), `demo` to 2026-07-28 (an inputRequests round).
local T = require('helpers')

local ERAS = {
  { server = 'legacy', version = '2025-11-25' },
  { server = 'demo', version = '2026-07-28' },
}

local ANSWER = {
  'EX517 (Lisbon → Boston, nonstop, €389) is the best value.',
  'It is the cheapest nonstop flight; "EX623" is cheaper but takes 15h30.',
}

-- Drafts -----------------------------------------------------------------------------------------

local seen = {}

--- Waits for a new draft of `kind` (samplingRequest / samplingResponse) from `server` and for it
--- to get focus. Each buffer is returned once: a re-opened draft is a new buffer.
local function wait_draft(server, kind)
  local found
  T.wait(function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      local draft = vim.api.nvim_buf_is_valid(buf) and vim.b[buf].mcp_sidecar_draft
      if draft and not seen[buf] and draft.server == server and draft.kind == kind then
        found = buf
        return true
      end
    end
  end, ('the %s draft of %s'):format(kind, server))
  seen[found] = true
  T.wait(function()
    return vim.api.nvim_get_current_buf() == found
  end, 'the draft to get focus')
  return found
end

local function wait_closed(buf)
  T.wait(function()
    return not vim.api.nvim_buf_is_valid(buf)
  end, 'the draft to be closed')
end

--- The 0-based index of the first line of `buf` that equals `line` (or matches the pattern `pat`).
local function line_index(buf, line, pat)
  for i, l in ipairs(T.lines(buf)) do
    if (line and l == line) or (pat and l:match(pat)) then
      return i - 1
    end
  end
  error(('no line %s in:\n%s'):format(line or pat, table.concat(T.lines(buf), '\n')))
end

local function set_line(buf, index, text)
  vim.api.nvim_buf_set_lines(buf, index, index + 1, false, { text })
end

--- Replaces `from` by `to` in the one line of `buf` that contains `from`.
local function replace(buf, from, to)
  for i, l in ipairs(T.lines(buf)) do
    local at = l:find(from, 1, true)
    if at then
      set_line(buf, i - 1, l:sub(1, at - 1) .. to .. l:sub(at + #from))
      return i - 1
    end
  end
  error('no line contains ' .. from)
end

--- Writes `lines` below the answer draft's `### assistant` heading (replacing what is there).
local function write_answer(buf, lines)
  local heading = line_index(buf, '### assistant')
  vim.api.nvim_buf_set_lines(buf, heading + 1, -1, false, vim.list_extend({ '' }, lines))
end

-- Calls ----------------------------------------------------------------------------------------

--- callTool through the LSP client, for assertions on the error object. Returns a box that gets
--- `done`, `err`, `result` and `ended` (hrtime) when the sidecar answers.
local function call_raw(server)
  local box = { done = false }
  local client = assert(require('mcp_sidecar').client(), 'no sidecar client')
  client:request('workspace/executeCommand', {
    command = 'mcp-sidecar.callTool',
    arguments = { { server = server, tool = 'analyze_flights', arguments = vim.empty_dict() } },
  }, function(err, result)
    box.err, box.result, box.done, box.ended = err, result, true, vim.uv.hrtime()
  end)
  return box
end

local function wait_call(box)
  T.wait(function()
    return box.done
  end, 'callTool to answer', 15000)
  return box
end

local function result_buf(server)
  return T.wait_buf('^mcp://result/' .. server .. '/analyze_flights/%d+$', 15000)
end

--- The structuredContent a result buffer shows (its ```json block), decoded.
local function structured(lines)
  local start = vim.fn.index(lines, '## Structured content') + 1
  T.ok(start > 0, 'no structured content in:\n' .. table.concat(lines, '\n'))
  T.eq('```json', lines[start + 2])
  local json = {}
  for i = start + 3, #lines do
    if lines[i] == '```' then
      break
    end
    table.insert(json, lines[i])
  end
  return vim.json.decode(table.concat(json, '\n'))
end

--- The last entry of `server` in the sampling audit log ($XDG_STATE_HOME/mcp-sidecar/
--- sampling.jsonl), and how many it has.
local function audit(server)
  local path = vim.env.XDG_STATE_HOME .. '/mcp-sidecar/sampling.jsonl'
  local entries = {}
  for _, line in ipairs(vim.fn.filereadable(path) == 1 and vim.fn.readfile(path) or {}) do
    local entry = vim.json.decode(line)
    if entry.server == server then
      table.insert(entries, entry)
    end
  end
  return entries[#entries], #entries
end

--- The call ended with a refusal: a tool error in the legacy era (the server got JSON-RPC -1),
--- a failed command with data.kind = "refused" in 2026-07-28 (no retry).
local function assert_refused_raw(era, box)
  if era.version == '2025-11-25' then
    T.ok(not box.err, vim.inspect(box.err))
    T.eq(true, box.result.isError, vim.inspect(box.result))
    T.contains(box.result.content[1].text, 'User rejected sampling request')
  else
    T.ok(box.err, 'the command fails: ' .. vim.inspect(box.result))
    T.eq('refused', vim.tbl_get(box.err, 'data', 'kind'), vim.inspect(box.err))
    T.contains(box.err.message, 'refused')
  end
end

-- Cases ------------------------------------------------------------------------------------------

T.test('both demo servers run, each pinned to its era, and offer analyze_flights', function()
  T.start_sidecar({
    servers = {
      demo = { protocolVersion = '2026-07-28' },
      legacy = { command = T.bin, args = { 'demo-server' }, protocolVersion = '2025-11-25' },
    },
  })
  T.wait_running('legacy')
  for _, era in ipairs(ERAS) do
    T.eq(era.version, T.server(era.server).protocolVersion, era.server)
  end
  local tools = T.exec('mcp-sidecar.listTools', { server = 'legacy' })
  T.ok(vim.iter(tools):any(function(row)
    return row.name == 'analyze_flights'
  end))
end)

for _, era in ipairs(ERAS) do
  local s = era.server
  local tag = '[' .. era.version .. '] '

  T.test(tag .. 'edit the request (:w), write the answer (:McpAccept): the tool gets exactly it', function()
    local _, before = audit(s)
    vim.cmd('Mcp call ' .. s .. ' analyze_flights')

    local request = wait_draft(s, 'samplingRequest')
    T.eq('markdown', vim.bo[request].filetype)
    T.eq('acwrite', vim.bo[request].buftype)
    local text = T.lines(request)
    T.eq('# Sampling request from `' .. s .. '`', text[1])
    T.contains(text, 'maxTokens: 400')
    local temperature = text[line_index(request, nil, '^temperature: ') + 1]
    T.contains(text, 'remember: no')
    T.contains(text, '### system')
    T.contains(text, 'You are a concise travel assistant. Prices are per person.')
    T.contains(text, '### user')
    T.contains(text, '5. EX517 Lisbon → Boston, nonstop, 7h10, €389')
    set_line(request, line_index(request, 'maxTokens: 400'), 'maxTokens: 64')
    replace(request, 'Which of these flights is the best value?', 'Which of these flights is the cheapest?')
    vim.cmd('write')
    wait_closed(request)

    local answer = wait_draft(s, 'samplingResponse')
    T.eq('markdown', vim.bo[answer].filetype)
    local draft = T.lines(answer)
    T.eq('# Model answer for `' .. s .. '`', draft[1])
    T.contains(draft, 'model: manual')
    T.contains(draft, 'stopReason: endTurn')
    write_answer(answer, ANSWER)
    vim.cmd('McpAccept')

    local lines = T.lines(result_buf(s))
    T.not_contains(lines, 'The tool reported an error')
    T.contains(lines, table.concat(ANSWER, '\n'))
    local content = structured(lines)
    T.eq({ model = 'manual', stopReason = 'endTurn', text = table.concat(ANSWER, '\n') }, content)

    -- What went to the provider was the edited request; the audit log has one more entry.
    local entry, after = audit(s)
    T.eq(before + 1, after)
    T.eq('accepted', entry.outcome)
    T.eq('person', entry.decidedBy)
    T.eq(true, entry.requestEdited)
    T.eq(64, entry.requestSent.maxTokens)
    T.eq(400, entry.requestReceived.maxTokens)
    -- Numbers are shown and sent as the server wrote them (the demo's f32 0.2 arrives widened).
    T.eq(entry.requestReceived.temperature, tonumber(temperature:match('^temperature: (.+)$')))
    T.eq(entry.requestReceived.temperature, entry.requestSent.temperature)
    local sent = entry.requestSent.messages[1].content
    sent = vim.islist(sent) and sent[1] or sent
    T.contains(sent.text, 'Which of these flights is the cheapest?')
    T.eq(true, entry.answerEdited)
  end)

  T.test(tag .. "an answer typed on the empty answer draft's last line goes out as typed", function()
    vim.cmd('Mcp call ' .. s .. ' analyze_flights')
    local request = wait_draft(s, 'samplingRequest')
    vim.cmd('write')
    wait_closed(request)
    local answer = wait_draft(s, 'samplingResponse')
    local last = vim.api.nvim_buf_line_count(answer) - 1
    T.eq('### assistant', T.lines(answer)[last], 'one blank line under the heading, the last')
    set_line(answer, last, ANSWER[1])
    vim.cmd('McpAccept')
    local content = structured(T.lines(result_buf(s)))
    T.eq(ANSWER[1], content.text, 'no leading newline')
  end)

  T.test(tag .. ':McpReject on the request draft refuses at once; no answer draft', function()
    local box = call_raw(s)
    local request = wait_draft(s, 'samplingRequest')
    local started = vim.uv.hrtime()
    vim.cmd('McpReject')
    wait_call(box)
    local ms = (box.ended - started) / 1e6
    T.ok(ms < 2000, ('the call ended %.0f ms after the rejection'):format(ms))
    assert_refused_raw(era, box)
    wait_closed(request)
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      local draft = vim.b[buf].mcp_sidecar_draft
      T.ok(not (draft and draft.kind == 'samplingResponse'), 'no answer draft was opened')
    end
    local entry = audit(s)
    T.eq('refused', entry.outcome)
    T.eq('the person rejected the request', entry.reason)
  end)

  T.test(tag .. 'closing the answer draft (:bwipeout!) without choosing refuses', function()
    vim.cmd('Mcp call ' .. s .. ' analyze_flights')
    local request = wait_draft(s, 'samplingRequest')
    vim.cmd('McpAccept')
    wait_closed(request)
    local answer = wait_draft(s, 'samplingResponse')
    write_answer(answer, { 'an answer that is never sent' })
    vim.cmd('bwipeout!')
    if era.version == '2025-11-25' then
      local lines = T.lines(result_buf(s))
      T.contains(lines, '**The tool reported an error:**')
      T.contains(lines, 'User rejected sampling request')
    else
      local n = T.wait_notification(s .. ' › analyze_flights failed:')
      T.contains(n.message, '[refused]')
      T.eq(vim.log.levels.ERROR, n.level)
      T.eq(nil, T.find_buf('^mcp://result/'), 'no result buffer')
    end
    local entry = audit(s)
    T.eq('refused', entry.outcome)
    T.eq('the person closed the answer draft', entry.reason)
  end)

  T.test(tag .. 'a broken request draft is re-opened with problems as diagnostics, text kept', function()
    local box = call_raw(s)
    local request = wait_draft(s, 'samplingRequest')
    local at = line_index(request, 'maxTokens: 400')
    set_line(request, at, 'maxTokens: lots')
    replace(request, 'Which of these flights is the best value?', 'Which of these flights is the quickest?')
    local typed = T.lines(request)
    vim.cmd('write')
    wait_closed(request)

    local again = wait_draft(s, 'samplingRequest')
    T.eq(typed, T.lines(again), 'the text as the person left it')
    local diagnostics = vim.diagnostic.get(again)
    T.eq(1, #diagnostics, vim.inspect(diagnostics))
    T.eq(at, diagnostics[1].lnum)
    T.eq('maxTokens must be a positive whole number', diagnostics[1].message)
    T.eq(vim.diagnostic.severity.ERROR, diagnostics[1].severity)
    T.eq(false, box.done, 'the call still waits')

    -- Fixed, it goes on to the answer draft; rejecting that refuses too.
    set_line(again, at, 'maxTokens: 32')
    vim.cmd('write')
    wait_closed(again)
    local answer = wait_draft(s, 'samplingResponse')
    vim.cmd('McpReject')
    wait_call(box)
    assert_refused_raw(era, box)
    local entry = audit(s)
    T.eq(32, entry.requestSent.maxTokens)
    T.eq('the person rejected the answer', entry.reason)
    wait_closed(answer)
  end)

  T.test(tag .. 'remember: session skips the request draft for that server from then on', function()
    vim.cmd('Mcp call ' .. s .. ' analyze_flights')
    local request = wait_draft(s, 'samplingRequest')
    set_line(request, line_index(request, 'remember: no'), 'remember: session')
    vim.cmd('write')
    wait_closed(request)
    write_answer(wait_draft(s, 'samplingResponse'), { 'first' })
    vim.cmd('McpAccept')
    T.contains(T.lines(result_buf(s)), '"text": "first"')

    local box = call_raw(s)
    local answer = wait_draft(s, 'samplingResponse')
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      local draft = vim.api.nvim_buf_is_valid(buf) and vim.b[buf].mcp_sidecar_draft
      T.ok(not (draft and draft.kind == 'samplingRequest'), 'no request draft this time')
    end
    write_answer(answer, { 'second' })
    vim.cmd('write')
    wait_call(box)
    T.ok(not box.err, vim.inspect(box.err))
    T.eq('second', box.result.structuredContent.text)
  end)
end
