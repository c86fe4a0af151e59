-- Linear code over callbacks for the :Mcp flows: `run` starts a coroutine, `wait` yields until a
-- callback fires. The callback-taking function runs on the main loop, outside the coroutine, so
-- vim.ui replacements are never called from inside one.
local M = {}

local function report(err)
  vim.schedule(function()
    vim.notify('mcp-sidecar: ' .. tostring(err), vim.log.levels.ERROR)
  end)
end

local function pack(...)
  return { n = select('#', ...), ... }
end

--- Runs `fn(...)` in a new coroutine; errors are reported with vim.notify.
function M.run(fn, ...)
  local co = coroutine.create(fn)
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    report(err)
  end
end

--- Calls `start(done)` on the main loop and returns what `done` is called with.
---@param start fun(done: fun(...))
function M.wait(start)
  local co = coroutine.running()
  assert(co, 'mcp-sidecar: async.wait() must run inside async.run()')
  local results, finished, waiting = nil, false, false
  local function done(...)
    if finished then
      return
    end
    finished, results = true, pack(...)
    if waiting then
      waiting = false
      local ok, err = coroutine.resume(co)
      if not ok then
        report(err)
      end
    end
  end
  vim.schedule(function()
    local ok, err = pcall(start, done)
    if not ok then
      done(nil, err)
    end
  end)
  if not finished then
    waiting = true
    coroutine.yield()
  end
  return unpack(results, 1, results.n)
end

--- Sleeps `ms` milliseconds inside a coroutine.
function M.sleep(ms)
  M.wait(function(done)
    vim.defer_fn(done, ms)
  end)
end

--- vim.ui.select as a function returning (item, index).
function M.select(items, opts)
  return M.wait(function(done)
    vim.ui.select(items, opts, done)
  end)
end

--- vim.ui.input as a function returning the text (nil when dismissed).
function M.input(opts)
  return M.wait(function(done)
    vim.ui.input(opts, done)
  end)
end

return M
