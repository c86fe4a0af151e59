-- :Mcp skills [server]: the skills of the running servers (mcp-sidecar.listSkills) in a pick, each
-- with its server (two skills of one name are both listed, each marked); the chosen one's SKILL.md
-- or another file of its manifest opens read-only (mcp-sidecar.readSkill: the sidecar checks the
-- bytes against the manifest and refuses a mismatch), its window bar saying where it came from and
-- whether it was verified; or its URI is copied for an agent.
local async = require('mcp_sidecar.async')
local common = require('mcp_sidecar.commands.common')
local exec = require('mcp_sidecar.exec')
local resources = require('mcp_sidecar.resources')
local scratch = require('mcp_sidecar.ui.scratch')
local util = require('mcp_sidecar.util')

local M = {}

local CMD, notify = exec.CMD, util.notify

--- "same name as other skill://x/SKILL.md" for a skill another skill shares its name with.
function M.same_name(skill)
  local others = {}
  for _, ref in ipairs(type(skill.sameName) == 'table' and skill.sameName or {}) do
    if type(ref) == 'table' then
      table.insert(others, ('%s %s'):format(tostring(ref.server), tostring(ref.uri)))
    end
  end
  return #others > 0 and ('same name as ' .. table.concat(others, ', ')) or nil
end

--- A skill's line in the pick: "release-notes (docs) — Write release notes ⚠ same name as …".
function M.line(skill)
  local parts = { ('%s (%s)'):format(tostring(skill.name), skill.server) }
  if type(skill.problem) == 'string' then
    table.insert(parts, '✗ cannot be loaded: ' .. skill.problem)
  elseif type(skill.description) == 'string' and skill.description ~= '' then
    table.insert(parts, '— ' .. skill.description)
  end
  if type(skill.files) ~= 'table' and type(skill.problem) ~= 'string' then
    table.insert(parts, '· dynamic')
  end
  local clash = M.same_name(skill)
  if clash then
    table.insert(parts, '⚠ ' .. clash)
  end
  return table.concat(parts, ' ')
end

--- The part of `file` below the skill's folder (that of its SKILL.md), else its last segment.
function M.relative(skill_uri, file)
  local folder = skill_uri:match('^(.*/)') or ''
  if folder ~= '' and file:sub(1, #folder) == folder then
    return file:sub(#folder + 1)
  end
  return file:match('([^/]*)$')
end

--- Where a file came from and how far it is trusted: "docs · verified sha256:9f86d081…0f00a08".
function M.provenance(file)
  if file.verified ~= true or type(file.digest) ~= 'string' then
    return tostring(file.server) .. ' · dynamic: not verified'
  end
  local algorithm, hex = file.digest:match('^([^:]+):(.*)$')
  hex = hex or file.digest
  local short = #hex > 20 and (hex:sub(1, 8) .. '…' .. hex:sub(-7)) or hex
  return ('%s · verified %s:%s'):format(tostring(file.server), algorithm or 'sha256', short)
end

--- Copies the skill's URI to the `"` and `+` registers.
local function copy_path(skill)
  vim.fn.setreg('"', skill.uri)
  local ok = pcall(vim.fn.setreg, '+', skill.uri)
  notify(('copied to the %s: %s'):format(ok and 'clipboard' or 'unnamed register', skill.uri))
end

--- Reads a file of the skill (its SKILL.md without `file`) into `mcp://skill/<server>/<uri>`.
local function open_file(client, skill, file)
  local target = file or skill.uri
  local argument = { server = skill.server, uri = skill.uri, file = file }
  local contents, err = exec.run(client, CMD.read_skill, argument)
  if err then
    notify(
      ('%s: %s cannot be opened: %s'):format(skill.server, target, exec.error_message(err)),
      vim.log.levels.ERROR
    )
    return
  end
  contents = type(contents) == 'table' and contents or {}
  local lines
  if type(contents.text) == 'string' then
    lines = vim.split(contents.text, '\n', { plain = true })
    if #lines > 1 and lines[#lines] == '' then
      table.remove(lines)
    end
  else
    lines = { ('[%s: %s bytes that are not text]'):format(target, tostring(contents.size)) }
  end
  local name = ('mcp://skill/%s/%s'):format(skill.server, target)
  local buf = scratch.show(name, lines, {
    filetype = resources.filetype(nil, target),
    keys = {
      Y = {
        desc = "Copy the skill's path",
        fn = function()
          copy_path(skill)
        end,
      },
    },
  })
  local provenance = M.provenance(contents)
  vim.b[buf].mcp_sidecar_skill = {
    server = skill.server,
    skill = skill.uri,
    uri = target,
    digest = contents.digest,
    verified = contents.verified == true,
    provenance = provenance,
  }
  -- The window bar (this buffer in this window): where the file came from, verified or not.
  local bar = ('%s  %s  (Y copies %s)'):format(provenance, target, skill.uri):gsub('%%', '%%%%')
  vim.wo[vim.fn.bufwinid(buf)][0].winbar = bar
end

--- :Mcp skills [server]
function M.show(server)
  common.with_client(function(client)
    if not exec.has_command(client, CMD.list_skills) then
      notify('this sidecar has no skills (it is older than the Skills extension)', vim.log.levels.WARN)
      return
    end
    local rows, err = exec.run(client, CMD.list_skills, server and { server = server } or nil)
    if err then
      notify('listing the skills failed: ' .. exec.error_message(err), vim.log.levels.ERROR)
      return
    end
    rows = vim.tbl_filter(function(row)
      return type(row) == 'table' and type(row.server) == 'string' and type(row.uri) == 'string'
    end, type(rows) == 'table' and rows or {})
    if #rows == 0 then
      notify(server and (server .. ' offers no skills') or 'no running MCP server offers skills')
      return
    end
    local skill = async.select(rows, { prompt = 'MCP skills', kind = 'mcp_sidecar', format_item = M.line })
    if not skill then
      return
    end
    local actions = {}
    if type(skill.problem) ~= 'string' then
      table.insert(actions, { label = 'Open SKILL.md' })
      for _, f in ipairs(type(skill.files) == 'table' and skill.files or {}) do
        if type(f) == 'table' and type(f.uri) == 'string' and f.uri ~= skill.uri then
          table.insert(actions, { label = 'Open ' .. M.relative(skill.uri, f.uri), file = f.uri })
        end
      end
    end
    table.insert(actions, { label = 'Copy path (' .. skill.uri .. ')', copy = true })
    local action = async.select(actions, {
      prompt = ('%s (%s)%s'):format(
        tostring(skill.name),
        skill.server,
        type(skill.problem) == 'string' and (': cannot be loaded: ' .. skill.problem) or ''
      ),
      kind = 'mcp_sidecar',
      format_item = function(a)
        return a.label
      end,
    })
    if not action then
      return
    elseif action.copy then
      copy_path(skill)
    else
      open_file(client, skill, action.file)
    end
  end)
end

return M
