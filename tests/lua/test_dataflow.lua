-- tests/lua/test_dataflow.lua: TAP tests of the hardware data-flow DSL (lua/fuseeng/dataflow.lua).
-- Runs inside the engine (`build/fuseeng script tests/lua/test_dataflow.lua`), which
-- provides fuseeng.core (the op registry the DSL checks names against).

if not pcall(require, "fuseeng.dataflow") then package.path = "lua/?.lua;" .. package.path end
local dataflow = require "fuseeng.dataflow"

---------------------------------------------------------------------------
-- A TAP harness small enough to repeat in each test file.

local count, failed = 0, 0

local function report(pass, name, detail)
  count = count + 1
  print(string.format("%s %d - %s", pass and "ok" or "not ok", count, name))
  if not pass then
    failed = failed + 1
    if detail then print("# " .. tostring(detail):gsub("\n", "\n# ")) end
  end
end

local function show(v)
  if type(v) ~= "table" then return string.format("%q", v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. show(v[k]) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function is(got, want, name)
  local g, w = show(got), show(want)
  report(g == w, name, "got " .. g .. "\nwant " .. w)
end

local function compile_error(src, want, name, chunk)
  local ok, err = pcall(dataflow.compile, src, chunk)
  if ok then return report(false, name, "no error raised") end
  report(err == want, name, "got:\n" .. tostring(err) .. "\nwant:\n" .. want)
end

-- The step each op maps to, FindMatch style: from the previous match, and
-- with no restart (nil where the flow cannot take the op).
local function walk(h, ops)
  local out, last = {}, nil
  for i, op in ipairs(ops) do
    local step = h:find_match(op, last)
    out[i] = step or false
    last = step or last
  end
  return out
end

local function set(list)
  local t = {}
  for _, v in ipairs(list) do t[v] = true end
  return t
end

---------------------------------------------------------------------------
-- The seed's HDFG (TVM fuse_op_hw for the OPU, seed 002).

local SEED = [[
concat -> add_pre -> mul_pre -> pad -> ipa -> mul -> add -> {compare, pool_pad, res_add}
pool_pad -> pool
compare -> {pool, res_add, upsample}
pool -> {compare, res_add, upsample}
res_add -> {compare, pool, upsample}
ipa = conv2d
add_pre = add
mul_pre = mul
compare = relu | maximum
pool = max_pool2d | avg_pool2d
]]

local h = dataflow.compile(SEED)

is(h.root, "concat", "root is the first step of the first chain")
is(h.order, { "concat", "add_pre", "mul_pre", "pad", "ipa", "mul", "add", "compare", "pool_pad",
              "res_add", "pool", "upsample" }, "steps in declaration order")
do
  local succ = {}
  for name, step in pairs(h.steps) do succ[name] = step.succ end
  is(succ, {
    concat = { "add_pre" }, add_pre = { "mul_pre" }, mul_pre = { "pad" }, pad = { "ipa" },
    ipa = { "mul" }, mul = { "add" }, add = { "compare", "pool_pad", "res_add" },
    pool_pad = { "pool" }, compare = { "pool", "res_add", "upsample" },
    pool = { "compare", "res_add", "upsample" }, res_add = { "compare", "pool", "upsample" },
    upsample = {},
  }, "successors, in declaration order, as the seed's LinkFromTo calls")
end
is(h.steps.compare.ops, set{ "relu", "maximum" }, "alias with alternatives")
is(h.steps.ipa.ops, set{ "conv2d" }, "alias replaces the step's own name")
is(h.steps.upsample.ops, set{ "upsample" }, "a step without alias accepts its own name")

is({ h:maps("conv2d"), h:maps("ipa"), h:maps("upsample"), h:maps("matmul") }, { true, false, true, false }, "maps")
is(h:steps_for("add"), { "add_pre", "add" }, "steps_for: declaration order")
is(h:steps_for("max_pool2d"), { "pool" }, "steps_for: one step")
is(h:steps_for("matmul"), {}, "steps_for: none")
do
  local list = h:steps_for("add")
  list[1] = "clobbered"
  is(h:steps_for("add"), { "add_pre", "add" }, "steps_for returns a fresh array")
end

local OPS = { "concat", "add", "mul", "pad", "conv2d", "mul", "add", "relu", "pad", "max_pool2d" }

is(walk(h, OPS), { "concat", "add_pre", "mul_pre", "pad", "ipa", "mul", "add", "compare", false, "pool" },
  "find_match along the seed's flow; the second pad does not fit")
is(h:find_match("concat", nil), "concat", "find_match from nothing: the root")
is(h:find_match("pad", "compare"), nil, "no second pad after compare")
is(h:find_match("pad", nil), "pad", "restart: breadth-first from the root finds pad")
is(h:find_match("max_pool2d", "pad"), "pool", "after the restart, pooling is reachable again")
is(h:find_match("add", "concat"), "add_pre", "add after concat is add_pre")
is(h:find_match("add", "mul"), "add", "add after mul is add")
is(h:find_match("add", nil), "add_pre", "breadth-first: add_pre is nearer the root than add")
is(h:find_match("relu", "pool"), "compare", "cycle: pool -> compare")
is(h:find_match("max_pool2d", "compare"), "pool", "cycle: compare -> pool")
is(h:find_match("relu", "compare"), nil, "the last step is visited: no way back to compare through pool")
is(h:find_match("upsample", "add"), "upsample", "two steps away, through the branch set")
is(h:find_match("conv2d", "upsample"), nil, "upsample is the end of the flow")
is(h:find_match("matmul", "concat"), nil, "an op no step accepts")
do
  local ok, err = pcall(h.find_match, h, "relu", "nowhere")
  report(not ok and tostring(err):find("'nowhere' is not a step", 1, true) ~= nil, "find_match: unknown last step", err)
end

do
  local groups, steps = h:partition(OPS)
  is(groups, { 1, 1, 1, 1, 1, 1, 1, 1, 2, 2 }, "partition: the second pad opens group 2")
  is(steps, { "concat", "add_pre", "mul_pre", "pad", "ipa", "mul", "add", "compare", "pad", "pool" },
    "partition: steps")
  local g2 = h:partition({ "concat", "reshape", "add", "conv2d", "relu", "concat" })
  is(g2, { 1, 1, 1, 1, 1, 2 }, "partition: unmapped ops join the current group; a second concat restarts")
  local g3 = h:partition({ "relu", "relu", "max_pool2d", "relu" })
  is(g3, { 1, 2, 2, 2 }, "partition: relu, relu cannot share a pass; relu, pool, relu can")
  local g4, s4 = h:partition({ "upsample", "upsample" })
  is({ g4, s4 }, { { 1, 2 }, { "upsample", "upsample" } }, "partition: each upsample ends a pass")
end

---------------------------------------------------------------------------
-- The rest of the syntax.

do
  local f = dataflow.compile("a -> {b, c} -> d; d -> a -- back edge\n\n; root = b; b -> c")
  is(f.root, "b", "'root = name' overrides the default")
  is({ f.steps.a.succ, f.steps.b.succ, f.steps.c.succ, f.steps.d.succ },
     { { "b", "c" }, { "d", "c" }, { "d" }, { "a" } },
     "branch set mid-chain fans in; ';' separates; comments; blank statements")
  is(f:find_match("b", nil), "b", "root accepts its own op")
end

do
  local f = dataflow.compile([[
    -- a flow written across lines
    src ->
      {left,
       right} -> sink   -- continues after '->' and inside braces
    left = relu |
           gelu
    right = relu
    sink = add
    src -> left          -- a repeated edge is ignored
  ]])
  is(f.steps.src.succ, { "left", "right" }, "continuation lines; duplicate edges ignored")
  is(f.steps.left.ops, set{ "relu", "gelu" }, "alias continued after '|'")
  is(f:find_match("relu", "src"), "left", "breadth-first ties go to the step declared first")
  is(f:steps_for("relu"), { "left", "right" }, "steps_for over several steps")
end

do
  local f = dataflow.compile("s -> {a, b}; a -> c; b = relu; c = relu")
  is(f:find_match("relu", "s"), "b", "breadth-first: nearer beats declared first")
  local loop = dataflow.compile("a -> a -> b")
  is(loop:find_match("a", "a"), "a", "a direct self edge lets a step repeat")
end

---------------------------------------------------------------------------
-- Errors, with exact positions.

compile_error("", "dataflow:1:1: empty data flow: expected a chain such as 'a -> b'\n\n^", "empty source")
compile_error("-- nothing\n\n", "dataflow:1:1: empty data flow: expected a chain such as 'a -> b'\n-- nothing\n^",
  "only comments")
compile_error("a -> -> b", "dataflow:1:6: expected a step name or '{'\na -> -> b\n     ^", "missing step")
compile_error("a -> {b, c", "dataflow:1:11: expected ',' or '}'\na -> {b, c\n          ^", "unclosed branch set")
compile_error("a -> {}", "dataflow:1:7: expected a step name\na -> {}\n      ^", "empty branch set")
compile_error("a -> b c", "dataflow:1:8: expected '->', ';' or end of line\na -> b c\n       ^",
  "two steps without an arrow")
compile_error("a -> b\nc = ", "dataflow:2:5: expected an op name\nc = \n    ^", "alias without ops")
compile_error("a -> b; b = x |", "dataflow:1:16: expected an op name\na -> b; b = x |\n               ^",
  "alias ending in '|'")
compile_error("a -> b\nb = x y", "dataflow:2:7: expected '|', ';' or end of line\nb = x y\n      ^",
  "alias ops without '|'")
compile_error("a -> b\n-> c", "dataflow:2:1: expected a chain 'a -> b', 'step = op | op' or 'root = step'\n-> c\n^",
  "a line starting with '->'")
compile_error("a -> b\nfoo = relu", "dataflow:2:1: 'foo' is not a step of any chain\nfoo = relu\n^",
  "alias of an undefined step")
compile_error("add_pre -> mul\nadd_pee = add",
  "dataflow:2:1: 'add_pee' is not a step of any chain (did you mean 'add_pre'?)\nadd_pee = add\n^",
  "alias of a misspelt step")
compile_error("a -> b\na = relu\n  a = gelu", "dataflow:3:3: the ops of 'a' were already given at 2:1\n  a = gelu\n  ^",
  "ops given twice")
compile_error("a -> b\nroot = c", "dataflow:2:8: root 'c' is not a step of any chain\nroot = c\n       ^",
  "root is not a step")
compile_error("a -> b -> a\nroot = b\nroot = a", "dataflow:3:1: the root was already given at 2:1\nroot = a\n^",
  "root given twice")
compile_error("a -> b\nc -> d",
  "dataflow:2:1: step 'c' cannot be reached from the root 'a', so it can never match\nc -> d\n^",
  "a chain that can never match")
compile_error("a -> b\nroot = b",
  "dataflow:1:1: step 'a' cannot be reached from the root 'b', so it can never match\na -> b\n^",
  "a root that strands earlier steps")
compile_error("x -> root", "dataflow:1:6: 'root' is reserved for 'root = step'; name the step otherwise\nx -> root\n     ^",
  "'root' as a step name")
compile_error("a ->\tb ->", "opu:1:10: expected a step name or '{'\na ->\tb ->\n    \t    ^",
  "chunk name and a tab before the caret", "opu")

-- Aliases name ops of the registry, as patterns do.
compile_error("a = nosuchop\na -> add", "dataflow:1:5: unknown op 'nosuchop'\na = nosuchop\n    ^",
  "an alias of an unknown op")
compile_error("a -> b\nb = relu | rellu", "dataflow:2:12: unknown op 'rellu' (did you mean 'relu'?)\n"
  .. "b = relu | rellu\n           ^", "a misspelt op among alternatives")
is(dataflow.compile("a -> b\nb = frob", nil, { ops = false }).steps.b.ops, { frob = true },
  "opts.ops = false accepts any op name")
is(dataflow.compile("a -> b\nb = frob", nil, { ops = { frob = true } }).steps.b.ops, { frob = true },
  "opts.ops gives the known ops")

print(string.format("1..%d", count))
if failed > 0 then
  print(string.format("# %d of %d failed", failed, count))
  if rawget(_G, "os") then os.exit(1) end
  error(failed .. " tests failed", 0)
end
