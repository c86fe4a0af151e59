-- `mcp-sidecar/editDraft` → a scratch buffer in a split, named mcp://draft/<server>/<n>.
--   :w or :McpAccept → { action = 'accept', text = <the buffer> }
--   :McpReject       → { action = 'reject' }
--   closing it (:q!, :bwipeout, ...) without choosing → null
-- `problems` become diagnostics; the header is virtual text, never part of the returned text.
local config = require('mcp_sidecar.config')

local M = {}

local ns = vim.api.nvim_create_namespace('mcp_sidecar.draft')
local count = 0

-- LSP language ids whose Neovim filetype has another name.
local filetypes = { plaintext = 'text', shellscript = 'sh', ['javascriptreact'] = 'javascriptreact' }

local function filetype_of(language)
  if type(language) ~= 'string' or language == '' then
    return 'markdown'
  end
  return filetypes[language] or language
end

local function set_problems(buf, problems, line_count)
  local diagnostics = {}
  for _, problem in ipairs(problems or {}) do
    local lnum = tonumber(problem.line) or 0
    lnum = math.max(0, math.min(lnum, line_count - 1))
    table.insert(diagnostics, {
      lnum = lnum,
      col = 0,
      severity = vim.diagnostic.severity.ERROR,
      message = tostring(problem.message or 'problem'),
      source = 'mcp-sidecar',
    })
  end
  vim.diagnostic.set(ns, buf, diagnostics)
end

local function header(params)
  -- The sidecar's title names who asks ("flights wants a model answer"); the server is not
  -- repeated in front of it.
  local title = tostring(params.title or 'MCP draft')
  local keys = ':w or :McpAccept accepts · :McpReject rejects · :q! closes without answering'
  return {
    { { title, 'Title' } },
    { { keys, 'Comment' } },
  }
end

--- The text a person accepted: the buffer's lines, with the original final newline kept.
local function buffer_text(buf, final_newline)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local result = table.concat(lines, '\n')
  if final_newline then
    result = result .. '\n'
  end
  return result
end

---@param params table editDraft params
---@param prompt mcp_sidecar.Prompt
---@return integer buf
function M.open(params, prompt)
  count = count + 1
  local server = (type(params.server) == 'string' and params.server ~= '') and params.server or 'sidecar'
  local name = ('mcp://draft/%s/%d'):format(server, count)
  local content = type(params.text) == 'string' and params.text or ''
  local final_newline = content:sub(-1) == '\n'
  if final_newline then
    content = content:sub(1, -2)
  end
  local lines = vim.split(content, '\n', { plain = true })

  local buf = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = filetype_of(params.language)
  vim.b[buf].mcp_sidecar_draft = { id = prompt.id, server = params.server, kind = params.kind }

  vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, {
    virt_lines = header(params),
    virt_lines_above = true,
    right_gravity = false,
  })
  set_problems(buf, params.problems, #lines)

  local function close()
    if vim.api.nvim_buf_is_valid(buf) then
      vim.bo[buf].modified = false
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end

  local function answer(value)
    if prompt:settle(value) then
      -- After the write command (or the user command) has finished.
      vim.schedule(close)
    end
  end

  local function accept()
    answer({ action = 'accept', text = buffer_text(buf, final_newline) })
  end

  local function reject()
    answer({ action = 'reject' })
  end

  vim.api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      vim.bo[buf].modified = false
      accept()
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      prompt:settle(nil)
    end,
  })
  vim.api.nvim_buf_create_user_command(buf, 'McpAccept', accept, { desc = 'Accept this draft' })
  vim.api.nvim_buf_create_user_command(buf, 'McpReject', reject, { desc = 'Reject this draft' })
  prompt:on_cancel(close)

  vim.cmd(config.get().ui.split)
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  -- Show the header lines above the first line.
  vim.fn.winrestview({ topline = 1, topfill = 2 })
  return buf
end

return M
