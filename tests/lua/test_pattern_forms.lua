-- tests/lua/test_pattern_forms.lua: TAP tests of the expression-pattern forms
-- that match decomposed exports (lua/fuseeng/pattern.lua): optional ops
-- (`cast?(x)`), bound sub-expressions (`x := e`) and scalar variables
-- (`#eps`). Runs inside the engine: `build/fuseeng script` this file.

local pattern = require "fuseeng.pattern"

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
local function compile_error(src, want, name)
  local ok, err = pcall(pattern.compile, src)
  report(not ok and tostring(err):find(want, 1, true) ~= nil, name, ok and "compiled" or err)
end

-- Fixtures: tensors link to their producers, nodes to their inputs.
local function tensor(name, producer) return { name = name, producer = producer } end
local function op_node(name, op, inputs, attrs)
  local n = { name = name, op = op, pattern = pattern.ops[op].kind, inputs = inputs, attrs = attrs }
  n.out = tensor(name, n)
  return n
end
-- (bindings, nodes) -> {variable = tensor name or number}, "node node ..."
local function summary(b, nodes)
  if not b then return nil end
  local out, ns = {}, {}
  for k, v in pairs(b) do out[k] = type(v) == "table" and v.name or v end
  for i, n in ipairs(nodes) do ns[i] = n.name end
  return { out, table.concat(ns, " ") }
end

-- HF LLaMA's RMSNorm after a residual add, as torch.export writes it:
--   h = add(a, r); x = cast(h); v = mean(pow(x, 2)) + eps; y = cast(x * rsqrt(v)); out = w * y
local a, r, w = tensor"a", tensor"r", tensor"w"
local add = op_node("add", "add", { a, r })
local x = op_node("x", "cast", { add.out }, { dtype = "f32" })
local sq = op_node("sq", "pow", { x.out }, { scalar = 2 })
local mean = op_node("mean", "mean", { sq.out }, { axes = { -1 }, keepdim = true })
local eps = op_node("eps", "add", { mean.out }, { scalar = 1e-5 })
local rs = op_node("rs", "rsqrt", { eps.out })
local scaled = op_node("scaled", "mul", { x.out, rs.out })
local y = op_node("y", "cast", { scaled.out }, { dtype = "f16" })
local out = op_node("out", "mul", { w, y.out })
local NORM = "w * cast?(%s * rsqrt(mean(pow(x, 2)) + #eps))"

is(summary(pattern.compile(NORM:format("(x := cast?(a + r))")):match_expr(out)),
   { { a = "a", r = "r", w = "w", x = "x", eps = 1e-5 }, "add x sq mean eps rs scaled y out" },
   "x := cast?(a + r): the bound tensor's producers join the match, the scalar is bound")
is(summary(pattern.compile(NORM:format("x")):match_expr(out)),
   { { w = "w", x = "x", eps = 1e-5 }, "sq mean eps rs scaled y out" }, "a plain x leaves its producers out")
is(summary(pattern.compile(NORM:format("(x := cast?(h))")):match_expr(out)),
   { { h = "add", w = "w", x = "x", eps = 1e-5 }, "x sq mean eps rs scaled y out" },
   "an optional op that is there is matched")

-- The same norm without casts, weight on the right: x * rsqrt(mean(x * x) + eps) * w.
local sq2 = op_node("sq2", "mul", { add.out, add.out })
local mean2 = op_node("mean2", "mean", { sq2.out }, { axes = { -1 }, keepdim = true })
local eps2 = op_node("eps2", "add", { mean2.out }, { scalar = 1e-6 })
local rs2 = op_node("rs2", "rsqrt", { eps2.out })
local scaled2 = op_node("scaled2", "mul", { add.out, rs2.out })
local out2 = op_node("out2", "mul", { scaled2.out, w })
is(summary(pattern.compile("w * cast?((x := cast?(a + r)) * rsqrt(mean(x * x) + #eps))"):match_expr(out2)),
   { { a = "a", r = "r", w = "w", x = "add", eps = 1e-6 }, "add sq2 mean2 eps2 rs2 scaled2 out2" },
   "absent optional ops: their operand stands for them")
is(pattern.compile("w * cast(x * rsqrt(mean(x * x) + #eps))"):match_expr(out2), nil,
   "a required op that is absent fails")
is(pattern.compile("w * cast?((x := cast?(a + r)) * rsqrt(mean(x * x) + #eps))"):match_expr(out), nil,
   "x * x does not match pow(x, 2)")

-- An optional op whose node is there but whose operand does not match:
-- the operand pattern is then tried on the node's own output.
local t = tensor"t"
local c1 = op_node("c1", "cast", { t }, { dtype = "f16" })
is(summary(pattern.compile("relu(cast?(cast(x)))"):match_expr(op_node("r", "relu", { c1.out }))),
   { { x = "t" }, "c1 r" }, "an optional op that is there but does not lead to a match is skipped")

-- A bound name used again must be the same tensor, whichever comes first.
local other = op_node("other", "mul", { tensor"z", rs.out })
is(pattern.compile(NORM:format("(x := cast?(h))")):match_expr(op_node("o", "mul", { w, other.out })), nil,
   "x := e and x must be one tensor")
is(summary(pattern.compile("(x := silu(g)) + x"):match_expr(op_node("s", "add", { x.out, x.out }))), nil,
   "a binding's body must match too")
local sl = op_node("sl", "silu", { tensor"g" })
is(summary(pattern.compile("x + (x := silu(g))"):match_expr(op_node("s2", "add", { sl.out, sl.out }))),
   { { g = "g", x = "sl" }, "sl s2" }, "the plain occurrence may come first")

-- Scalar variables: any scalar, the same one where the name repeats.
local h1 = op_node("h1", "mul", { tensor"t" }, { scalar = 0.5 })
local h2 = op_node("h2", "add", { h1.out }, { scalar = 0.5 })
local h3 = op_node("h3", "add", { h1.out }, { scalar = 0.25 })
is(summary(pattern.compile("t * #c + #c"):match_expr(h2)), { { c = 0.5, t = "t" }, "h1 h2" }, "#c twice, one value")
is(pattern.compile("t * #c + #c"):match_expr(h3), nil, "#c twice, two values")
is(pattern.compile("#c + t"):match_expr(op_node("h4", "add", { tensor"t", tensor"u" })), nil,
   "#c does not bind a tensor")

compile_error("cast?(x)", "the root of an expression pattern cannot be optional", "optional root")
compile_error("silu(x) * add?(x, y)", "an optional op (add?) takes one operand", "optional op with two operands")
compile_error("x * #x", "'x' names a tensor elsewhere in the pattern", "one name, tensor and scalar")
compile_error("(x := silu(a)) * (x := relu(b))", "'x' is bound to an expression twice", "bound twice")
compile_error("x * # ", "expected a name after '#'", "# without a name")
compile_error("x * cst?(y)", "unknown op 'cst'", "optional op names are checked")

print(string.format("1..%d", count))
if failed > 0 then error(failed .. " tests failed", 0) end
