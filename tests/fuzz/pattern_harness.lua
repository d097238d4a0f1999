-- tests/fuzz/pattern_harness.lua: the Lua half of the pattern fuzz target
-- (fuzz_pattern.c, which says what it checks). Returns the function called
-- with each input; it raises "fuzz-bug: ..." when the DSL breaks a promise.
local pattern = require "fuseeng.pattern"

local function bug(fmt, ...) error("fuzz-bug: " .. fmt:format(...), 0) end

local function node(op)
  return { op = op, pattern = pattern.ops[op] and pattern.ops[op].kind or "opaque" }
end

-- A small graph for expression patterns: tensors link to their producers.
local graph = {}
local function op_node(op, inputs, attrs)
  local n = node(op)
  n.inputs, n.attrs = inputs, attrs or {}
  n.out = { name = op .. #graph, producer = n }
  graph[#graph + 1] = n
  return n.out
end
local function tensor(name) return { name = name } end
do
  local x, r, w = tensor("x"), tensor("r"), tensor("w")
  local h = op_node("add", { x, r })
  local n = op_node("rms_norm", { h, w }, { eps = 1e-6 })
  local g = op_node("matmul", { n, tensor("w1") })
  local u = op_node("matmul", { n, tensor("w2") })
  local a = op_node("silu", { g })
  local p = op_node("mul", { a, u })
  local s = op_node("mul", { p }, { scalar = 0.5 })
  local y = op_node("add", { op_node("matmul", { s, tensor("w3") }), h })
  op_node("softmax", { op_node("exp", { op_node("neg", { y }) }) }, { axis = -1 })
  op_node("sub", { x, x })
end

-- Sequences over the ops a pattern names and a few others, from a fixed
-- LCG (the same sequences on every run).
local OTHERS = { "add", "mul", "relu", "matmul", "softmax", "rms_norm", "custom" }
local function sequences(p)
  local alphabet = {}
  for _, op in ipairs(p._named or {}) do alphabet[#alphabet + 1] = op end
  for _, op in ipairs(OTHERS) do alphabet[#alphabet + 1] = op end
  local state, out = 7, {}
  local function random(lo, hi)
    state = (state * 1103515245 + 12345) % 2147483648
    return lo + (state // 65536) % (hi - lo + 1)
  end
  for k = 1, 24 do
    local s = {}
    for i = 1, random(0, 7) do s[i] = node(alphabet[random(1, #alphabet)]) end
    out[k] = s
  end
  return out
end

return function(src)
  local ok, p = pcall(pattern.compile, src, "fuzz")
  if not ok then
    if type(p) ~= "string" then bug("compile raised a %s, not a message", type(p)) end
    if p:sub(1, 5) ~= "fuzz:" and not p:find("^fuzz$") then
      bug("compile failed without the pattern's place: %s", p)
    end
    return
  end
  if p.kind == "chain" then
    for _, s in ipairs(sequences(p)) do
      local n = p:match(s)
      local tok_ok, e = pcall(p.match_tokens, p, pattern.tokens(s), 1)
      if not tok_ok then
        if not tostring(e):find("too many matcher states", 1, true) then
          bug("match_tokens failed: %s", tostring(e))
        end
        return
      end
      local want = n and #pattern.tokens(s, 1, n) + 1
      if e ~= want then
        bug("match gives %s, match_tokens %s on %s", tostring(n), tostring(e), pattern.tokens(s))
      end
    end
  elseif p.kind == "expr" then
    for _, n in ipairs(graph) do p:match_expr(n) end
  else
    bug("compile gave a pattern of kind %s", tostring(p.kind))
  end
end
