-- Form and URL elicitation end to end: the demo's book_trip and login tools, relayed by the real
-- sidecar to vim.ui.input, vim.ui.select and the native multi-select.
local T = require('helpers')

--- Answers each input by the field its prompt names; `answers[field]` is a string, a list (one
--- per time the field is asked) or a function(opts).
local function inputs(answers)
  local seen = {}
  return T.script_input_fn(function(opts)
    for field, answer in pairs(answers) do
      if opts.prompt:find('› ' .. field, 1, true) then
        seen[field] = (seen[field] or 0) + 1
        if type(answer) == 'function' then
          return answer(opts)
        elseif type(answer) == 'table' then
          return answer[seen[field]]
        end
        return answer
      end
    end
    error('unexpected input: ' .. opts.prompt)
  end)
end

--- Picks, for a select whose prompt contains a key of `choices`, the line containing its value.
local function selects(choices)
  return T.script_select(function(lines, _, opts)
    for needle, pick in pairs(choices) do
      if opts.prompt:find(needle, 1, true) then
        if type(pick) == 'function' then
          return pick(lines, opts)
        end
        return T.pick(pick)(lines)
      end
    end
    error('unexpected select: ' .. opts.prompt .. ' ' .. vim.inspect(lines))
  end)
end

--- Waits for the native multi-select and answers it with keys.
local function multiselect(keys)
  local buf = T.wait_buf('^mcp://select/')
  T.wait(function()
    return vim.api.nvim_get_current_buf() == buf
  end, 'the multi-select to get focus')
  local lines = T.lines(buf)
  local footer = table.concat(vim.tbl_map(function(chunk)
    return chunk[1]
  end, vim.api.nvim_win_get_config(0).footer or {}))
  vim.api.nvim_feedkeys(vim.keycode(keys), 'mx', false)
  return lines, footer
end

local function result_lines(tool)
  return T.lines(T.wait_buf('^mcp://result/demo/' .. tool .. '/%d+$', 20000))
end

T.test('book_trip: every field kind through vim.ui, a re-asked email, the multi-select, Submit', function()
  T.start_sidecar()
  local input_calls = inputs({
    ['Full name'] = 'Ada Lovelace',
    ['Email'] = { 'ada@', 'ada@example.com' },
    ['Travelers'] = '2',
    ['Budget (EUR)'] = function(opts)
      return opts.default -- keep the prefilled default
    end,
    ['Departure date'] = '2027-05-01',
  })
  local select_calls = selects({
    ['Window seat'] = 'No',
    ['Cabin'] = 'Business',
    ['Meal'] = 'vegan',
    ['Insurance'] = 'Full cover',
    ['Review your answers'] = 'Submit',
  })
  vim.cmd('Mcp call demo book_trip {"destination": "Porto"}')
  local extras, footer = multiselect('x' .. 'jx' .. '<CR>')
  T.eq({ '[ ] lounge', '[ ] wifi', '[ ] extra_bag' }, extras)
  -- Extras is optional: its key hints offer s (skip).
  T.contains(footer, 's skip')

  local lines = result_lines('book_trip')
  T.contains(lines, 'Booked: Ada Lovelace <ada@example.com>, 2 traveler(s) to Porto, business cabin')
  T.contains(lines, '"window_seat": false')
  T.contains(lines, '"budget": 1500.5')
  T.contains(lines, '"insurance": "full"')
  T.contains(lines, '"meal": "vegan"')
  T.contains(lines, '"departure": "2027-05-01"')
  T.contains(lines, '"lounge",')
  T.contains(lines, '"wifi"')

  -- The prompts named the server, the step and the field; the bad email was re-asked with the
  -- sidecar's validation message and the typed text kept.
  local first = input_calls[1].opts
  T.contains(first.prompt, '[step 1/10] demo: Confirm your trip to Porto › Full name')
  local email_again = input_calls[3].opts
  T.contains(email_again.prompt, '⚠ ')
  T.contains(email_again.prompt, '› Email')
  T.eq('ada@', email_again.default)
  T.eq('1500.5', input_calls[5].opts.default)
  local cabin = vim.tbl_filter(function(c)
    return c.opts.prompt:find('Cabin', 1, true)
  end, select_calls)[1]
  T.contains(cabin.opts.prompt, '[step 6/10]')
  T.contains(cabin.lines, 'Economy — economy (current)')
  T.contains(cabin.lines, '← Back')
  -- The review shows each choice by the title its picker showed, not its value.
  local review = vim.tbl_filter(function(c)
    return c.opts.prompt:find('Review your answers', 1, true)
  end, select_calls)[1]
  T.contains(review.lines, 'Change Cabin — Business')
  T.contains(review.lines, 'Change Insurance — Full cover')
  T.not_contains(review.lines, 'Change Cabin — business')
end)

T.test('book_trip: Escape offers Back (the earlier answer is kept), then Cancel ends the call', function()
  local names = {}
  inputs({
    ['Full name'] = function(opts)
      table.insert(names, opts.default or '')
      return 'Grace Hopper'
    end,
    ['Email'] = { false, 'grace@example.com' },
    ['Travelers'] = { false },
  })
  selects({
    ['no value given'] = function(lines, opts)
      -- The first Escape (Email) goes back; the second (Travelers) cancels.
      if opts.prompt:find('Email', 1, true) then
        return T.pick('Back')(lines)
      end
      return T.pick('Cancel')(lines)
    end,
  })
  vim.cmd('Mcp call demo book_trip {}')
  local lines = result_lines('book_trip')
  T.contains(lines, 'Booking cancelled')
  T.eq({ '', 'Grace Hopper' }, names, 'Back re-asks the name with the earlier answer')
end)

T.test('book_trip: Decline in the review answers decline', function()
  inputs({
    ['Full name'] = 'Alan Turing',
    ['Email'] = 'alan@example.com',
    ['Travelers'] = '1',
    ['Budget (EUR)'] = '100',
    ['Departure date'] = '',
  })
  selects({
    ['Window seat'] = 'Yes',
    ['Cabin'] = 'Economy',
    ['Meal'] = 'standard',
    ['Insurance'] = 'No insurance',
    ['Review your answers'] = 'Decline',
  })
  vim.cmd('Mcp call demo book_trip {}')
  multiselect('<CR>')
  T.contains(result_lines('book_trip'), 'Booking declined')
end)

T.test('login: URL consent; Copy URL sets the registers, Open goes through vim.ui.open', function()
  local opened = {}
  vim.ui.open = function(uri)
    table.insert(opened, uri)
    return { wait = function() end }, nil
  end
  local picks = 0
  local calls = selects({
    ['Sign in to Example Travel'] = function(lines)
      picks = picks + 1
      return T.pick(picks == 1 and 'Copy URL' or 'Open example.com')(lines)
    end,
  })
  vim.cmd('Mcp call demo login')
  local lines = result_lines('login')
  T.contains(lines, 'Sign-in started in the browser: https://example.com/login?session=')
  T.eq(1, #opened)
  T.ok(opened[1]:match('^https://example%.com/login%?session='), opened[1])
  T.eq(opened[1], vim.fn.getreg('"'), 'Copy URL put it in the unnamed register')
  T.contains(calls[1].lines[1], 'Open example.com in the browser')
  T.contains(calls[2].lines[2], 'Copy URL (copied)')
end)
