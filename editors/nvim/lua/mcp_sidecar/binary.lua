-- Finds the sidecar binary and builds the command line Neovim starts it with.
local config = require('mcp_sidecar.config')

local M = {}

local function argv_prefix(opts)
  local cmd = opts.cmd
  if type(cmd) == 'table' then
    return vim.deepcopy(cmd)
  end
  return { cmd or 'mcp-sidecar' }
end

--- The repository this plugin is part of (plugin managers clone the whole repository; the plugin
--- is its `editors/nvim`), or nil when the plugin was copied somewhere on its own.
function M.repo_root()
  local here = debug.getinfo(1, 'S').source:gsub('^@', '')
  local root = vim.fs.normalize(vim.fn.fnamemodify(here, ':p:h:h:h:h:h'))
  if vim.uv.fs_stat(root .. '/Cargo.toml') and vim.uv.fs_stat(root .. '/editors/nvim') then
    return root
  end
end

--- What the documented build step (`cargo build --release` in the repository) makes.
function M.own_build()
  local root = M.repo_root()
  return root and (root .. '/target/release/mcp-sidecar') or nil
end

--- The command that builds the plugin's own binary, for messages.
function M.build_hint()
  local root = M.repo_root()
  if root then
    return ('cd %s && cargo build --release'):format(vim.fn.shellescape(root))
  end
  return 'cargo install --path . (in the mcp-sidecar repository)'
end

--- The crate version of the repository the plugin is in (its `Cargo.toml`), or nil.
function M.plugin_version()
  local root = M.repo_root()
  local f = root and io.open(root .. '/Cargo.toml', 'r')
  if not f then
    return nil
  end
  local text = f:read('*a')
  f:close()
  return text:match('\nversion%s*=%s*"([^"]+)"')
end

--- The executable's absolute path, or nil and a sentence saying what is wrong and how to fix it.
--- With the default `cmd` ('mcp-sidecar'): the plugin's own build
--- (`<repository>/target/release/mcp-sidecar`), then PATH.
function M.resolve(opts)
  opts = opts or config.get()
  local own = (opts.cmd == nil or opts.cmd == config.defaults.cmd) and M.own_build() or nil
  if own and vim.fn.executable(own) == 1 then
    return own
  end
  local exe = argv_prefix(opts)[1]
  if exe:find('/', 1, true) or exe:sub(1, 1) == '~' then
    local path = vim.fs.normalize(exe)
    if vim.fn.executable(path) == 1 then
      return vim.fn.fnamemodify(path, ':p')
    end
    local why = vim.uv.fs_stat(path) and 'is not executable' or 'does not exist'
    return nil,
      ('the sidecar binary %s %s; fix `cmd` in require("mcp_sidecar").setup() or vim.g.mcp_sidecar'):format(
        path,
        why
      )
  end
  local found = vim.fn.exepath(exe)
  if found == '' and own then
    return nil,
      ('the sidecar is not built (%s does not exist) and `%s` is not on PATH; build it: %s'):format(
        own,
        exe,
        M.build_hint()
      )
  end
  if found == '' then
    return nil,
      ('`%s` is not on PATH; install it (cargo install --path . in the mcp-sidecar repository) or set `cmd` to its path in require("mcp_sidecar").setup()'):format(
        exe
      )
  end
  return found
end

--- The full command line (absolute executable, user args, log options), or nil and the reason.
function M.command(opts)
  opts = opts or config.get()
  local exe, err = M.resolve(opts)
  if not exe then
    return nil, err
  end
  local argv = argv_prefix(opts)
  argv[1] = exe
  local log_file = config.log_file(opts)
  if log_file and not vim.tbl_contains(argv, '--log-file') then
    vim.fn.mkdir(vim.fs.dirname(log_file), 'p')
    vim.list_extend(argv, { '--log-file', log_file })
  end
  if opts.log_level and not vim.tbl_contains(argv, '--log-level') then
    vim.list_extend(argv, { '--log-level', opts.log_level })
  end
  return argv
end

--- `mcp-sidecar --version` of the executable (trimmed), or nil and the reason.
function M.version(exe)
  local ok, proc = pcall(vim.system, { exe, '--version' }, { text = true })
  if not ok then
    return nil, tostring(proc)
  end
  local res = proc:wait(5000)
  if res.code ~= 0 then
    return nil, ('`%s --version` exited with %d: %s'):format(exe, res.code, vim.trim(res.stderr or ''))
  end
  return vim.trim(res.stdout or '')
end

return M
