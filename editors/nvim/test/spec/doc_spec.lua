-- The help file: `:help mcp-sidecar` opens wherever the plugin is installed the documented ways,
-- from the committed doc/tags (no `:helptags` run by the person or the test), which is what
-- `:helptags` builds; every |reference| resolves; every option and subcommand is documented.
local T = require('helpers')

local doc = T.plugin_root .. '/doc'
local regenerate = "nvim --clean --headless -c 'helptags editors/nvim/doc' -c q"

T.test('doc/tags is committed and is what :helptags builds from the help file', function()
  local tracked = vim
    .system({ 'git', '-C', T.repo_root, 'ls-files', '--error-unmatch', 'editors/nvim/doc/tags' }, { text = true })
    :wait(10000)
  T.eq(0, tracked.code, 'editors/nvim/doc/tags is not in git: ' .. (tracked.stderr or ''))
  local dir = vim.fn.tempname() .. '/doc'
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile(vim.fn.readfile(doc .. '/mcp-sidecar.txt', 'b'), dir .. '/mcp-sidecar.txt', 'b')
  vim.cmd('helptags ' .. vim.fn.fnameescape(dir))
  T.eq(
    vim.fn.readfile(dir .. '/tags', 'b'),
    vim.fn.readfile(doc .. '/tags', 'b'),
    'editors/nvim/doc/tags is stale: run ' .. regenerate
  )
end)

--- Starts a Neovim of its own as a person's would be set up (`args`: its --cmd/-c arguments),
--- runs `:help mcp-sidecar` there and returns what opened: the buffer's type and name, and the
--- errors Neovim printed.
local function help_in(args)
  local argv = { vim.v.progpath, '--clean', '--headless' }
  vim.list_extend(argv, args)
  vim.list_extend(argv, {
    '-c',
    'help mcp-sidecar',
    '-c',
    'lua io.stdout:write(vim.bo.buftype .. "|" .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ":t"))',
    '-c',
    'qall!',
  })
  local done = vim.system(argv, { text = true, stdin = false }):wait(20000)
  return done.stdout, done.stderr
end

--- A plugin directory holding the repository, as a clone would: <packpath>/pack/mcp/<kind>/mcp-sidecar.
local function packpath(kind)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. '/pack/mcp/' .. kind, 'p')
  assert(vim.uv.fs_symlink(T.repo_root, dir .. '/pack/mcp/' .. kind .. '/mcp-sidecar'))
  return dir
end

local setups = {
  -- lazy.nvim and packer put the repository's root on 'runtimepath' and load its plugin/ files.
  {
    'a plugin manager (the repository on runtimepath)',
    { '--cmd', 'set runtimepath^=' .. vim.fn.fnameescape(T.repo_root) },
  },
  {
    '`:packadd mcp-sidecar` (cloned into pack/*/opt)',
    { '--cmd', 'set packpath^=' .. vim.fn.fnameescape(packpath('opt')), '-c', 'packadd mcp-sidecar' },
  },
  {
    'a clone in pack/*/start',
    { '--cmd', 'set packpath^=' .. vim.fn.fnameescape(packpath('start')) },
  },
  -- editors/nvim/scripts/try.sh
  {
    'the try script (editors/nvim on runtimepath)',
    { '--cmd', 'lua vim.opt.rtp:prepend(' .. vim.inspect(T.plugin_root) .. ')' },
  },
}

for _, setup in ipairs(setups) do
  T.test(':help mcp-sidecar opens after ' .. setup[1], function()
    local out, err = help_in(setup[2])
    T.eq('help|mcp-sidecar.txt', out, 'stderr: ' .. err)
  end)
end

T.test('every |reference| in the help file names a tag', function()
  local missing = {}
  for _, line in ipairs(vim.fn.readfile(doc .. '/mcp-sidecar.txt')) do
    for ref in line:gmatch('|([^|%s]+)|') do
      if not pcall(vim.cmd.help, ref) then
        table.insert(missing, ref)
      end
      pcall(vim.cmd.helpclose)
    end
  end
  T.eq({}, missing)
end)

T.test('every option and subcommand is documented', function()
  local text = table.concat(vim.fn.readfile(doc .. '/mcp-sidecar.txt'), '\n')
  for key in pairs(require('mcp_sidecar.config').defaults) do
    if key ~= 'ui' then
      T.contains(text, '*mcp-sidecar-option-' .. key .. '*')
    end
  end
  for sub in pairs(require('mcp_sidecar.commands').subcommands) do
    T.contains(text, '*:Mcp-' .. sub .. '*')
  end
end)
