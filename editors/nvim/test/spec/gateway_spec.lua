-- The gateway in real Neovim (issue 14): the terminals' environment, :Mcp gateway's snippets, and
-- an agent (the Python SDK's client, fixtures/python/gateway_client.py, through
-- `mcp-sidecar gateway`) whose call asks a form that is answered here.
local T = require('helpers')

local function info()
  return T.exec('mcp-sidecar.gatewayInfo')
end

--- Waits until the terminals' environment names the gateway of the running sidecar; returns it.
local function wait_env()
  return T.wait(function()
    local url = vim.env.MCP_SIDECAR_GATEWAY
    return url and url == info().url and url
  end, 'MCP_SIDECAR_GATEWAY in vim.env', 20000)
end

T.test('terminal jobs get MCP_SIDECAR_GATEWAY and its token', function()
  T.start_sidecar()
  local url = wait_env()
  local token = info().env.MCP_SIDECAR_GATEWAY_TOKEN
  T.eq(token, vim.env.MCP_SIDECAR_GATEWAY_TOKEN)
  vim.cmd('enew')
  vim.cmd.terminal('echo "gateway=$MCP_SIDECAR_GATEWAY"; echo "token=$MCP_SIDECAR_GATEWAY_TOKEN."')
  local term = vim.api.nvim_get_current_buf()
  T.eq('terminal', vim.bo[term].buftype)
  T.wait(function()
    return table.concat(T.lines(term), '\n'):find('token=', 1, true)
  end, 'the terminal job to print')
  T.contains(T.lines(term), 'gateway=' .. url .. '\n')
  T.contains(T.lines(term), 'token=' .. token .. '.')
  vim.cmd('bwipeout! ' .. term)
  T.contains(T.health_lines(), ':terminal jobs get MCP_SIDECAR_GATEWAY=' .. url)
end)

T.test(':Mcp gateway shows the snippets; y yanks one, the secret only in the yank', function()
  vim.cmd('Mcp gateway')
  local buf = T.wait_buf('^mcp://gateway$')
  local lines = T.lines(buf)
  local gw = info()
  local bin = vim.fn.fnamemodify(T.bin, ':p')
  local token = gw.env.MCP_SIDECAR_GATEWAY_TOKEN
  T.contains(lines, '## Claude Code: .mcp.json in the project')
  T.contains(
    lines,
    ('{"mcpServers": {"workspace": {"command": %s, "args": ["gateway"]}}}'):format(vim.json.encode(bin))
  )
  T.contains(lines, 'claude mcp add workspace -- ' .. vim.fn.shellescape(bin) .. ' gateway')
  T.contains(lines, '## Codex CLI: ~/.codex/config.toml')
  T.contains(lines, '[mcp_servers.workspace]')
  T.contains(lines, 'args = ["gateway"]')
  T.contains(lines, '## gemini-cli: .gemini/settings.json')
  T.contains(lines, 'the secret changes each time the sidecar starts')
  T.contains(lines, 'URL: ' .. gw.url)
  T.contains(lines, 'Authorization: Bearer ' .. token:sub(1, 4) .. '…' .. token:sub(-2))
  T.contains(lines, ':terminal jobs get MCP_SIDECAR_GATEWAY=' .. gw.url)
  T.not_contains(lines, token, 'the secret is not on the screen')

  local function yank_at(needle)
    for i, line in ipairs(T.lines(buf)) do
      if line:find(needle, 1, true) then
        vim.api.nvim_win_set_cursor(0, { i, 0 })
        vim.api.nvim_feedkeys('y', 'mx', false)
        return vim.fn.getreg('"')
      end
    end
    error('no line with ' .. needle)
  end
  T.eq(
    '[mcp_servers.workspace]\ncommand = ' .. vim.json.encode(bin) .. '\nargs = ["gateway"]',
    yank_at('[mcp_servers')
  )
  T.eq('URL: ' .. gw.url .. '\nAuthorization: Bearer ' .. token, yank_at('URL: '))
  T.wait_notification('yanked: Streamable HTTP')
end)

T.test('gateway.enabled = false clears the environment; turning it on sets the new one', function()
  wait_env()
  require('mcp_sidecar').setup({ settings = { gateway = { enabled = false } } })
  T.wait(function()
    return vim.env.MCP_SIDECAR_GATEWAY == nil and vim.env.MCP_SIDECAR_GATEWAY_TOKEN == nil
  end, 'the variables to be gone')
  T.contains(T.health_lines(), 'no gateway for terminals')
  vim.cmd('Mcp gateway')
  T.wait_notification('the gateway is not available: ')
  require('mcp_sidecar').setup({ settings = { gateway = { enabled = true } } })
  T.ok(wait_env() ~= nil, 'a gateway again')
end)

--- The environment of the running sidecar process (a child of this Neovim), from /proc.
local function sidecar_environ()
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local f = io.open(('/proc/%d/cmdline'):format(pid), 'rb')
    local cmdline = f and f:read('*a') or ''
    if f then
      f:close()
    end
    if cmdline:find(T.bin, 1, true) and not cmdline:find('demo-server', 1, true) then
      local e = assert(io.open(('/proc/%d/environ'):format(pid), 'rb'))
      local vars = {}
      for entry in e:read('*a'):gmatch('[^%z]+') do
        local name, value = entry:match('^([^=]+)=(.*)$')
        if name then
          vars[name] = value
        end
      end
      e:close()
      return vars
    end
  end
end

T.test('a stopped sidecar takes its environment with it, earlier values come back', function()
  wait_env()
  local client = require('mcp_sidecar').client()
  client:stop()
  T.wait(function()
    return client:is_stopped() and vim.env.MCP_SIDECAR_GATEWAY == nil
  end, 'the variables to be gone with the sidecar')
  -- As if Neovim ran in another editor's terminal: that editor's gateway.
  vim.env.MCP_SIDECAR_GATEWAY = 'http://127.0.0.1:9/outer'
  vim.env.MCP_SIDECAR_GATEWAY_TOKEN = 'outer-secret'
  vim.cmd('Mcp servers')
  T.wait_buf('^mcp://servers$')
  T.wait_running('demo')
  local url = wait_env()
  T.ok(url ~= 'http://127.0.0.1:9/outer', url)
  -- Neither the new sidecar nor its servers got the outer (or any) gateway's secret.
  local environ = T.ok(sidecar_environ(), 'the sidecar process')
  T.eq('', environ.MCP_SIDECAR_GATEWAY)
  T.eq('', environ.MCP_SIDECAR_GATEWAY_TOKEN)
  require('mcp_sidecar').client():stop()
  T.wait(function()
    return vim.env.MCP_SIDECAR_GATEWAY == 'http://127.0.0.1:9/outer'
  end, 'the outer value to come back')
  T.eq('outer-secret', vim.env.MCP_SIDECAR_GATEWAY_TOKEN)
  vim.env.MCP_SIDECAR_GATEWAY, vim.env.MCP_SIDECAR_GATEWAY_TOKEN = nil, nil
  vim.cmd('Mcp servers')
  T.wait_running('demo')
  wait_env()
end)

--- Answers each input by the field its prompt names.
local function inputs(answers)
  return T.script_input_fn(function(opts)
    for field, answer in pairs(answers) do
      if opts.prompt:find('› ' .. field, 1, true) then
        return type(answer) == 'function' and answer(opts) or answer
      end
    end
    error('unexpected input: ' .. opts.prompt)
  end)
end

--- Starts the Python SDK agent "nvim-agent" (fixtures/python/gateway_client.py) through
--- `mcp-sidecar gateway`, outside the workspace and with Neovim's environment, as a :terminal job
--- has it: only that environment can find the gateway. It makes one `call`. Returns a function that
--- waits for the agent and returns the call's structuredContent.
local function run_agent(call)
  local python = os.getenv('MCP_PYTHON')
  T.ok(
    python and vim.fn.executable(python) == 1,
    'MCP_PYTHON must name the peers venv python (bash scripts/install-peers.sh; run.sh sources .cache/peers/env.sh)'
  )
  local done
  vim.system({
    python,
    T.repo_root .. '/fixtures/python/gateway_client.py',
    '--mode',
    'legacy',
    '--name',
    'nvim-agent',
    '--command',
    T.bin,
    'gateway',
    vim.json.encode({ call }),
  }, { text = true, cwd = vim.fn.tempname():match('^(.*)/') }, function(out)
    done = out
  end)
  return function()
    T.wait(function()
      return done
    end, 'the agent to finish', 60000)
    T.eq(0, done.code, 'the agent failed: ' .. tostring(done.stderr))
    local outcome = vim.json.decode(done.stdout)[1]
    local structured = vim.tbl_get(outcome, 'result', 'structuredContent')
    T.ok(structured, vim.inspect(outcome))
    return structured
  end
end

T.test('an agent in the terminal calls a tool through the gateway; its form is answered here', function()
  wait_env()
  local input_calls = inputs({
    ['Full name'] = 'Grace Hopper',
    ['Email'] = 'grace@example.com',
    ['Travelers'] = '1',
    ['Budget (EUR)'] = function(opts)
      return opts.default
    end,
    ['Departure date'] = '2027-03-09',
  })
  local select_calls = T.script_select(function(lines, _, opts)
    local choices = {
      ['Window seat'] = 'Yes',
      ['Cabin'] = 'Economy',
      ['Meal'] = 'vegetarian',
      ['Insurance'] = 'Full cover',
      ['Review your answers'] = 'Submit',
    }
    for needle, pick in pairs(choices) do
      if opts.prompt:find(needle, 1, true) then
        return T.pick(pick)(lines)
      end
    end
    error('unexpected select: ' .. opts.prompt)
  end)
  -- The agent inherits Neovim's environment, as a :terminal job does; `mcp-sidecar gateway`
  -- finds the gateway through it.
  local agent = run_agent({ op = 'call', name = 'demo__book_trip', arguments = { destination = 'Lisbon' } })
  -- The multi-select of the form's extras: the first one ticked.
  local select_buf = T.wait_buf('^mcp://select/', 30000)
  T.wait(function()
    return vim.api.nvim_get_current_buf() == select_buf
  end, 'the multi-select to get focus')
  vim.api.nvim_feedkeys(vim.keycode('x<CR>'), 'mx', false)
  local structured = agent()
  T.eq('accept', structured.action)
  T.eq('Grace Hopper', structured.content.name)
  T.eq('grace@example.com', structured.content.email)
  T.eq('economy', structured.content.cabin)
  T.eq({ 'lounge' }, structured.content.extras)
  -- Every prompt says which agent asks, through the gateway, and which server.
  T.contains(
    input_calls[1].opts.prompt,
    'nvim-agent via the gateway → demo asks: Confirm your trip to Lisbon › Full name'
  )
  T.ok(#select_calls >= 5, 'the choices were asked here')
end)

--- The newest draft of `kind` (samplingRequest / samplingResponse) from the demo server, once it
--- has focus.
local function wait_draft(kind, seen)
  local found
  T.wait(function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      local draft = vim.api.nvim_buf_is_valid(buf) and vim.b[buf].mcp_sidecar_draft
      if draft and not seen[buf] and draft.server == 'demo' and draft.kind == kind then
        found = buf
        return true
      end
    end
  end, 'the ' .. kind .. ' draft', 30000)
  seen[found] = true
  T.wait(function()
    return vim.api.nvim_get_current_buf() == found
  end, 'the draft to get focus')
  return found
end

T.test(
  'an agent through the gateway: the model answer its server asks for is written and accepted here',
  function()
    wait_env()
    local answer = 'EX517 (Lisbon → Boston, nonstop) is the best value, for the agent.'
    local agent = run_agent({ op = 'call', name = 'demo__analyze_flights', arguments = vim.empty_dict() })
    local seen = {}
    local request = wait_draft('samplingRequest', seen)
    T.contains(T.lines(request), 'You are a concise travel assistant. Prices are per person.')
    vim.cmd('write')
    local draft = wait_draft('samplingResponse', seen)
    local lines = T.lines(draft)
    local heading
    for i, l in ipairs(lines) do
      if l == '### assistant' then
        heading = i
      end
    end
    T.ok(heading, 'no ### assistant heading in:\n' .. table.concat(lines, '\n'))
    vim.api.nvim_buf_set_lines(draft, heading, -1, false, { '', answer })
    vim.cmd('McpAccept')
    local structured = agent()
    T.eq(answer, structured.text)
    T.eq('manual', structured.model)
  end
)
