-- fuseeng.dataflow: the hardware data-flow DSL. An HDFG (seed 002, TVM
-- fuse_op_hw for the OPU accelerator) lists the accelerator's modules as
-- steps and the order data may flow through them; the `dataflow` driver packs
-- ops into one group for as long as each op maps to a step further along the
-- flow than the previous op's step, and opens a new group when it cannot.
--
-- Note on the language and on FindMatch
--
--   concat -> add_pre -> mul_pre -> pad -> ipa -> mul -> add -> {compare, pool_pad, res_add}
--   compare -> {pool, res_add, upsample}      -- a branch set fans out (or in)
--   ipa = conv2d                              -- the ops a step accepts (names from
--   compare = relu | maximum                  -- the op registry; default: the op
--                                             -- of the step's own name)
--   root = concat                             -- default: first step of first chain
--
-- Statements end at a newline or ';' and may continue on the next line after
-- '->', '{', ',', '=' or '|'. The flow may have cycles (compare -> pool ->
-- compare): the hardware can route data around its post-processing units.
--
-- h:find_match(op, last) is the seed's HDFG::FindMatch without its side
-- effect (the caller keeps `last`):
--
--   last == nil  breadth-first from the root, the root itself included;
--   otherwise    breadth-first from last's successors, with `last` marked
--                visited up front, so a cycle may lead back to `last` only
--                through a direct self edge.
--
-- Successors are queued in declaration order; the first step popped that
-- accepts `op` wins. The search order from each step never changes, so it
-- is computed once per step and the answer memoised per (last, op): the
-- driver asks once per node and pays a table lookup.

local dsl = require "fuseeng.dsl"
local core = require "fuseeng.core"

local P, R, S, V, C, Cp, Ct, expect, fail = dsl.vocabulary()

local dataflow = {}

---------------------------------------------------------------------------
-- Grammar. Statements come out as {tag = "chain" | "alias" | "root", ...},
-- each name (of a step or an op) as {name = , pos = } so later checks can
-- point at it.

local function ref(pos, name) return { name = name, pos = pos } end
local function chain_stmt(elements) return { tag = "chain", elements = elements } end
local function alias_stmt(step, ops) return { tag = "alias", step = step, ops = ops } end
local function root_stmt(pos, step) return { tag = "root", step = step, pos = pos } end

local word_char = R("az", "AZ", "09") + "_"
local identifier = (R("az", "AZ") + "_") * word_char^0
local comment = "--" * (1 - P"\n")^0
local blank = (S" \t\r" + comment)^0          -- inside a statement's line
local gap = (S" \t\r\n" + comment)^0          -- where the statement must go on
local between = (S" \t\r\n;" + comment)^0     -- between statements
local statement_end = #S";\n" + -1

local STEP = "expected a step name"

local grammar = P{ "program",
  program    = Ct((between * V"statement")^0) * between
               * expect(-1, "expected a chain 'a -> b', 'step = op | op' or 'root = step'"),
  statement  = V"root" + V"alias" + V"chain",
  root       = Cp() * "root" * -word_char * blank * "=" * gap * expect(V"step_name", STEP)
               * blank * expect(statement_end, "expected ';' or end of line") / root_stmt,
  alias      = V"step_name" * blank * "=" * gap
               * expect(Ct(V"op_name" * (blank * "|" * gap * expect(V"op_name", "expected an op name"))^0),
                        "expected an op name")
               * blank * expect(statement_end, "expected '|', ';' or end of line") / alias_stmt,
  chain      = Ct(V"element" * (blank * "->" * gap * expect(V"element", "expected a step name or '{'"))^0)
               * blank * expect(statement_end, "expected '->', ';' or end of line") / chain_stmt,
  element    = Ct(V"step_name") + V"branches",
  branches   = "{" * gap * expect(Ct(V"step_name" * (gap * "," * gap * expect(V"step_name", STEP))^0), STEP)
               * gap * expect("}", "expected ',' or '}'"),
  step_name  = Cp() * C(identifier) / ref,
  op_name    = Cp() * C(identifier) / ref,
}

---------------------------------------------------------------------------
-- Meaning: steps, edges, accepted ops, root; every name checked.

local function step_names(steps)
  local names = {}
  for name in pairs(steps) do names[#names + 1] = name end
  table.sort(names)
  return names
end

local function where(src, pos)
  local line, col = dsl.position(src, pos)
  return line .. ":" .. col
end

-- An alias that names an op no graph has can never match: a typo.
local function check_op(op, ops)
  if ops and not ops[op.name] then
    local names = {}
    for known in pairs(ops) do names[#names + 1] = known end
    table.sort(names)
    fail(op.pos, string.format("unknown op '%s'%s", op.name, dsl.suggest(op.name, names)))
  end
end

local function build_graph(statements, src, ops)
  local steps, order, linked = {}, {}, {}
  local first_chain
  local function declare(r)
    if r.name == "root" then fail(r.pos, "'root' is reserved for 'root = step'; name the step otherwise") end
    if not steps[r.name] then
      steps[r.name] = { succ = {}, pos = r.pos }
      order[#order + 1] = r.name
      linked[r.name] = {}
    end
  end
  for _, st in ipairs(statements) do
    if st.tag == "chain" then
      first_chain = first_chain or st
      for _, element in ipairs(st.elements) do
        for _, r in ipairs(element) do declare(r) end
      end
      for i = 2, #st.elements do
        for _, from in ipairs(st.elements[i - 1]) do
          for _, to in ipairs(st.elements[i]) do
            if not linked[from.name][to.name] then
              linked[from.name][to.name] = true
              local succ = steps[from.name].succ
              succ[#succ + 1] = to.name
            end
          end
        end
      end
    end
  end
  if not first_chain then fail(1, "empty data flow: expected a chain such as 'a -> b'") end

  local aliased, root = {}, nil
  for _, st in ipairs(statements) do
    if st.tag == "alias" then
      local r = st.step
      local step = steps[r.name]
      if not step then
        fail(r.pos, string.format("'%s' is not a step of any chain%s", r.name, dsl.suggest(r.name, step_names(steps))))
      end
      if aliased[r.name] then
        fail(r.pos, string.format("the ops of '%s' were already given at %s", r.name, where(src, aliased[r.name])))
      end
      aliased[r.name] = r.pos
      step.ops = {}
      for _, op in ipairs(st.ops) do
        check_op(op, ops)
        step.ops[op.name] = true
      end
    elseif st.tag == "root" then
      if root then fail(st.pos, "the root was already given at " .. where(src, root.pos)) end
      if not steps[st.step.name] then
        fail(st.step.pos, string.format("root '%s' is not a step of any chain%s", st.step.name,
          dsl.suggest(st.step.name, step_names(steps))))
      end
      root = st
    end
  end
  for name, step in pairs(steps) do
    if not step.ops then step.ops = { [name] = true } end
  end
  return steps, order, root and root.step.name or first_chain.elements[1][1].name
end

-- The order in which the seed's FindMatch pops steps: queue `first`, mark
-- `skip` visited up front, mark on pop, queue unvisited successors. Only the
-- first pop of each step is listed, since a second pop can match nothing new.
local function search_order(steps, first, skip)
  local visited, listed, order, queue, head = {}, {}, {}, {}, 1
  if skip then visited[skip] = true end
  for i, name in ipairs(first) do queue[i] = name end
  while queue[head] do
    local name = queue[head]
    head = head + 1
    if not listed[name] then listed[name] = true; order[#order + 1] = name end
    visited[name] = true
    for _, nxt in ipairs(steps[name].succ) do
      if not visited[nxt] then queue[#queue + 1] = nxt end
    end
  end
  return order
end

---------------------------------------------------------------------------
-- Compiled data flows.

local FROM_ROOT = {}   -- memo key for searches that start at the root

local Dataflow = {}
Dataflow.__index = Dataflow

-- The step `op` maps to when the previous op mapped to step `last` (nil:
-- start of a group), or nil. See the note at the top.
function Dataflow:find_match(op, last)
  if op == nil then return nil end
  local key = last == nil and FROM_ROOT or last
  local memo = self._memo[key]
  if memo == nil then
    if last ~= nil and not self.steps[last] then error("find_match: '" .. tostring(last) .. "' is not a step", 2) end
    memo = {}
    self._memo[key] = memo
  end
  local hit = memo[op]
  if hit == nil then
    hit = false
    local steps = self.steps
    for _, name in ipairs(self._orders[key]) do
      if steps[name].ops[op] then hit = name; break end
    end
    memo[op] = hit
  end
  return hit or nil
end

-- Does any step accept `op`? (The seed's `op_map` membership: ops that do
-- not map join the current group without moving along the flow.)
function Dataflow:maps(op)
  return self._accepting[op] ~= nil
end

-- The steps that accept `op`, in declaration order (a fresh array).
function Dataflow:steps_for(op)
  local list, out = self._accepting[op], {}
  if list then for i, name in ipairs(list) do out[i] = name end end
  return out
end

-- The seed's GraphMatchFuser::Partition over ops already in execution order:
-- groups[i] is op i's group number, or false for an op some step accepts but
-- that cannot start a flow either (the seed logs an error and leaves it
-- alone); steps[i] is the step it mapped to, or false. The C driver does the
-- same over the graph; this is its reference and the tests' oracle.
function Dataflow:partition(ops)
  local groups, steps = {}, {}
  local last, group, used = nil, 1, false
  for i, op in ipairs(ops) do
    local step = self:find_match(op, last)
    if step then
      last, groups[i], steps[i], used = step, group, step, true
    else
      if last == nil then last = self.root end   -- FindMatch leaves last_match at the root
      if self:maps(op) then
        step = self:find_match(op, nil)
        if step then
          if used then group = group + 1 end
          last, groups[i], steps[i], used = step, group, step, true
        else
          last, groups[i], steps[i] = self.root, false, false
        end
      else
        groups[i], steps[i], used = group, false, true
      end
    end
  end
  return groups, steps
end

local function compile(src, chunk, ops)
  local statements = grammar:match(src)
  local steps, order, root = build_graph(statements, src, ops)

  -- Everything must be reachable from the root: a step that is not can
  -- never be matched, which is a mistake in the flow, not a feature of it.
  local reach = {}
  for _, name in ipairs(search_order(steps, { root })) do reach[name] = true end
  for _, name in ipairs(order) do
    if not reach[name] then
      fail(steps[name].pos, string.format("step '%s' cannot be reached from the root '%s', so it can never match", name, root))
    end
  end

  local orders = { [FROM_ROOT] = search_order(steps, { root }) }
  for _, name in ipairs(order) do
    orders[name] = search_order(steps, steps[name].succ, name)
  end
  local accepting = {}
  for _, name in ipairs(order) do
    for op in pairs(steps[name].ops) do
      local list = accepting[op] or {}
      list[#list + 1] = name
      accepting[op] = list
    end
  end
  return setmetatable({
    root = root, steps = steps, order = order, source = src, chunk = chunk,
    _orders = orders, _accepting = accepting, _memo = {},
  }, Dataflow)
end

-- Compile a data flow; raise "chunk:line:col: message", the line and a caret.
-- Ops named in aliases must be in the op registry (fuseeng.core.ops);
-- opts.ops replaces it (a set of names), or is false to accept any name.
function dataflow.compile(src, chunkname, opts)
  local chunk = chunkname or "dataflow"
  if type(src) ~= "string" then error("dataflow.compile: source must be a string", 2) end
  local ops = opts and opts.ops
  if ops == nil then ops = core.ops end
  local h, failure = dsl.try(compile, src, chunk, ops)
  if not h then dsl.raise(chunk, src, failure) end
  return h
end

return dataflow
