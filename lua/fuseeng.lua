-- fuseeng.lua: the policy API (`local fe = require "fuseeng"`).
--
-- A policy is a table made by fe.policy{...}: a name, the C driver that
-- proposes candidate groups, parameters, and the hooks that driver calls.
-- Every decision lives here in Lua; the engine (C) owns graphs, legality,
-- the simulator and kernels and calls these hooks. The drivers and the
-- fields a policy may have are the engine's (core/script/drivers.c, read
-- here as fuseeng.core's drivers and policy_fields):
--
--   driver     hooks it calls                      what they return
--   greedy     score(self, a, b, ctx), decide      a number; verdict
--   patterns   patterns (list of DSL strings),     verdict
--              decide(self, group, ctx)
--   dataflow   dataflow (DSL string), decide       verdict
--   plan       plan(self, graph, ctx)              a list of groups (lists of nodes or names,
--                                                  each may carry split, kernel, reason)
--   priority   fixed(self, graph, ctx),            groups fused first and sealed;
--              priority(self, producer, consumers,  seconds saved (or nil: the
--              ctx), decide                        simulator's); verdict
--
-- Every driver then calls split(self, group, ctx) and kernel(self, group,
-- ctx), if the policy has them, on each final group.
--
-- A verdict is true (fuse), false (don't) or nil (no opinion), plus a reason
-- string that lands in the decision log. When the top-level verdict is nil
-- the driver uses the policy's `default` (false unless set). A policy with
-- no decide hook fuses every legal candidate its driver proposes; inside a
-- combination it votes yes.
--
-- The split, the tiles a group runs in, is the policy's decision: split(...)'s
-- answer (1 to 2^24; the plan driver's group.split likewise); a group given
-- no split runs whole (split 1) unless the policy says tiling = "auto",
-- which leaves such groups to the simulator's default for the machine
-- (split_default: the smallest split whose tile fits the L2 when the group's
-- intermediates overflow it, else 1). tiling is "none" by default; a split
-- hook that wants the simulator's choice for one group returns
-- ctx:simulate(group).split_default.
--
-- ctx, the hooks' last argument: ctx.graph, ctx.policy, ctx.driver,
-- ctx.params, ctx.round (greedy), ctx.priority (priority), ctx.state (the policy's scratch table for
-- the run), ctx.machine (the machine file's fields), ctx.profile (with
-- --profile: ctx.profile:lookup(group) -> {separate=, fused=, key=}),
-- ctx:log(...), and the prices of a group (a group object or a list of
-- nodes), each a table {time (s), l3_bytes, working_set, l2_peak, split,
-- split_default, fits, ...}:
--   ctx:simulate(group [, {split = n}])       the group as one kernel
--   ctx:simulate_unfused(group)               each node its own kernel
--   ctx:simulate_parts(group [, {split = n or function(part) -> n}])
--                                             each of group.parts its own
--                                             kernel (what not fusing this
--                                             candidate costs), summed; .parts
--   ctx:bench(group [, {split = n, kernel = name}])   measured on the CPU
--
-- Combinators make new policies from old ones: fe.all, fe.any, fe.chain,
-- fe.vote and fe.with. A combination drives with its first policy's driver,
-- hooks and tiling, and combines the children's verdicts.

local core = require "fuseeng.core"
local pattern = require "fuseeng.pattern"
local dataflow = require "fuseeng.dataflow"

local fe = { version = core.version, ops = core.ops, kinds = core.kinds,
             kernel_choices = core.kernel_choices, max_split = core.max_split }

-- The drivers and the fields of a policy come from the engine
-- (core/script/drivers.c), their one owner: FIELDS[name] = {type =,
-- source_type =, values =}, DRIVERS[name] = {hooks =, needs =, needs_what =}.
local FIELDS, DRIVERS = {}, {}
for _, f in ipairs(core.policy_fields) do FIELDS[f.name] = f end
for _, d in ipairs(core.drivers) do DRIVERS[d.name] = d end

-- "a, b or c" (quoted with q) from a list of strings.
local function either(list, q)
  q = q or ""
  local items = {}
  for i, v in ipairs(list) do items[i] = q .. v .. q end
  if #items < 2 then return items[1] or "" end
  return table.concat(items, ", ", 1, #items - 1) .. " or " .. items[#items]
end

local DRIVER_NAMES = {}
for i, d in ipairs(core.drivers) do DRIVER_NAMES[i] = d.name end

local Policy = { __fuseeng_policy = true }
Policy.__index = Policy

--- A set: fe.set{"add", "mul"}["add"] == true.
function fe.set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return setmetatable(s, { __fuseeng_set = true })
end

--- Is t a set made by fe.set?
function fe.is_set(t)
  local mt = type(t) == "table" and getmetatable(t)
  return mt ~= nil and mt ~= false and mt.__fuseeng_set == true
end

--- Compile an op pattern ("add -> rms_norm", "silu(x) * y").
function fe.pattern(src, chunkname) return pattern.compile(src, chunkname) end

--- Compile a hardware data flow ("concat -> pad -> ipa -> ...; ipa = conv2d").
function fe.dataflow(src, chunkname) return dataflow.compile(src, chunkname) end

local function fail(msg, level) error(msg, (level or 1) + 1) end

local function check_params(name, params, level)
  for k, v in pairs(params) do
    local t = type(v)
    if type(k) ~= "string" then
      fail(("policy '%s': params keys must be strings"):format(name), level + 1)
    end
    if t ~= "number" and t ~= "boolean" and t ~= "string" and not fe.is_set(v) then
      fail(("policy '%s': param '%s' is a %s; params are numbers, booleans, strings or "
            .. "fe.set{...}"):format(name, k, t), level + 1)
    end
  end
end

local function compile_patterns(name, list, level)
  local out = {}
  for i, p in ipairs(list) do
    if type(p) == "string" then
      local ok, compiled = pcall(pattern.compile, p, ("policy '%s' pattern %d"):format(name, i))
      if not ok then fail(compiled, level + 1) end
      out[i] = compiled
    elseif type(p) == "table" and (p.kind == "chain" or p.kind == "expr") then
      out[i] = p
    else
      fail(("policy '%s': patterns[%d] is a %s; expected a pattern string"):format(name, i, type(p)),
           level + 1)
    end
  end
  if #out == 0 then fail(("policy '%s': the patterns driver needs at least one pattern"):format(name), level + 1) end
  return out
end

local function compile_dataflow(name, src, level)
  if type(src) ~= "string" then return src end
  local ok, h = pcall(dataflow.compile, src, ("policy '%s' dataflow"):format(name))
  if not ok then fail(h, level + 1) end
  return h
end

-- What fe.policy compiles, by the field a driver needs.
local COMPILE = { patterns = compile_patterns, dataflow = compile_dataflow }

-- A field that lists op names for one driver (solo_ops, priority_ops):
-- a list, of names in the op registry, on that driver.
local function check_op_list(name, p, field, for_driver, example)
  local list = p[field]
  if list == nil then return end
  if p.driver ~= for_driver then
    fail(("policy '%s': %s is read by the %s driver only, not by %s"):format(name, field, for_driver, p.driver), 3)
  end
  for k in pairs(list) do
    if math.type(k) ~= "integer" then
      fail(("policy '%s': %s must be a list of op names, like %s"):format(name, field, example), 3)
    end
  end
  for i, op in ipairs(list) do
    if not fe.ops[op] then
      fail(("policy '%s': %s[%d] is %s, not an op name (see fuseeng ops)")
           :format(name, field, i, type(op) == "string" and "'" .. op .. "'" or "a " .. type(op)), 3)
    end
  end
end

--- Make a policy from its description; errors point at the caller's line.
function fe.policy(spec)
  if type(spec) ~= "table" then fail("fe.policy expects a table {name = ..., driver = ...}", 2) end
  local name = spec.name
  if type(name) ~= "string" or name == "" then fail("fe.policy: 'name' must be a non-empty string", 2) end
  for k, v in pairs(spec) do
    local f = FIELDS[k]
    if not f then
      local known = {}
      for n in pairs(FIELDS) do known[#known + 1] = n end
      table.sort(known)
      fail(("policy '%s': unknown field '%s'; known fields are %s"):format(name, tostring(k),
           table.concat(known, ", ")), 2)
    end
    if type(v) ~= f.type and type(v) ~= f.source_type then
      fail(("policy '%s': '%s' is a %s; expected a %s"):format(name, k, type(v), f.source_type or f.type), 2)
    end
  end
  local driver = DRIVERS[spec.driver or ""]
  if not driver then
    fail(("policy '%s': driver '%s' is unknown; expected %s")
         :format(name, tostring(spec.driver), either(DRIVER_NAMES)), 2)
  end
  local p = setmetatable({}, Policy)
  for k, v in pairs(spec) do p[k] = v end
  p.params = p.params or {}
  check_params(name, p.params, 2)
  for _, f in ipairs(core.policy_fields) do
    local k = f.name
    if f.values then
      p[k] = p[k] or f.values[1]
      local ok = false
      for _, w in ipairs(f.values) do ok = ok or p[k] == w end
      if not ok then
        fail(("policy '%s': %s is '%s'; expected %s"):format(name, k, p[k], either(f.values, '"')), 2)
      end
    end
  end
  check_op_list(name, p, "solo_ops", "greedy", '{"matmul", "sdpa"}')
  check_op_list(name, p, "priority_ops", "priority", '{"matmul"}')
  if p.fixed ~= nil and p.driver ~= "priority" then
    fail(("policy '%s': fixed is read by the priority driver only, not by %s"):format(name, p.driver), 2)
  end
  if driver.needs then
    if p[driver.needs] == nil then
      fail(("policy '%s': the %s driver needs %s"):format(name, p.driver, driver.needs_what), 2)
    end
    if COMPILE[driver.needs] then p[driver.needs] = COMPILE[driver.needs](name, p[driver.needs], 2) end
  end
  return p
end

--- Is t a policy made by fe.policy or a combinator? (By marker: each
--- script has its own instance of this library.)
function fe.is_policy(t)
  local mt = type(t) == "table" and getmetatable(t)
  return type(mt) == "table" and mt.__fuseeng_policy == true
end

--- The policy's own verdict on a group: decide's answer; without a decide
--- hook, yes (such a policy fuses every legal candidate, alone or combined).
function Policy:verdict(group, ctx)
  if not self.decide then return true, "no decide hook: fuses every legal candidate" end
  local v, reason = self:decide(group, ctx)
  if v ~= nil and type(v) ~= "boolean" then
    -- The message has no line of its own: give decide's.
    local place = core.where(self.decide)
    error(("%spolicy '%s': decide returned a %s; expected true, false or nil")
          :format(place and place .. ": " or "", self.name, type(v)), 0)
  end
  if reason ~= nil and type(reason) ~= "string" then reason = tostring(reason) end
  return v, reason
end

local function word(v) return v == true and "yes" or v == false and "no" or "no opinion" end

-- A param value as text, stable across runs (sets list their items sorted).
local function show(v)
  if fe.is_set(v) then
    local items = {}
    for k in pairs(v) do items[#items + 1] = tostring(k) end
    table.sort(items)
    return "{" .. table.concat(items, ",") .. "}"
  end
  return tostring(v)
end

-- Fail: p has no param key; level is the caller's, as for fail.
local function no_param(p, key, level)
  local known = {}
  for n in pairs(p.params) do known[#known + 1] = n end
  table.sort(known)
  local hint = type(key) == "string" and core.closest(key, known)
  fail(("policy '%s' has no param '%s'%s; its params are: %s"):format(p.name, tostring(key),
       hint and (" (did you mean '%s'?)"):format(hint) or "",
       #known > 0 and table.concat(known, ", ") or "(none)"), level + 1)
end

--- Copy of p with params replaced by (typed) overrides; names must exist.
function fe.with(p, overrides, suffix)
  if not fe.is_policy(p) then fail("fe.with expects a policy and a table of params", 2) end
  if type(overrides) ~= "table" then fail("fe.with expects a table of params", 2) end
  local q = setmetatable({}, Policy)
  for k, v in pairs(p) do q[k] = v end
  q.params = {}
  for k, v in pairs(p.params) do q.params[k] = v end
  local parts = {}
  for k, v in pairs(overrides) do
    local old = p.params[k]
    if old == nil then no_param(p, k, 2) end
    if type(v) ~= type(old) and not (fe.is_set(old) and type(v) == "table") then
      fail(("param '%s' of policy '%s' is a %s; got a %s"):format(k, p.name, type(old), type(v)), 2)
    end
    q.params[k] = v
    parts[#parts + 1] = k .. "=" .. show(v)
  end
  table.sort(parts)
  if #parts > 0 and suffix ~= false then q.name = p.name .. "{" .. table.concat(parts, ",") .. "}" end
  -- Combinations pass overrides to every child that has the param.
  if p.children then
    q.children = {}
    for i, c in ipairs(p.children) do
      local mine = {}
      for k, v in pairs(overrides) do if c.params[k] ~= nil then mine[k] = v end end
      q.children[i] = next(mine) and fe.with(c, mine, false) or c
    end
  end
  return q
end

--- Override one param given as text (the CLI's --param k=v), typed by the
--- param's default; returns the new policy.
function fe.set_param(p, key, text)
  if not fe.is_policy(p) then fail("fe.set_param expects a policy", 2) end
  local old = p.params[key]
  if old == nil then no_param(p, key, 2) end
  local v
  if type(old) == "number" then
    v = tonumber(text)
    if not v then fail(("param '%s' of policy '%s' is a number; '%s' is not"):format(key, p.name, text), 2) end
    if math.type(old) == "integer" and math.type(v) ~= "integer" then
      local i = math.tointeger(v)
      if not i then fail(("param '%s' of policy '%s' is an integer; '%s' is not"):format(key, p.name, text), 2) end
      v = i
    end
  elseif type(old) == "boolean" then
    local b = ({ ["true"] = true, yes = true, on = true, ["1"] = true,
                 ["false"] = false, no = false, off = false, ["0"] = false })[text]
    if b == nil then fail(("param '%s' of policy '%s' is a boolean; give true or false, not '%s'")
                          :format(key, p.name, text), 2) end
    v = b
  elseif fe.is_set(old) then
    local items = {}
    for item in text:gmatch("[^,%s]+") do items[#items + 1] = item end
    v = fe.set(items)
  else
    v = text
  end
  return fe.with(p, { [key] = v })
end

-- Combinators: rule(opinions) -> verdict, summary. Each opinion is
-- {policy = child, verdict = v, reason = r}.
local RULES = {
  all = function(ops)
    local yes = false
    for _, o in ipairs(ops) do
      if o.verdict == false then return false end
      if o.verdict == true then yes = true end
    end
    return yes or nil
  end,
  any = function(ops)
    local no = false
    for _, o in ipairs(ops) do
      if o.verdict == true then return true end
      if o.verdict == false then no = true end
    end
    if no then return false end
    return nil
  end,
  chain = function(ops)
    for _, o in ipairs(ops) do
      if o.verdict ~= nil then return o.verdict end
    end
    return nil
  end,
  vote = function(ops)
    local yes, no = 0, 0
    for _, o in ipairs(ops) do
      if o.verdict == true then yes = yes + 1 elseif o.verdict == false then no = no + 1 end
    end
    if yes + no == 0 then return nil end
    return yes > no   -- a tie does not fuse
  end,
}

local function combine(how, list, level)
  if type(list) ~= "table" or #list == 0 then
    fail(("fe.%s expects a list of policies"):format(how), level + 1)
  end
  local names = {}
  for i, c in ipairs(list) do
    if not fe.is_policy(c) then
      fail(("fe.%s: item %d is a %s, not a policy"):format(how, i, type(c)), level + 1)
    end
    if c.driver == "plan" then
      fail(("fe.%s: policy '%s' uses the plan driver, whose whole plans cannot be combined")
           :format(how, c.name), level + 1)
    end
    names[i] = c.name
  end
  local first = list[1]
  local p = setmetatable({}, Policy)
  for k, v in pairs(first) do p[k] = v end
  p.name = how .. "(" .. table.concat(names, ",") .. ")"
  p.description = how .. " of " .. table.concat(names, ", ")
  p.source = nil   -- each child names its own
  p.children = list
  p.combine = how
  p.params = {}
  for _, c in ipairs(list) do
    for k, v in pairs(c.params) do if p.params[k] == nil then p.params[k] = v end end
  end
  -- The strictest fallback of the children applies to the whole.
  p.fallback_on_error = "unfused"
  for _, c in ipairs(list) do
    if c.fallback_on_error == "stop" then p.fallback_on_error = "stop" end
  end
  -- One child whose verdicts need re-asking makes the whole re-ask; the
  -- whole is remembered by structure only if every child may be.
  -- A child's solo_ops spare the driver candidates that child refuses;
  -- whether the whole refuses them depends on the rule: the whole has none.
  p.reask, p.memo, p.solo_ops = nil, nil, nil
  for _, c in ipairs(list) do
    if c.reask then p.reask = true end
  end
  local memo = true
  for _, c in ipairs(list) do memo = memo and c.memo == true end
  if memo then p.memo = true end
  local rule = RULES[how]
  p.decide = function(self, group, ctx)
    local ops, parts = {}, {}
    for i, c in ipairs(self.children) do
      local v, r = c:verdict(group, ctx)
      ops[i] = { policy = c, verdict = v, reason = r }
      parts[i] = c.name .. ": " .. word(v) .. (r and r ~= "" and (" (" .. r .. ")") or "")
      -- chain stops at the first opinion: later policies are not asked.
      if how == "chain" and v ~= nil then break end
    end
    local v = rule(ops)
    return v, how .. " -> " .. word(v) .. "; " .. table.concat(parts, "; ")
  end
  return p
end

function fe.all(list) return combine("all", list, 2) end
function fe.any(list) return combine("any", list, 2) end
function fe.chain(list) return combine("chain", list, 2) end
function fe.vote(list) return combine("vote", list, 2) end

--- Combine by name ("all", "any", "chain", "vote"), for the engine.
function fe.combine(how, list)
  if not RULES[how] then
    fail(("unknown combinator '%s'; expected all, any, chain or vote"):format(tostring(how)), 2)
  end
  return combine(how, list, 2)
end

--- Human-readable quantities for reason strings.
local BYTE_UNITS = { "B", "KiB", "MiB", "GiB", "TiB" }   -- not a new table per call: hooks format reasons
function fe.fmt_bytes(n)
  local units, i = BYTE_UNITS, 1
  while math.abs(n) >= 1024 and i < #units do n = n / 1024; i = i + 1 end
  return i == 1 and ("%d B"):format(n) or ("%.1f %s"):format(n, units[i])
end

function fe.fmt_time(s)
  if math.abs(s) < 1e-3 then return ("%.1f us"):format(s * 1e6) end
  if math.abs(s) < 1 then return ("%.3f ms"):format(s * 1e3) end
  return ("%.3f s"):format(s)
end

--- The numbers a driver reads from a policy's params, at their defaults
--- (core/script/drivers.c owns them; the greedy driver's window and
--- max_rounds), with extra's params added: a policy whose params should let
--- --param tune the driver declares params = fe.driver_params("greedy", {...}).
function fe.driver_params(name, extra)
  local d = DRIVERS[name]
  if not d then
    fail(("fe.driver_params: driver '%s' is unknown; expected %s"):format(tostring(name), either(DRIVER_NAMES)), 2)
  end
  if extra ~= nil and type(extra) ~= "table" then fail("fe.driver_params expects a table of params", 2) end
  local params = {}
  for k, v in pairs(d.params) do params[k] = v end
  for k, v in pairs(extra or {}) do params[k] = v end
  return params
end

return fe
