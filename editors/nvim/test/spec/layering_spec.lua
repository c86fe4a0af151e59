-- The plugin's modules form no import circle: every require('mcp_sidecar…') counts, also one
-- inside a function (a lazy require would only hide a circle, not remove it).
local T = require('helpers')

local lua_dir = T.plugin_root .. '/lua'

--- Every module of the plugin: its name and the modules it requires, read from the source.
local function modules()
  local out = {}
  for path, kind in vim.fs.dir(lua_dir .. '/mcp_sidecar', { depth = 10 }) do
    if kind == 'file' and path:match('%.lua$') then
      local name = ('mcp_sidecar/' .. path):gsub('%.lua$', ''):gsub('/init$', ''):gsub('/', '.')
      local requires = {}
      for _, line in ipairs(vim.fn.readfile(lua_dir .. '/mcp_sidecar/' .. path)) do
        -- Code only (stylua writes require('…')); a comment or a message may mention one.
        if not line:match('^%s*%-%-') then
          for required in line:gmatch("require%('(mcp_sidecar[%w_.]*)'%)") do
            requires[required] = true
          end
        end
      end
      out[name] = vim.tbl_keys(requires)
      table.sort(out[name])
    end
  end
  return out
end

--- The first circle found, as the list of modules along it (the first one repeated last).
local function circle(graph)
  local done, path, on_path = {}, {}, {}
  local function visit(name)
    if on_path[name] then
      local start = on_path[name]
      local found = vim.list_slice(path, start)
      table.insert(found, name)
      return found
    end
    if done[name] then
      return nil
    end
    table.insert(path, name)
    on_path[name] = #path
    for _, next_name in ipairs(graph[name] or {}) do
      local found = visit(next_name)
      if found then
        return found
      end
    end
    on_path[name] = nil
    table.remove(path)
    done[name] = true
  end
  local names = vim.tbl_keys(graph)
  table.sort(names)
  for _, name in ipairs(names) do
    local found = visit(name)
    if found then
      return found
    end
  end
end

T.test('every required module exists', function()
  local graph = modules()
  T.ok(graph['mcp_sidecar.commands'], 'commands/init.lua is read as mcp_sidecar.commands')
  T.contains(graph['mcp_sidecar.client'], 'mcp_sidecar.lsp_config', 'the requires are read')
  local missing = {}
  for name, requires in pairs(graph) do
    for _, required in ipairs(requires) do
      if not graph[required] then
        table.insert(missing, name .. ' → ' .. required)
      end
    end
  end
  T.eq({}, missing)
end)

T.test('the circle finder finds a circle', function()
  local found = circle({ a = { 'b' }, b = { 'c' }, c = { 'a' }, d = { 'a' } })
  T.eq({ 'a', 'b', 'c', 'a' }, found)
  T.eq(nil, circle({ a = { 'b', 'c' }, b = { 'c' }, c = {} }))
end)

T.test('no module requires itself through others', function()
  local found = circle(modules())
  T.eq(nil, found, found and ('a circle: ' .. table.concat(found, ' → ')))
end)
