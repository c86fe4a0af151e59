-- Turning sidecar answers into lines for scratch buffers.
local M = {}

--- Pretty JSON (sorted keys, two-space indent) as a list of lines.
function M.json(value)
  local lines = {}
  local function emit(v, indent, prefix, suffix)
    local pad = string.rep('  ', indent)
    if type(v) == 'table' and next(v) ~= nil then
      local array = vim.islist(v)
      table.insert(lines, pad .. prefix .. (array and '[' or '{'))
      local keys = {}
      if array then
        for i = 1, #v do
          keys[i] = i
        end
      else
        for k in pairs(v) do
          table.insert(keys, k)
        end
        table.sort(keys, function(a, b)
          return tostring(a) < tostring(b)
        end)
      end
      for i, k in ipairs(keys) do
        local sep = i < #keys and ',' or ''
        local key = array and '' or (vim.json.encode(tostring(k)) .. ': ')
        emit(v[k], indent + 1, key, sep)
      end
      table.insert(lines, pad .. (array and ']' or '}') .. suffix)
    else
      table.insert(lines, pad .. prefix .. vim.json.encode(v) .. suffix)
    end
  end
  emit(value, 0, '', '')
  return lines
end

--- Compact JSON with sorted keys (stable across runs), for one-line display.
function M.inline_json(value)
  if type(value) ~= 'table' or next(value) == nil then
    return vim.json.encode(value)
  end
  local parts = {}
  if vim.islist(value) then
    for _, v in ipairs(value) do
      table.insert(parts, M.inline_json(v))
    end
    return '[' .. table.concat(parts, ',') .. ']'
  end
  local keys = vim.tbl_keys(value)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, k in ipairs(keys) do
    table.insert(parts, vim.json.encode(tostring(k)) .. ':' .. M.inline_json(value[k]))
  end
  return '{' .. table.concat(parts, ',') .. '}'
end

local function add_text(lines, text)
  for _, line in ipairs(vim.split(tostring(text), '\n', { plain = true })) do
    table.insert(lines, line)
  end
end

local function content_block(lines, block)
  local kind = block.type
  if kind == 'text' then
    add_text(lines, block.text or '')
  elseif kind == 'image' or kind == 'audio' then
    local size = type(block.data) == 'string' and math.floor(#block.data * 3 / 4) or 0
    table.insert(lines, ('[%s %s, about %d bytes]'):format(kind, tostring(block.mimeType or '?'), size))
  elseif kind == 'resource_link' then
    table.insert(lines, ('[resource link] %s <%s>'):format(tostring(block.name or ''), tostring(block.uri)))
  elseif kind == 'resource' and type(block.resource) == 'table' then
    table.insert(lines, ('[resource] <%s>'):format(tostring(block.resource.uri)))
    if type(block.resource.text) == 'string' then
      add_text(lines, block.resource.text)
    end
  else
    vim.list_extend(lines, M.json(block))
  end
end

--- A CallToolResult as Markdown lines.
function M.tool_result(server, tool, arguments, result)
  local lines = { ('# %s › %s'):format(server, tool), '' }
  if arguments ~= nil then
    table.insert(lines, 'Arguments: `' .. M.inline_json(arguments) .. '`')
    table.insert(lines, '')
  end
  if type(result) ~= 'table' then
    table.insert(lines, 'No result (the call was dismissed).')
    return lines
  end
  if result.isError == true then
    table.insert(lines, '**The tool reported an error:**')
    table.insert(lines, '')
  end
  for i, block in ipairs(type(result.content) == 'table' and result.content or {}) do
    if i > 1 then
      table.insert(lines, '')
    end
    content_block(lines, block)
  end
  if result.structuredContent ~= nil and result.structuredContent ~= vim.NIL then
    vim.list_extend(lines, { '', '## Structured content', '', '```json' })
    vim.list_extend(lines, M.json(result.structuredContent))
    table.insert(lines, '```')
  end
  return lines
end

--- A GetPromptResult as Markdown lines: a heading, the arguments, the description, then each
--- message under its role.
function M.prompt_result(server, name, arguments, result)
  local lines = { ('# %s › %s'):format(server, name), '' }
  if type(arguments) == 'table' and next(arguments) ~= nil then
    vim.list_extend(lines, { 'Arguments: `' .. M.inline_json(arguments) .. '`', '' })
  end
  if type(result) == 'table' and type(result.description) == 'string' and result.description ~= '' then
    add_text(lines, result.description)
    table.insert(lines, '')
  end
  local messages = type(result) == 'table' and type(result.messages) == 'table' and result.messages or {}
  for _, message in ipairs(messages) do
    if type(message) == 'table' then
      vim.list_extend(lines, { '## ' .. tostring(message.role or 'message'), '' })
      if type(message.content) == 'table' then
        content_block(lines, message.content)
      end
      table.insert(lines, '')
    end
  end
  if #messages == 0 then
    table.insert(lines, 'The prompt has no messages.')
  end
  return lines
end

--- The text of a GetPromptResult's messages (text and embedded text resources), blank lines
--- between messages, for inserting into a buffer.
function M.prompt_text(result)
  local lines = {}
  local messages = type(result) == 'table' and type(result.messages) == 'table' and result.messages or {}
  for _, message in ipairs(messages) do
    local content = type(message) == 'table' and message.content or nil
    local text = type(content) == 'table'
        and (content.type == 'text' and content.text or vim.tbl_get(content, 'resource', 'text'))
      or nil
    if type(text) == 'string' then
      if #lines > 0 then
        table.insert(lines, '')
      end
      add_text(lines, text)
    end
  end
  return lines
end

--- A short description of a tool's arguments: "a (number, required), b (number, required)".
function M.arguments(schema)
  local props = type(schema) == 'table' and schema.properties or nil
  if type(props) ~= 'table' or next(props) == nil then
    return nil
  end
  local required = {}
  for _, name in ipairs(type(schema.required) == 'table' and schema.required or {}) do
    required[name] = true
  end
  local names = vim.tbl_keys(props)
  table.sort(names)
  local parts = {}
  for _, name in ipairs(names) do
    local prop = props[name]
    local kind = type(prop) == 'table' and prop.type or nil
    local bits = {}
    if type(kind) == 'string' then
      table.insert(bits, kind)
    end
    if required[name] then
      table.insert(bits, 'required')
    end
    table.insert(parts, #bits > 0 and ('%s (%s)'):format(name, table.concat(bits, ', ')) or name)
  end
  return table.concat(parts, ', ')
end

--- The host of a URL ("https://auth.example.com/tenant" → "auth.example.com"), else the text.
function M.host(url)
  if type(url) ~= 'string' then
    return nil
  end
  return url:match('^%a[%w+.-]*://([^/?#]+)') or url
end

--- How long until (or since) `at` (seconds since the epoch): "in 55 min", "2 h ago".
local function relative(at, now)
  local delta = at - now
  local span = math.abs(delta)
  local text
  if span < 90 then
    text = ('%d s'):format(span)
  elseif span < 3600 then
    text = ('%d min'):format(math.floor(span / 60 + 0.5))
  elseif span < 36 * 3600 then
    text = ('%d h'):format(math.floor(span / 3600 + 0.5))
  else
    text = ('%d days'):format(math.floor(span / 86400 + 0.5))
  end
  return delta >= 0 and ('in ' .. text) or (text .. ' ago')
end

--- A listServers row's `auth` as one line, or nil when the server does not use OAuth:
--- "signed in at auth.example.com · scopes read, write · token expires in 55 min (14:32)" or
--- "not signed in (auth.example.com)". Never a token: the row carries none.
---@param auth table|nil `{ signedIn, issuer?, scopes?, expiresAt? }`
---@param now? integer seconds since the epoch (default: now)
function M.auth(auth, now)
  if type(auth) ~= 'table' then
    return nil
  end
  local host = type(auth.issuer) == 'string' and M.host(auth.issuer) or nil
  if auth.signedIn ~= true then
    return 'not signed in' .. (host and (' (' .. host .. ')') or '')
  end
  local parts = { 'signed in' .. (host and (' at ' .. host) or '') }
  if type(auth.scopes) == 'table' and #auth.scopes > 0 then
    table.insert(parts, 'scopes ' .. table.concat(vim.tbl_map(tostring, auth.scopes), ', '))
  end
  if type(auth.expiresAt) == 'number' then
    local at = math.floor(auth.expiresAt)
    local verb = at >= (now or os.time()) and 'token expires' or 'token expired'
    table.insert(parts, ('%s %s (%s)'):format(verb, relative(at, now or os.time()), os.date('%H:%M', at)))
  end
  return table.concat(parts, ' · ')
end

return M
