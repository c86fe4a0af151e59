-- MCP resources in buffers: `mcp://resource/<server>/<uri>` (nofile, read-only), the filetype
-- from the mimeType, binary contents described and offered for saving, subscribed while the
-- buffer exists and read again on `mcp-sidecar/resourceUpdated`. RFC 6570 URI templates are the
-- sidecar's to parse and expand (`expand_template` of the api: mcp-sidecar.expandUriTemplate).
-- The commands themselves are sent through an `api` (server_api in commands/resources.lua).
local async = require('mcp_sidecar.async')
local scratch = require('mcp_sidecar.ui.scratch')

local M = {}

-- Filetypes ---------------------------------------------------------------------------------------

local by_mime = {
  ['text/markdown'] = 'markdown',
  ['text/x-markdown'] = 'markdown',
  ['application/json'] = 'json',
  ['text/json'] = 'json',
  ['application/x-ndjson'] = 'json',
  ['text/html'] = 'html',
  ['text/css'] = 'css',
  ['text/javascript'] = 'javascript',
  ['application/javascript'] = 'javascript',
  ['application/typescript'] = 'typescript',
  ['text/x-python'] = 'python',
  ['text/x-rust'] = 'rust',
  ['text/x-lua'] = 'lua',
  ['text/x-go'] = 'go',
  ['text/x-c'] = 'c',
  ['text/x-shellscript'] = 'sh',
  ['application/x-sh'] = 'sh',
  ['application/xml'] = 'xml',
  ['text/xml'] = 'xml',
  ['application/yaml'] = 'yaml',
  ['application/x-yaml'] = 'yaml',
  ['text/yaml'] = 'yaml',
  ['application/toml'] = 'toml',
  ['text/csv'] = 'csv',
  ['application/sql'] = 'sql',
  ['text/x-diff'] = 'diff',
}

--- The filetype for a resource: from its mimeType (a table, then `+json`/`+xml` suffixes), else
--- from the last segment of its URI as a file name (vim.filetype.match), else 'text' for
--- text/plain, else none ('').
function M.filetype(mime, uri)
  mime = type(mime) == 'string' and mime:lower():gsub(';.*$', ''):gsub('%s', '') or nil
  if mime and by_mime[mime] then
    return by_mime[mime]
  end
  if mime and mime:match('%+json$') then
    return 'json'
  elseif mime and mime:match('%+xml$') then
    return 'xml'
  end
  local name = type(uri) == 'string' and uri:gsub('[?#].*$', ''):match('([^/]+)$') or nil
  if name then
    local ok, ft = pcall(vim.filetype.match, { filename = vim.uri_decode(name) })
    if ok and ft then
      return ft
    end
  end
  return mime == 'text/plain' and 'text' or ''
end

-- Resource buffers --------------------------------------------------------------------------------

---@class mcp_sidecar.OpenResource
---@field api table the commands (server_api in commands/resources.lua)
---@field server string
---@field uri string
---@field client_id integer
---@field reads integer how many times it was read
---@field reading boolean
---@field again boolean an update came while reading
---@field blobs table[] the binary contents of the last read: { bytes, mimeType, uri }

---@type table<integer, mcp_sidecar.OpenResource>
local open = {}

function M.buffer_name(server, uri)
  return ('mcp://resource/%s/%s'):format(server, uri)
end

local util = require('mcp_sidecar.util')
local notify = util.notify

local function text_lines(text)
  local lines = vim.split(text, '\n', { plain = true })
  if #lines > 1 and lines[#lines] == '' then
    table.remove(lines)
  end
  return vim.tbl_map(function(line)
    return (line:gsub('\r$', ''))
  end, lines)
end

--- A ReadResourceResult as buffer lines, the binary contents, and the mimeType of the first.
function M.render(result)
  local contents = type(result) == 'table' and type(result.contents) == 'table' and result.contents or {}
  local lines, blobs, mime = {}, {}, nil
  for i, item in ipairs(contents) do
    if type(item) == 'table' then
      mime = mime or (type(item.mimeType) == 'string' and item.mimeType or nil)
      if #contents > 1 then
        if i > 1 then
          table.insert(lines, '')
        end
        table.insert(lines, ('--- %s (%s)'):format(tostring(item.uri), tostring(item.mimeType or '?')))
      end
      if type(item.text) == 'string' then
        vim.list_extend(lines, text_lines(item.text))
      elseif type(item.blob) == 'string' then
        local ok, bytes = pcall(vim.base64.decode, item.blob)
        if ok then
          table.insert(blobs, { bytes = bytes, mimeType = item.mimeType, uri = item.uri })
          vim.list_extend(lines, {
            ('Binary content: %d bytes of %s.'):format(#bytes, tostring(item.mimeType or 'unknown type')),
            'Press S to write the bytes to a file.',
          })
        else
          table.insert(lines, 'Binary content that is not valid base64.')
        end
      end
    end
  end
  if #contents == 0 then
    table.insert(lines, 'The server returned no contents.')
  end
  return lines, blobs, mime
end

--- Writes `blob.bytes` to a file the person names (asked; an existing file needs a yes).
local function save_blob(blob)
  local default = util.save_name(blob.uri)
  local path = async.input({ prompt = 'Write the bytes to: ', default = default, completion = 'file' })
  if path == nil or vim.trim(path) == '' then
    return
  end
  path = vim.fn.fnamemodify(vim.fs.normalize(vim.trim(path)), ':p')
  if vim.uv.fs_stat(path) then
    local choice = async.select({ 'Overwrite', 'Cancel' }, { prompt = path .. ' exists' })
    if choice ~= 'Overwrite' then
      return
    end
  end
  local f, err = io.open(path, 'wb')
  if not f then
    notify('could not write ' .. path .. ': ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  f:write(blob.bytes)
  f:close()
  notify(('wrote %d bytes to %s'):format(#blob.bytes, path))
end

--- Offers to save each binary content of buffer `buf` (S in the buffer; asked after opening).
function M.save(buf, ask_first)
  local entry = open[buf]
  if not entry or #entry.blobs == 0 then
    notify('this resource has no binary content')
    return
  end
  async.run(function()
    for _, blob in ipairs(entry.blobs) do
      if ask_first then
        local choice = async.select({ ('Write the %d bytes to a file…'):format(#blob.bytes), 'Not now' }, {
          prompt = ('%s is binary (%s)'):format(
            tostring(blob.uri),
            tostring(blob.mimeType or 'unknown type')
          ),
          kind = 'mcp_sidecar',
        })
        if choice == nil or choice == 'Not now' then
          return
        end
      end
      save_blob(blob)
    end
  end)
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.bo[buf].readonly = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.bo[buf].modified = false
end

local function subscribe(buf, entry)
  local _, err = entry.api.subscribe(entry.server, entry.uri)
  if not vim.api.nvim_buf_is_valid(buf) or open[buf] ~= entry then
    -- Wiped meanwhile: the wipeout did not know about this subscription.
    if not err then
      entry.api.unsubscribe(entry.server, entry.uri)
    end
    return
  end
  vim.b[buf].mcp_sidecar_resource = vim.tbl_extend('force', vim.b[buf].mcp_sidecar_resource, {
    subscribed = err == nil,
    subscribe_error = err and tostring(err.message or err) or nil,
  })
end

--- Reads `uri` of `server` into its buffer (created on the first good read) and subscribes.
--- Inside async.run(). Returns the buffer, or nil after telling why.
function M.open(api, server, uri)
  local result, err = api.read(server, uri)
  if err then
    notify(('reading %s of %s failed: %s'):format(uri, server, api.error_message(err)), vim.log.levels.ERROR)
    return nil
  end
  local lines, blobs, mime = M.render(result)
  local existing
  for b, e in pairs(open) do
    if
      e.server == server
      and e.uri == uri
      and e.client_id == api.client_id
      and vim.api.nvim_buf_is_valid(b)
    then
      existing = b
    end
  end
  local buf = scratch.show(M.buffer_name(server, uri), lines, { reuse = '^mcp://resource/' })
  vim.bo[buf].readonly = true
  local ft = M.filetype(mime, uri)
  if vim.bo[buf].filetype ~= ft then
    vim.bo[buf].filetype = ft
  end
  local entry = open[buf]
  if entry and existing == buf then
    entry.reads = entry.reads + 1
    entry.blobs = blobs
  else
    entry = { api = api, server = server, uri = uri, client_id = api.client_id, reads = 1, blobs = blobs }
    open[buf] = entry
    vim.keymap.set('n', 'S', function()
      M.save(buf, false)
    end, { buffer = buf, nowait = true, desc = 'Write the binary content to a file' })
    vim.keymap.set('n', 'R', function()
      M.refresh(buf)
    end, { buffer = buf, nowait = true, desc = 'Read the resource again' })
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        local gone = open[buf]
        open[buf] = nil
        if gone and vim.tbl_get(vim.b[buf] or {}, 'mcp_sidecar_resource', 'subscribed') then
          async.run(function()
            gone.api.unsubscribe(gone.server, gone.uri)
          end)
        end
      end,
    })
  end
  vim.b[buf].mcp_sidecar_resource = {
    server = server,
    uri = uri,
    mimeType = mime,
    reads = entry.reads,
    subscribed = vim.tbl_get(vim.b[buf].mcp_sidecar_resource or {}, 'subscribed'),
  }
  if entry.reads == 1 then
    subscribe(buf, entry)
    if #blobs > 0 then
      M.save(buf, true)
    end
  end
  return buf
end

--- Reads the resource of buffer `buf` again (an update, or R); updates that arrive meanwhile
--- are folded into one more read.
function M.refresh(buf)
  local entry = open[buf]
  if not entry then
    return
  end
  if entry.reading then
    entry.again = true
    return
  end
  entry.reading = true
  async.run(function()
    repeat
      entry.again = false
      local result, err = entry.api.read(entry.server, entry.uri)
      if not vim.api.nvim_buf_is_valid(buf) or open[buf] ~= entry then
        return
      end
      if err then
        notify(
          ('reading %s of %s again failed: %s'):format(entry.uri, entry.server, entry.api.error_message(err)),
          vim.log.levels.WARN
        )
      else
        local lines, blobs = M.render(result)
        entry.blobs = blobs
        set_lines(buf, lines)
        entry.reads = entry.reads + 1
        local state = vim.b[buf].mcp_sidecar_resource
        state.reads = entry.reads
        vim.b[buf].mcp_sidecar_resource = state
      end
    until not entry.again
    entry.reading = false
  end)
end

--- `mcp-sidecar/resourceUpdated` from sidecar `client_id`: reads the open buffers of that
--- resource again.
function M.updated(client_id, params)
  if type(params) ~= 'table' or type(params.server) ~= 'string' or type(params.uri) ~= 'string' then
    return
  end
  for buf, entry in pairs(open) do
    if entry.client_id == client_id and entry.server == params.server and entry.uri == params.uri then
      M.refresh(buf)
    end
  end
end

--- The resource buffers of a sidecar that stopped: they stay, without a subscription.
function M.forget(client_id)
  for buf, entry in pairs(open) do
    if entry.client_id == client_id then
      open[buf] = nil
      if vim.api.nvim_buf_is_valid(buf) and vim.b[buf].mcp_sidecar_resource then
        local state = vim.b[buf].mcp_sidecar_resource
        state.subscribed = false
        vim.b[buf].mcp_sidecar_resource = state
      end
    end
  end
end

return M
