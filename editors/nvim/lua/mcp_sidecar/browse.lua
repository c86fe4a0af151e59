-- The resource and prompt flows of :Mcp resources and :Mcp prompt: picks, the values asked
-- (with the server's completion suggestions), then resources.lua or a Markdown buffer. The
-- commands go through an `api` (server_api in commands/resources.lua). Inside async.run() only.
local ask = require('mcp_sidecar.ask')
local async = require('mcp_sidecar.async')
local format = require('mcp_sidecar.format')
local resources = require('mcp_sidecar.resources')
local scratch = require('mcp_sidecar.ui.scratch')
local state = require('mcp_sidecar.state')
local util = require('mcp_sidecar.util')

local M = {}

local notify, is_null = util.notify, util.is_null

local result_count = 0

--- Asks the values of `names` in order (`described[name]`: { description?, required? }); the
--- server's suggestions come from `ref`, with the earlier answers as context. Returns the
--- answers (empty optional ones left out), or nil when the person dismissed a question.
local function ask_values(api, server, ref, title, names, described)
  local values = {}
  for _, name in ipairs(names) do
    local about = described[name] or {}
    local value = ask.value({
      title = title,
      name = name,
      description = about.description,
      required = about.required,
      suggest = function(typed)
        return api.complete(server, ref, name, typed, values)
      end,
    })
    if value == nil then
      return nil
    end
    if value ~= '' then
      values[name] = value
    end
  end
  return values
end

local function rows_of(result)
  return type(result) == 'table' and vim.islist(result) and result or {}
end

--- A template's variables (as the sidecar reads them) asked with the server's suggestions, then
--- the URI the sidecar expands them to. Any variable may be left empty: it is then undefined,
--- which RFC 6570 allows (the template says how it expands). Nil when dismissed or refused.
local function expand_template(api, row)
  local function refused(err)
    notify(
      ('%s: cannot use the template %s: %s'):format(
        row.server,
        tostring(row.uriTemplate),
        api.error_message(err)
      ),
      vim.log.levels.ERROR
    )
  end
  local parsed, err = api.expand_template(row.uriTemplate)
  if err then
    refused(err)
    return nil
  end
  local names = type(parsed) == 'table' and type(parsed.variables) == 'table' and parsed.variables or {}
  local ref = { type = 'ref/resource', uri = row.uriTemplate }
  local values = ask_values(api, row.server, ref, ('%s: %s'):format(row.server, row.name), names, {})
  if not values then
    return nil
  end
  local expanded, expand_err = api.expand_template(row.uriTemplate, values)
  if expand_err then
    refused(expand_err)
    return nil
  end
  return expanded.uri
end

--- :Mcp resources: a pick over the resources and templates of `server` (or of every running
--- server), then the chosen one read (a template's variables asked first).
function M.resources(api, server)
  local listed, err = api.list_resources(server)
  local templates, terr = api.list_templates(server)
  if err or terr then
    notify('listing resources failed: ' .. api.error_message(err or terr), vim.log.levels.ERROR)
    return
  end
  local items = vim.list_extend(vim.deepcopy(rows_of(listed)), rows_of(templates))
  state.set_names(api.client_id, 'resources', rows_of(listed), server, 'uri')
  if #items == 0 then
    notify(
      ('%s no resources (a server without the resources capability has none)'):format(
        server and (server .. ' has') or 'the running servers have'
      )
    )
    return
  end
  local row = async.select(items, {
    prompt = server and ('Read which resource of %s?'):format(server) or 'Read which MCP resource?',
    kind = 'mcp_sidecar',
    format_item = function(r)
      local title = not is_null(r.title) and r.title or util.shown_name(r)
      local mime = not is_null(r.mimeType) and (' (' .. r.mimeType .. ')') or ''
      if r.uriTemplate then
        return ('%s › %s [template] — %s%s'):format(r.server, title, r.uriTemplate, mime)
      end
      return ('%s › %s — %s%s'):format(r.server, title, r.uri, mime)
    end,
  })
  if not row then
    return
  end
  local uri = row.uri
  if row.uriTemplate then
    uri = expand_template(api, row)
    if not uri then
      notify('reading cancelled')
      return
    end
  end
  resources.open(api, row.server, uri)
end

--- Inserts `lines` at the cursor of window `win` (as P would), or says why it cannot.
local function insert_at(win, lines)
  local buf = vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) or nil
  if not buf or not vim.bo[buf].modifiable or vim.bo[buf].readonly then
    notify('the window the prompt was run from cannot take the text', vim.log.levels.WARN)
    return false
  end
  vim.api.nvim_win_call(win, function()
    vim.api.nvim_put(lines, 'c', false, true)
  end)
  return true
end

--- :Mcp[!] prompt: the prompt `name` of `server` (picked when not given) with its arguments
--- asked, then its messages in a Markdown buffer, or their text inserted at the cursor of window
--- `insert_into` when given.
function M.prompt(api, server, name, insert_into)
  local rows, err = api.list_prompts(server)
  if err then
    notify('listing prompts failed: ' .. api.error_message(err), vim.log.levels.ERROR)
    return
  end
  rows = rows_of(rows)
  state.set_names(api.client_id, 'prompts', rows, server, 'name')
  local prompt
  for _, row in ipairs(rows) do
    if name and row.name == name then
      prompt = row
    end
  end
  if name and not prompt then
    notify(
      ('%s has no prompt "%s" (a server without the prompts capability has none)'):format(
        tostring(server),
        name
      ),
      vim.log.levels.ERROR
    )
    return
  elseif not prompt then
    if #rows == 0 then
      notify(('%s no prompts'):format(server and (server .. ' has') or 'the running servers have'))
      return
    end
    prompt = async.select(rows, {
      prompt = 'Run which MCP prompt?',
      kind = 'mcp_sidecar',
      format_item = function(r)
        local desc = (type(r.description) == 'string' and r.description ~= '') and (' — ' .. r.description)
          or ''
        return ('%s › %s%s'):format(r.server, util.shown_name(r), desc)
      end,
    })
    if not prompt then
      return
    end
  end
  local names, described = {}, {}
  for _, arg in ipairs(type(prompt.arguments) == 'table' and prompt.arguments or {}) do
    table.insert(names, arg.name)
    described[arg.name] = {
      required = arg.required == true,
      description = not is_null(arg.description) and arg.description or nil,
    }
  end
  local ref = { type = 'ref/prompt', name = prompt.name }
  local values =
    ask_values(api, prompt.server, ref, ('%s: %s'):format(prompt.server, prompt.name), names, described)
  if not values then
    notify('prompt cancelled')
    return
  end
  local arguments = next(values) ~= nil and values or nil
  local result, get_err = api.get_prompt(prompt.server, prompt.name, arguments)
  if api.is_cancelled(get_err) then
    notify('prompt cancelled')
    return
  elseif get_err then
    notify(
      ('%s › %s failed: %s'):format(prompt.server, prompt.name, api.error_message(get_err)),
      vim.log.levels.ERROR
    )
    return
  end
  if insert_into and insert_at(insert_into, format.prompt_text(result)) then
    return
  end
  result_count = result_count + 1
  scratch.show(
    ('mcp://prompt/%s/%s/%d'):format(prompt.server, prompt.name, result_count),
    format.prompt_result(prompt.server, prompt.name, arguments, result),
    { filetype = 'markdown', reuse = '^mcp://prompt/' }
  )
end

return M
