-- Skills end to end (the Skills extension): the real sidecar, the demo server twice (`demo` and
-- `twin` serve the same two skills, fixtures/skills-demo/) and the hostile skills server
-- (fixtures/bad/hostile_tasks.py, stdlib Python). :Mcp skills lists every skill with its server,
-- both of a name, each marked; SKILL.md and a template open read-only, verified against the
-- manifest; Copy path (and Y in the buffer) puts the skill's URI in the register; a skill that
-- cannot be loaded says why and offers no file; a file whose bytes are not its digest is refused
-- and nothing opens.
local T = require('helpers')

local fixtures = T.repo_root .. '/fixtures/skills-demo'

local function servers()
  return {
    demo = { command = T.bin, args = { 'demo-server' } },
    twin = { command = T.bin, args = { 'demo-server' } },
    hostile = {
      command = os.getenv('MCP_PYTHON') or 'python3',
      args = { T.repo_root .. '/fixtures/bad/hostile_tasks.py' },
    },
  }
end

--- A file's bytes (readfile's 'b' keeps the last line break as a last empty item).
local function read(path)
  return table.concat(vim.fn.readfile(path, 'b'), '\n')
end

--- Runs :Mcp skills, picking the skill whose line contains `skill` and then the action whose
--- label contains `action`; returns the picks.
local function skills(skill, action)
  local picks = T.script_select(function(items, _, opts)
    if opts.prompt == 'MCP skills' then
      return T.pick(skill)(items)
    end
    return T.pick(action)(items)
  end)
  vim.cmd('Mcp skills')
  return picks
end

T.test(':Mcp skills: every skill with its server; SKILL.md opens read-only, verified', function()
  T.start_sidecar({ servers = servers() })
  T.wait_running('twin')
  T.wait_running('hostile')
  local picks = skills('flight-report (demo)', 'Open SKILL.md')
  local buf = T.wait_buf('^mcp://skill/demo/skill://flight%-report/SKILL%.md$', 20000)
  local list = picks[1].lines
  T.contains(
    list,
    'flight-report (demo) — Write a short report comparing flights by price, stops and duration, using the report template. ⚠ same name as twin skill://flight-report/SKILL.md'
  )
  T.contains(list, 'flight-report (twin) — Write a short report')
  T.contains(list, '⚠ same name as demo skill://flight-report/SKILL.md')
  T.contains(list, 'trip-checklist (twin)')
  T.eq(
    { 'Open SKILL.md', 'Open templates/report.md', 'Copy path (skill://flight-report/SKILL.md)' },
    picks[2].lines
  )

  T.eq(vim.fn.readfile(fixtures .. '/flight-report/SKILL.md'), T.lines(buf))
  T.eq(false, vim.bo[buf].modifiable)
  T.eq('markdown', vim.bo[buf].filetype)
  local info = vim.b[buf].mcp_sidecar_skill
  T.eq(true, info.verified)
  local hex = vim.fn.sha256(read(fixtures .. '/flight-report/SKILL.md'))
  T.eq('sha256:' .. hex, info.digest)
  local bar = vim.wo[vim.fn.bufwinid(buf)].winbar
  T.contains(bar, 'demo · verified sha256:' .. hex:sub(1, 8) .. '…' .. hex:sub(-7))
  T.contains(bar, 'skill://flight-report/SKILL.md')
end)

T.test(':Mcp skills: another file of the manifest; Copy path', function()
  skills('flight-report (twin)', 'Open templates/report.md')
  local buf = T.wait_buf('^mcp://skill/twin/skill://flight%-report/templates/report%.md$', 20000)
  T.eq(vim.fn.readfile(fixtures .. '/flight-report/templates/report.md'), T.lines(buf))
  T.eq(true, vim.b[buf].mcp_sidecar_skill.verified)

  vim.fn.setreg('"', '')
  skills('trip-checklist (demo)', 'Copy path')
  T.wait(function()
    return vim.fn.getreg('"') == 'skill://trip-checklist/SKILL.md'
  end, 'the path in the unnamed register')
  -- Y in a skill's buffer copies its path too.
  vim.fn.setreg('"', '')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
  vim.api.nvim_feedkeys('Y', 'mx', false)
  T.eq('skill://flight-report/SKILL.md', vim.fn.getreg('"'))
end)

T.test(
  'a skill that cannot be loaded says why and offers only its path; one server, two of a name',
  function()
    local picks = skills('huge-manifest (hostile)', 'Copy path')
    T.wait(function()
      return #picks == 2
    end, 'the actions')
    T.contains(picks[1].lines, 'huge-manifest (hostile) ✗ cannot be loaded: ')
    T.contains(picks[1].lines, 'dotdot (hostile) ✗ cannot be loaded: ')
    T.contains(
      picks[1].lines,
      'dup (hostile) — The a skill named dup. ⚠ same name as hostile skill://b/dup/SKILL.md'
    )
    T.contains(
      picks[1].lines,
      'dup (hostile) — The b skill named dup. ⚠ same name as hostile skill://a/dup/SKILL.md'
    )
    T.eq({ 'Copy path (skill://huge-manifest/SKILL.md)' }, picks[2].lines)
    T.contains(picks[2].opts.prompt, 'cannot be loaded')
  end
)

T.test('a file whose bytes are not its digest is refused; nothing opens', function()
  skills('bad-digest (hostile)', 'Open SKILL.md')
  local n = T.wait_notification('hostile: skill://bad-digest/SKILL.md cannot be opened: ', 20000)
  T.eq(vim.log.levels.ERROR, n.level)
  T.contains(n.message, '[refused]')
  T.eq(nil, T.find_buf('^mcp://skill/hostile/'))
end)
