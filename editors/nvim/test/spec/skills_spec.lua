-- Skills end to end (the Skills extension): the real sidecar and FastMCP's skills fixture
-- (fixtures/python/fastmcp_skills_server.py on fixtures/skills/, MCP_PYTHON from
-- scripts/install-peers.sh), twice: `docs` on a copy of the folder with one more skill whose name
-- is not its folder's, `more` on the folder itself. :Mcp skills lists every skill with its
-- server, both of a name, each marked; SKILL.md and a template open read-only, verified against
-- the manifest; Copy path puts the skill's URI in the register; a skill that cannot be loaded
-- says why and offers no file.
local T = require('helpers')

local fixtures = T.repo_root .. '/fixtures/skills'

--- A copy of fixtures/skills plus `misnamed/SKILL.md`, whose frontmatter names another skill.
local function skills_root()
  local root = vim.fn.tempname()
  vim.fn.mkdir(root, 'p')
  vim.system({ 'cp', '-r', fixtures .. '/release-notes', fixtures .. '/review-checklist', root }):wait(10000)
  vim.fn.mkdir(root .. '/misnamed', 'p')
  vim.fn.writefile(
    { '---', 'name: another-name', 'description: Its name is not its folder.', '---', '', 'x' },
    root .. '/misnamed/SKILL.md'
  )
  return root
end

local function server(root)
  local python = os.getenv('MCP_PYTHON')
  T.ok(
    python and vim.fn.executable(python) == 1,
    'MCP_PYTHON must name the peers venv python (bash scripts/install-peers.sh; run.sh sources .cache/peers/env.sh)'
  )
  local args = { T.repo_root .. '/fixtures/python/fastmcp_skills_server.py' }
  if root then
    vim.list_extend(args, { '--root', root })
  end
  return { command = python, args = args }
end

--- A file's bytes (readfile's 'b' keeps the last line break as a last empty item).
local function read(path)
  return table.concat(vim.fn.readfile(path, 'b'), '\n')
end

--- Runs :Mcp skills, picking the skill whose line contains `skill` and then the action whose
--- label contains `action`; returns the two picks.
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
  T.start_sidecar({ servers = { docs = server(skills_root()), more = server() } })
  T.wait_running('docs', 30000)
  T.wait_running('more', 30000)
  local picks = skills('release-notes (docs)', 'Open SKILL.md')
  local buf = T.wait_buf('^mcp://skill/docs/skill://release%-notes/SKILL%.md$', 20000)
  local list = picks[1].lines
  T.contains(
    list,
    'release-notes (docs) — Write release notes for a version from the merged changes, using the notes template. ⚠ same name as more skill://release-notes/SKILL.md'
  )
  T.contains(list, 'release-notes (more) — Write release notes')
  T.contains(list, '⚠ same name as docs skill://release-notes/SKILL.md')
  T.contains(list, 'review-checklist (more)')
  T.eq(
    { 'Open SKILL.md', 'Open templates/notes.md', 'Copy path (skill://release-notes/SKILL.md)' },
    picks[2].lines
  )

  T.eq(vim.fn.readfile(fixtures .. '/release-notes/SKILL.md'), T.lines(buf))
  T.eq(false, vim.bo[buf].modifiable)
  T.eq('markdown', vim.bo[buf].filetype)
  local info = vim.b[buf].mcp_sidecar_skill
  T.eq(true, info.verified)
  local hex = vim.fn.sha256(read(fixtures .. '/release-notes/SKILL.md'))
  T.eq('sha256:' .. hex, info.digest)
  local bar = vim.wo[vim.fn.bufwinid(buf)].winbar
  T.contains(bar, 'docs · verified sha256:' .. hex:sub(1, 8) .. '…' .. hex:sub(-7))
  T.contains(bar, 'skill://release-notes/SKILL.md')
end)

T.test(':Mcp skills: another file of the manifest; Copy path', function()
  skills('release-notes (more)', 'Open templates/notes.md')
  local buf = T.wait_buf('^mcp://skill/more/skill://release%-notes/templates/notes%.md$', 20000)
  T.eq(vim.fn.readfile(fixtures .. '/release-notes/templates/notes.md'), T.lines(buf))
  T.eq(true, vim.b[buf].mcp_sidecar_skill.verified)

  vim.fn.setreg('"', '')
  skills('review-checklist (docs)', 'Copy path')
  T.wait(function()
    return vim.fn.getreg('"') == 'skill://review-checklist/SKILL.md'
  end, 'the path in the unnamed register')
  -- Y in a skill's buffer copies its path too.
  vim.fn.setreg('"', '')
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
  vim.api.nvim_feedkeys('Y', 'mx', false)
  T.eq('skill://release-notes/SKILL.md', vim.fn.getreg('"'))
end)

T.test('a skill that cannot be loaded says why and offers only its path', function()
  local picks = skills('misnamed', 'Copy path')
  T.wait(function()
    return #picks == 2
  end, 'the actions')
  T.contains(picks[1].lines, '✗ cannot be loaded: ')
  T.eq(1, #picks[2].lines)
  T.contains(picks[2].opts.prompt, 'cannot be loaded')
end)
