-- `mcp-sidecar/inputBox` → vim.ui.input (or a hidden inputsecret() entry for passwords).
-- Result: { value = string } | { back = true } | { skip = true } | nil (dismissed).
local text = require('mcp_sidecar.ui.text')
local track = require('mcp_sidecar.ui.track')

local M = {}

--- After Escape: offer Back / Skip when the step allows them, else answer dismissed.
local function dismissed(params, prompt)
  if prompt.settled then
    return
  end
  if not (params.canGoBack or params.canSkip) then
    prompt:settle(nil)
    return
  end
  local choices = {}
  if params.canGoBack then
    table.insert(choices, { label = '← Back to the previous step', answer = { back = true } })
  end
  if params.canSkip then
    table.insert(choices, { label = 'Skip this field', answer = { skip = true } })
  end
  table.insert(choices, { label = 'Cancel' })
  -- Not from inside the input's callback: some UIs are still closing their window then.
  vim.schedule(function()
    if prompt.settled then
      return
    end
    local what = text.title(params)
    if type(params.prompt) == 'string' and params.prompt ~= '' then
      what = what .. ' › ' .. params.prompt
    end
    track.call(prompt, function()
      vim.ui.select(choices, {
        prompt = what .. ' — no value given',
        kind = 'mcp_sidecar',
        format_item = function(choice)
          return choice.label
        end,
      }, function(choice)
        prompt:settle(choice and choice.answer or nil)
      end)
    end)
  end)
end

local ESC, CTRL_C = vim.keycode('<Esc>'), vim.keycode('<C-c>')

--- Passwords: inputsecret() shows `*` for each character. It returns '' when abandoned, so the
--- keys are watched to tell Escape from an empty answer.
local function secret(params, prompt)
  local ns = vim.api.nvim_create_namespace('mcp_sidecar.secret')
  local last
  vim.on_key(function(key, typed)
    last = (typed and typed ~= '') and typed or key
  end, ns)
  local ok, value
  track.call(prompt, function()
    ok, value = pcall(vim.fn.inputsecret, text.input_prompt(params), params.value or '')
  end)
  vim.on_key(nil, ns)
  if prompt.settled then
    return
  end
  if not ok or (value == '' and (last == ESC or last == CTRL_C)) then
    dismissed(params, prompt)
    return
  end
  prompt:settle({ value = value })
end

---@param params table inputBox params
---@param prompt mcp_sidecar.Prompt
function M.open(params, prompt)
  if params.password then
    secret(params, prompt)
    return
  end
  track.call(prompt, function()
    vim.ui.input({
      prompt = text.input_prompt(params),
      default = params.value,
      kind = 'mcp_sidecar',
    }, function(value)
      if value == nil then
        dismissed(params, prompt)
      else
        prompt:settle({ value = value })
      end
    end)
  end)
end

return M
