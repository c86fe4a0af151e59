-- Installed as docs/neovim.md says: the repository cloned into a plugin directory, its build step
-- (`cargo build --release`) run there, the clone on 'runtimepath' as a plugin manager puts it,
-- no `cmd` and no PATH change. test/run.sh does the clone and the build (MCP_INSTALL_DIR).
local T = require('helpers')

local dir = os.getenv('MCP_INSTALL_DIR')

--- Drops the repository's own copy (test/harness.lua put it on 'runtimepath') and loads the
--- clone the way a plugin manager does: its root on 'runtimepath', then its plugin/ files.
local function load_clone()
  assert(dir and vim.uv.fs_stat(dir .. '/Cargo.toml'), 'MCP_INSTALL_DIR must name the clone')
  vim.opt.rtp:remove(T.plugin_root)
  for name in pairs(package.loaded) do
    if name == 'mcp_sidecar' or vim.startswith(name, 'mcp_sidecar.') then
      package.loaded[name] = nil
    end
  end
  vim.g.loaded_mcp_sidecar = nil
  vim.opt.rtp:prepend(dir)
  vim.g.mcp_sidecar = {
    root_markers = {},
    servers = { demo = { command = dir .. '/target/release/mcp-sidecar', args = { 'demo-server' } } },
  }
  vim.cmd('filetype on')
  vim.cmd('runtime plugin/mcp_sidecar.lua')
end

local function health_text()
  vim.cmd('checkhealth mcp_sidecar')
  local text = table.concat(T.lines(0), '\n')
  vim.cmd('bwipeout!')
  return text
end

T.test('the clone finds its own build: checkhealth is clean and a demo call answers', function()
  load_clone()
  T.eq('mcp-sidecar', require('mcp_sidecar.config').get().cmd, 'no cmd is set: the default')
  local own = dir .. '/target/release/mcp-sidecar'
  T.eq(own, require('mcp_sidecar.binary').resolve())
  vim.cmd.cd(T.workspace())
  vim.cmd.edit(T.workspace() .. '/README.md')
  T.wait_running('demo')
  local text = health_text()
  T.contains(text, '- ✅ OK found ' .. own)
  T.contains(text, '- ✅ OK version: mcp-sidecar ')
  T.contains(text, 'MCP protocol revisions: 2026-07-28')
  T.contains(text, '- ✅ OK server demo: running')
  T.eq(nil, text:find('ERROR', 1, true), text)
  T.eq(nil, text:find('older than the plugin', 1, true), text)

  T.script_input_fn(function(opts)
    return opts.prompt:find('› a ', 1, true) and '2' or '40'
  end)
  T.script_select(function(lines)
    return T.pick('Call add')(lines)
  end)
  vim.cmd('Mcp call demo add')
  local buf = T.wait_buf('^mcp://result/demo/add/%d+$')
  T.contains(T.lines(buf), '2 + 40 = 42')
end)

T.test('checkhealth names the build command when the binary is missing or older', function()
  local binary = require('mcp_sidecar.binary')
  local build = 'cd ' .. vim.fn.shellescape(dir) .. ' && cargo build --release'
  T.eq(build, binary.build_hint())
  -- Older: a stand-in that reports version 0.0.1 where the build would be.
  local own = binary.own_build()
  local real = own .. '.real'
  assert(vim.uv.fs_rename(own, real))
  local ok, err = pcall(function()
    local f = assert(io.open(own, 'w'))
    f:write('#!/bin/sh\necho "mcp-sidecar 0.0.1"\n')
    f:close()
    vim.uv.fs_chmod(own, 493)
    local text = health_text()
    T.contains(text, 'the binary is 0.0.1, older than the plugin (')
    T.contains(text, 'Rebuild it: ' .. build)
    -- Missing, and nothing on PATH.
    os.remove(own)
    local path = vim.env.PATH
    vim.env.PATH = '/nonexistent'
    text = health_text()
    vim.env.PATH = path
    T.contains(text, 'the sidecar is not built (' .. own .. ' does not exist)')
    T.contains(text, 'build it: ' .. build)
  end)
  os.remove(own)
  assert(vim.uv.fs_rename(real, own))
  assert(ok, err)
end)
