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

--- The executable's absolute path, or nil and a sentence saying what is wrong and how to fix it.
function M.resolve(opts)
  opts = opts or config.get()
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
