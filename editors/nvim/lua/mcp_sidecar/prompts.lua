-- Pending prompts: the bridge between a sidecar request and the UI that answers it.
--
-- Neovim runs a server→editor request handler in a coroutine and answers with its return value.
-- The UI must not run inside that coroutine (vim.ui replacements may misbehave there), so the UI is
-- scheduled on the main loop and the handler yields until the prompt is settled: by the UI's
-- callback, or by `mcp-sidecar/cancelPrompt`, which closes what is open and answers null.
local M = {}

---@type table<string, mcp_sidecar.Prompt>
local pending = {}

---@class mcp_sidecar.Prompt
---@field id string
---@field client_id integer
---@field params table
---@field settled boolean
---@field private _closers function[]
---@field private _resolve fun(value: any)
local Prompt = {}
Prompt.__index = Prompt

local function key_of(client_id, id)
  return tostring(client_id) .. '\0' .. tostring(id)
end

--- Registers `fn` to close this prompt's UI when the sidecar cancels it.
function Prompt:on_cancel(fn)
  table.insert(self._closers, fn)
end

--- Answers the request (nil = null). Later calls are ignored. Returns true if this call answered.
function Prompt:settle(value)
  if self.settled then
    return false
  end
  self.settled = true
  if pending[self.key] == self then
    pending[self.key] = nil
  end
  self._resolve(value)
  return true
end

--- Closes the UI and answers null.
function Prompt:cancel()
  if self.settled then
    return
  end
  self:settle(nil)
  for _, close in ipairs(self._closers) do
    local ok, err = pcall(close)
    if not ok then
      vim.notify('mcp-sidecar: closing a prompt failed: ' .. tostring(err), vim.log.levels.DEBUG)
    end
  end
end

--- Runs inside an LSP request handler: opens the UI with `open(prompt)` on the main loop, yields
--- until the prompt is settled and returns the answer (`vim.NIL` for null).
---@param ctx lsp.HandlerContext
---@param params table the request params (with `id`)
---@param open fun(prompt: mcp_sidecar.Prompt)
function M.run(ctx, params, open)
  local co = coroutine.running()
  assert(co, 'mcp-sidecar: prompt handlers must run in a coroutine (as Neovim runs LSP handlers)')
  local id = params.id ~= nil and tostring(params.id) or ''
  local key = key_of(ctx.client_id, id)
  local answer, finished, waiting = nil, false, false
  local prompt = setmetatable({
    id = id,
    key = key,
    client_id = ctx.client_id,
    params = params,
    settled = false,
    _closers = {},
  }, Prompt)
  prompt._resolve = function(value)
    answer, finished = value, true
    if waiting then
      waiting = false
      local ok, err = coroutine.resume(co)
      if not ok then
        vim.schedule(function()
          vim.notify('mcp-sidecar: answering a prompt failed: ' .. tostring(err), vim.log.levels.ERROR)
        end)
      end
    end
  end
  local previous = pending[key]
  if previous then
    previous:cancel()
  end
  pending[key] = prompt
  vim.schedule(function()
    if prompt.settled then
      return
    end
    local ok, err = pcall(open, prompt)
    if not ok then
      vim.notify('mcp-sidecar: could not show the prompt: ' .. tostring(err), vim.log.levels.ERROR)
      prompt:settle(nil)
    end
  end)
  if not finished then
    waiting = true
    coroutine.yield()
  end
  if answer == nil then
    return vim.NIL
  end
  return answer
end

--- `mcp-sidecar/cancelPrompt`: closes the prompt and answers null. Unknown ids are ignored.
function M.cancel(client_id, id)
  local prompt = pending[key_of(client_id, id)]
  if prompt then
    prompt:cancel()
    return true
  end
  return false
end

--- Cancels every prompt of a client (it exited).
function M.cancel_all(client_id)
  for _, prompt in pairs(pending) do
    if prompt.client_id == client_id then
      prompt:cancel()
    end
  end
end

--- Runs `fn()` on the main loop, outside the calling coroutine, and returns what it returned.
function M.outside(fn)
  local co = coroutine.running()
  assert(co, 'mcp-sidecar: prompts.outside() must run in a coroutine')
  local results, finished, waiting = nil, false, false
  vim.schedule(function()
    results = { pcall(fn) }
    finished = true
    if waiting then
      local ok, err = coroutine.resume(co)
      if not ok then
        vim.notify('mcp-sidecar: ' .. tostring(err), vim.log.levels.ERROR)
      end
    end
  end)
  if not finished then
    waiting = true
    coroutine.yield()
  end
  if not results[1] then
    error(results[2], 0)
  end
  return unpack(results, 2, table.maxn(results))
end

--- The open prompts (for tests and :checkhealth): list of { client_id, id, params }.
function M.list()
  local out = {}
  for _, prompt in pairs(pending) do
    table.insert(out, { client_id = prompt.client_id, id = prompt.id, params = prompt.params })
  end
  return out
end

return M
