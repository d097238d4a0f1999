-- tests/lua/test_pattern.lua: TAP tests of the op-pattern DSL (lua/fuseeng/pattern.lua).
-- Runs inside the engine (`build/fuseeng script tests/lua/test_pattern.lua`), which
-- provides fuseeng.core (the op registry the DSL checks names against).

if not pcall(require, "fuseeng.pattern") then package.path = "lua/?.lua;" .. package.path end
local pattern = require "fuseeng.pattern"

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

-- `want` is the whole message; with `suffix`, the message after the
-- "file:line: " Lua puts in front of errors raised for the caller.
local function raises(fn, want, name, suffix)
  local ok, err = pcall(fn)
  if ok then return report(false, name, "no error raised") end
  local got = suffix and tostring(err):gsub("^[^:]*:%d+: ", "") or err
  report(got == want, name, "got:\n" .. tostring(err) .. "\nwant:\n" .. want)
end

local function compile_error(src, want, name, chunk, opts)
  raises(function() pattern.compile(src, chunk, opts) end, want, name)
end

---------------------------------------------------------------------------
-- Graph fixtures. Nodes carry .op and .pattern (kind from the op table);
-- expression fixtures link tensors to their producers.

local function node(op, kind)
  return { op = op, pattern = kind or (pattern.ops[op] and pattern.ops[op].kind) }
end

local function seq(ops)
  local t = {}
  for op in ops:gmatch("%S+") do t[#t + 1] = node(op) end
  return t
end

local function tensor(name, producer) return { name = name, producer = producer } end

local function op_node(op, inputs, attrs)
  local n = { op = op, pattern = pattern.ops[op].kind, inputs = inputs, attrs = attrs }
  n.out = tensor(op .. "_out", n)
  return n
end

local function names(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = v.op or v.name end
  return out
end

local function bound_names(bindings)
  if not bindings then return nil end
  local out = {}
  for k, v in pairs(bindings) do out[k] = v.name end
  return out
end

---------------------------------------------------------------------------
-- Chain form: every syntax feature.

do
  local p = pattern.compile("gelu")
  is({ p.kind, p.min_len, p.max_len }, { "chain", 1, 1 }, "single op: kind, min_len, max_len")
  is(p:match(seq"gelu add"), 1, "single op matches one node")
  is(p:match(seq"relu"), nil, "single op: other op is no match")
  is(p:match({}), nil, "single op: empty sequence is no match")
end

do
  local p = pattern.compile("add -> rms_norm")
  is(p:match(seq"add rms_norm"), 2, "add -> rms_norm matches")
is({ p:match(seq"add") }, { nil, true }, "alive: a prefix of a possible match")
is({ p:match(seq"add relu") }, { nil, false }, "not alive: the automaton died")
is({ p:match(seq"add rms_norm relu") }, { 2, false }, "not alive: a complete match cannot grow")
  is(p:match(seq"add mul"), nil, "add -> rms_norm: wrong second op")
  is(p:match(seq"silu add rms_norm", 2), 2, "start argument")
  is(p:match(seq"silu add rms_norm", 1), nil, "start argument: no match at 1")
  is(p:match(seq"add rms_norm", 3), nil, "start past the end")
end

is(pattern.compile("silu -> ."):match(seq"silu matmul"), 2, "'.' matches any op")
is(pattern.compile(". -> . -> ."):match({ node("a_op", "opaque"), node("b_op", "x"), node("c_op", ""), node("d") }), 3,
  "'.' matches ops and kinds the vocabulary does not know")

do
  local p = pattern.compile("@elemwise+ -> @reduction")
  is(p:match(seq"silu relu softmax"), 3, "@kind matches by kind")
  is(p:match(seq"add softmax"), nil, "@kind rejects other kinds")
  is(p:match({ node("custom", "elemwise"), node("custom", "reduction") }), 2,
    "@kind reads node.pattern, not the op name")
  local q = pattern.compile("@out-fusable -> @elemwise?")
  is(q:match({ node("matmul"), node("relu") }), 2, "@out-fusable is @out_fusable")
  is(q:match({ node("custom", "out-fusable") }), 1, "nodes may spell out-fusable with a dash")
end

do
  local p = pattern.compile("(add|@elemwise)+")
  is(p:match(seq"add relu add mul"), 3, "group mixing an op and a kind")
  is(p:match({ node("add", "elemwise"), node("mul", "elemwise") }), 2,
    "a named op with an unexpected kind still passes through @kind")
end

do
  local p = pattern.compile("(add -> mul)+")
  is({ p.min_len, p.max_len }, { 2, nil }, "group of a sequence: lengths")
  is(p:match(seq"add mul add mul add"), 4, "group of a sequence repeats whole")
  is(p:match(seq"add add"), nil, "group of a sequence: no partial match")
end

is(pattern.compile("silu -> mul?"):match(seq"silu add"), 1, "'?' may match nothing")
is(pattern.compile("silu -> mul?"):match(seq"silu mul mul"), 2, "'?' matches at most one")
is(pattern.compile("add*"):match(seq"add add add silu"), 3, "'*' repeats")
is(pattern.compile("add*"):match(seq"silu"), 0, "'*' may match nothing: length 0")
is(pattern.compile("add*"):match({}), 0, "'*' on an empty sequence: length 0")
is(pattern.compile("rms_norm?"):match(seq"add"), 0, "'?' alone: length 0")
is(pattern.compile("add+"):match(seq"silu"), nil, "'+' needs one")
is(pattern.compile("silu -> mul | gelu"):match(seq"gelu"), 1, "alternatives at the top level")
is(pattern.compile("  add\n->\t( mul |div )  +  "):match(seq"add div mul div"), 4,
  "whitespace and newlines are free-form")
is(pattern.compile("add->rms_norm"):match(seq"add rms_norm"), 2, "no whitespace needed")
is(pattern.compile("@elemwise->@out-fusable"):match(seq"relu matmul"), 2, "no whitespace after a kind")
is(pattern.compile("((add))"):match(seq"add"), 1, "nested parentheses")

do
  local lens = {}
  for _, src in ipairs{ "add -> rms_norm", "(add|mul)?", "silu -> mul?", "(add -> mul)*",
                        "(add|mul -> sub)", "(add|mul|sub|div)+ -> rms_norm?" } do
    local p = pattern.compile(src)
    lens[#lens + 1] = { src, p.min_len, p.max_len or "unbounded" }
  end
  is(lens, {
    { "add -> rms_norm", 2, 2 }, { "(add|mul)?", 0, 1 }, { "silu -> mul?", 1, 2 },
    { "(add -> mul)*", 0, "unbounded" }, { "(add|mul -> sub)", 1, 2 },
    { "(add|mul|sub|div)+ -> rms_norm?", 1, "unbounded" },
  }, "min_len and max_len")
end

---------------------------------------------------------------------------
-- Longest match, where a PEG's possessive repetition would go wrong.

do
  local p = pattern.compile("(add|mul)+ -> add")
  is(p:match(seq"add add"), 2, "(add|mul)+ -> add on add add")
  is(p:match(seq"add mul add mul add rms_norm"), 5, "(add|mul)+ -> add takes the longest")
  is(p:match(seq"add mul add mul"), 3, "(add|mul)+ -> add backs off to the last add")
  is(p:match(seq"add"), nil, "(add|mul)+ -> add needs two")
end

is(pattern.compile("add | add -> mul"):match(seq"add mul"), 2,
  "longest over alternatives, whatever their order")
is(pattern.compile("(add -> mul)? -> add -> mul -> sub?"):match(seq"add mul add mul sub"), 5,
  "an optional prefix taken when that is longer")
is(pattern.compile("(add -> mul)? -> add -> mul -> sub?"):match(seq"add mul sub"), 3,
  "an optional prefix skipped when it must be")
is(pattern.compile(".* -> rms_norm"):match(seq"add mul rms_norm silu rms_norm add"), 5,
  ".* -> x finds the last x")

do
  local p = pattern.compile("(add|mul|sub|div)+ -> rms_norm?")
  is(p:match(seq"add mul rms_norm"), 3, "design example: elementwise run then rms_norm")
  is(p:match(seq"add sub div silu"), 3, "design example: run without rms_norm")
  is(p:match(seq"sub rms_norm rms_norm"), 2, "design example: one rms_norm at most")
  is(p:match(seq"rms_norm"), nil, "design example: needs one elementwise op first")
  is(p:match(seq"silu add", 2), 1, "design example: from the second node")
end

---------------------------------------------------------------------------
-- The matcher reads nothing past the end of the match when the pattern
-- cannot go on, and works on proxy sequences.

do
  local guard = setmetatable({}, { __index = function(_, k) error("read field " .. k .. " of node 3") end })
  local s = { node("add"), node("rms_norm"), guard }
  local ok, n = pcall(function() return pattern.compile("add -> rms_norm"):match(s) end)
  is({ ok, n }, { true, 2 }, "no read past a finished match")

  local backing = seq"silu mul add"
  local proxy = setmetatable({}, { __index = function(_, i)
    local n = backing[i]
    return n and { op = n.op, pattern = n.pattern }   -- fresh table per access
  end })
  is(pattern.compile("silu -> mul"):match(proxy), 2, "proxy sequence with fresh node tables")
end

---------------------------------------------------------------------------
-- Both matchers agree with a slow, obviously right oracle: the set of every
-- position where a match of the syntax tree can end, then its maximum.

local function ends(t, s, i)
  local out = {}
  local tag = t.tag
  if tag == "op" or tag == "any" or tag == "kind" then
    local n = s[i]
    if n and (tag == "any" or (tag == "op" and n.op == t.name) or (tag == "kind" and n.pattern == t.kind)) then
      out[i + 1] = true
    end
  elseif tag == "seq" then
    out[i] = true
    for _, item in ipairs(t.items) do
      local nxt = {}
      for p in pairs(out) do for q in pairs(ends(item, s, p)) do nxt[q] = true end end
      out = nxt
    end
  elseif tag == "alt" then
    for _, alt in ipairs(t.alts) do for q in pairs(ends(alt, s, i)) do out[q] = true end end
  else
    local frontier = ends(t.body, s, i)
    if t.postfix ~= "+" then out[i] = true end
    while next(frontier) do
      local nxt = {}
      for p in pairs(frontier) do
        if not out[p] then
          out[p] = true
          if t.postfix ~= "?" then for q in pairs(ends(t.body, s, p)) do nxt[q] = true end end
        end
      end
      frontier = nxt
    end
  end
  return out
end

local function oracle(p, s)
  local best
  for q in pairs(ends(p.tree, s, 1)) do
    if not best or q - 1 > best then best = q - 1 end
  end
  return best
end

do
  is(pattern.tokens(seq"add rms_norm"), "add:broadcast;rms_norm:reduction;", "pattern.tokens")
  is(pattern.tokens(seq"add mul silu", 2, 3), "mul:broadcast;silu:elemwise;", "pattern.tokens range")
  local p = pattern.compile("(add|mul)+ -> add")
  local s = pattern.tokens(seq"silu add mul add mul")
  is(p:match_tokens(s, 1), nil, "match_tokens: no match")
  is(p:match_tokens(s, 15), 57, "match_tokens: byte past the longest match")
  is(pattern.compile("add*"):match_tokens("silu:elemwise;", 1), 1, "match_tokens: empty match")

  local sources = { "(add|mul)+ -> add", "(add|mul|sub|div)+ -> rms_norm?", "@elemwise* -> (add|@reduction)",
                    ". -> (silu|@broadcast)? -> .", "(add -> mul)+ | add", "(@elemwise|mul)* -> @reduction?",
                    "@out-fusable -> (@elemwise | add)*", "((add|mul)? -> (mul -> add)*)+ -> sub?" }
  local ops = { "add", "mul", "add", "mul", "sub", "rms_norm", "silu", "relu", "softmax", "matmul" }
  -- A fixed LCG rather than math.random: same sequences everywhere, and
  -- nothing the engine's sandbox might leave out.
  local state = 42
  local function random(lo, hi)
    state = (state * 1103515245 + 12345) % 2147483648
    return lo + (state // 65536) % (hi - lo + 1)   -- the low bits of an LCG cycle quickly
  end
  local mismatches, lengths = 0, {}
  for _, src in ipairs(sources) do
    local p = pattern.compile(src)
    for _ = 1, 300 do
      local s = {}
      for i = 1, random(0, 8) do s[i] = node(ops[random(1, #ops)]) end
      local want = oracle(p, s)
      local n = p:match(s)
      local e = p:match_tokens(pattern.tokens(s), 1)
      local m = want and #pattern.tokens(s, 1, want) + 1
      lengths[n or -1] = true
      if n ~= want or e ~= m then
        mismatches = mismatches + 1
        if mismatches == 1 then print("# " .. src .. " on " .. pattern.tokens(s)) end
      end
    end
  end
  is(mismatches, 0, "match and match_tokens agree with the oracle on 2400 random sequences")
  local varied = 0
  for _ in pairs(lengths) do varied = varied + 1 end
  report(varied >= 8, "the random sequences give no match, empty matches and long ones", varied .. " distinct results")
end

---------------------------------------------------------------------------
-- Expression form.

do
  local g, u = tensor"g", tensor"u"
  local silu = op_node("silu", { g })
  local mul = op_node("mul", { silu.out, u })
  local p = pattern.compile("silu(x) * y")
  is({ p.kind, p.root_op, p.vars, p.size }, { "expr", "mul", { "x", "y" }, 2 }, "expr: kind, root_op, vars, size")
  local b, ns = p:match_expr(mul)
  is(bound_names(b), { x = "g", y = "u" }, "silu(x) * y binds x and y")
  is(names(ns), { "silu", "mul" }, "matched nodes: producers first, root last")

  local swapped = op_node("mul", { u, silu.out })
  is(bound_names(p:match_expr(swapped)), { x = "g", y = "u" }, "mul is commutative")
  is(bound_names(pattern.compile("mul(silu(g), u)"):match_expr(swapped)), { g = "g", u = "u" },
    "call syntax for binary ops")
  is(p:match_expr(silu), nil, "wrong root op")
  is(p:match_expr(op_node("mul", { u, g })), nil, "operand without the producer the pattern needs")

  local sub = op_node("sub", { silu.out, u })
  local q = pattern.compile("sub(silu(x), y)")
  is(bound_names(q:match_expr(sub)), { x = "g", y = "u" }, "sub in written order")
  is(q:match_expr(op_node("sub", { u, silu.out })), nil, "sub is not commutative")
  is(bound_names(pattern.compile("silu(x) - y"):match_expr(sub)), { x = "g", y = "u" }, "infix '-' is sub")
end

do
  local a, r, w = tensor"a", tensor"r", tensor"w"
  local add = op_node("add", { a, r })
  local norm = op_node("rms_norm", { add.out, w })
  local b, ns = pattern.compile("rms_norm(x + r, w)"):match_expr(norm)
  is(bound_names(b), { x = "a", r = "r", w = "w" }, "rms_norm(x + r, w)")
  is(names(ns), { "add", "rms_norm" }, "rms_norm(x + r, w): nodes")
  is(pattern.compile("rms_norm(x + r, w)"):match_expr(op_node("rms_norm", { add.out })), nil,
    "operand count must agree")
end

do
  local x, a, c = tensor"x", tensor"a", tensor"c"
  local mul = op_node("mul", { a, x })
  local add = op_node("add", { c, mul.out })
  local relu = op_node("relu", { add.out })
  local b, ns = pattern.compile("relu(x * a + b)"):match_expr(relu)
  is(bound_names(b), { x = "a", a = "x", b = "c" }, "relu(x * a + b): precedence, both orders")
  is(names(ns), { "mul", "add", "relu" }, "relu(x * a + b): nodes")

  local d = op_node("div", { a, c })
  local s = op_node("sub", { x, d.out })
  is(bound_names(pattern.compile("x - y / z"):match_expr(s)), { x = "x", y = "a", z = "c" },
    "'/' binds tighter than '-'")
  is(pattern.compile("(x - y) / z"):match_expr(s), nil, "parentheses regroup")
  local s2 = op_node("sub", { op_node("sub", { x, a }).out, c })
  is(bound_names(pattern.compile("x - y - z"):match_expr(s2)), { x = "x", y = "a", z = "c" },
    "'-' is left associative")
  is(pattern.compile("-x").root_op, "neg", "unary minus is neg")
end

do
  local t, u = tensor"t", tensor"u"
  local p = pattern.compile("x * x")
  is(bound_names(p:match_expr(op_node("mul", { t, t }))), { x = "t" }, "repeated variable, same tensor")
  is(p:match_expr(op_node("mul", { t, u })), nil, "repeated variable, different tensors")

  -- x must be found inside the first operand only after trying the second
  -- order there: the search has to revisit an earlier commutative choice.
  local inner = op_node("mul", { t, u })
  local outer = op_node("add", { inner.out, u })
  local b = pattern.compile("x * y + x"):match_expr(outer)
  is(bound_names(b), { x = "u", y = "t" }, "repeated variable forces a nested operand swap")
  is(pattern.compile("x * y + x"):match_expr(op_node("add", { inner.out, tensor"v" })), nil,
    "repeated variable with no consistent binding")

  local silu = op_node("silu", { t })
  local twice = op_node("mul", { silu.out, silu.out })
  local b2, ns = pattern.compile("silu(x) * silu(x)"):match_expr(twice)
  is({ bound_names(b2), names(ns) }, { { x = "t" }, { "silu", "mul" } }, "a node matched twice is listed once")
end

do
  -- Proxies: every access makes fresh tables, so identity comes from opts.id.
  local function proxy_tensor(name, producer)
    return setmetatable({}, { __index = function(_, k)
      if k == "name" then return name end
      if k == "producer" then return producer and producer() end
    end })
  end
  local function proxy_node(op, input_names)
    return setmetatable({}, { __index = function(_, k)
      if k == "op" then return op end
      if k == "pattern" then return pattern.ops[op].kind end
      if k == "inputs" then
        local t = {}
        for i, n in ipairs(input_names) do t[i] = proxy_tensor(n) end
        return t
      end
    end })
  end
  local m = proxy_node("mul", { "t", "t" })
  local p = pattern.compile("x * x")
  is(p:match_expr(m), nil, "proxies without opts.id: no identity")
  local id = function(obj) return obj.name end
  is(bound_names(p:match_expr(m, { id = id })), { x = "t" }, "proxies with opts.id")
  is(p:match_expr(proxy_node("mul", { "t", "u" }), { id = id }), nil, "opts.id tells tensors apart")
  local q = pattern.compile("x * x", nil, { id = id })
  is(bound_names(q:match_expr(m)), { x = "t" }, "opts.id given at compile time")
end

do
  local g, u = tensor"g", tensor"u"
  local silu = op_node("silu", { g })
  local mul = op_node("mul", { silu.out, u })
  local p = pattern.compile("silu(x) * y")
  local exploding = setmetatable({}, { __index = function() error("no such field") end })
  local ok, err = pcall(p.match_expr, p, op_node("mul", { exploding, u }))
  report(not ok and tostring(err):find("no such field", 1, true) ~= nil, "errors from the caller's objects propagate", err)
  is(bound_names(p:match_expr(mul)), { x = "g", y = "u" }, "the pattern still works after such an error")
  local inner
  local id = function(t)
    inner = inner or bound_names(p:match_expr(mul))   -- the same pattern, re-entered
    return t
  end
  is({ bound_names(p:match_expr(mul, { id = id })), inner }, { { x = "g", y = "u" }, { x = "g", y = "u" } },
    "match_expr re-entered from opts.id")
end

do
  local x = tensor"x"
  local half = op_node("mul", { x }, { scalar = 0.5 })
  is(bound_names(pattern.compile("x * 0.5"):match_expr(half)), { x = "x" }, "scalar operand")
  is(bound_names(pattern.compile("0.5 * x"):match_expr(half)), { x = "x" }, "scalar operand, commuted")
  is(pattern.compile("x * 2"):match_expr(half), nil, "scalar operand, other value")
  is(pattern.compile("x * y"):match_expr(half), nil, "a variable does not bind a scalar")
  local rsub = op_node("sub", { x }, { scalar = 1, scalar_index = 0 })
  is(bound_names(pattern.compile("1 - x"):match_expr(rsub)), { x = "x" }, "scalar_index 0 puts the scalar first")
  is(pattern.compile("x - 1"):match_expr(rsub), nil, "scalar position matters for sub")
  local f32 = op_node("mul", { x }, { scalar = 0.044714998453855515 })
  is(bound_names(pattern.compile("x * 0.044715"):match_expr(f32)), { x = "x" }, "scalars compare within f32 rounding")
  is(pattern.compile("x * -1").tree.args[2].value, -1, "negative literal")
  is(pattern.compile("x * 1e-6").tree.args[2].value, 1e-6, "exponent literal")
end

do
  local g = tensor"g"
  local silu = op_node("silu", { g })
  raises(function() pattern.compile("silu -> mul"):match_expr(silu) end,
    "chain pattern 'silu -> mul': use p:match(seq), not p:match_expr", "chain patterns refuse match_expr", true)
  local ok, err = pcall(function() pattern.compile("silu(x)"):match({ silu }) end)
  report(not ok and err:find("use p:match_expr", 1, true) ~= nil, "expression patterns refuse match", err)
end

---------------------------------------------------------------------------
-- Form selection.

is(pattern.compile("gelu").kind, "chain", "a lone name is a chain")
is(pattern.compile("gelu(x)").kind, "expr", "a call is an expression")
is(pattern.compile("a * b + c").kind, "expr", "infix operators make an expression")
is(pattern.compile("(add)+").kind, "chain", "postfix '+' makes a chain")
is(pattern.compile("custom()").kind, "expr", "a call without arguments")
is(pattern.compile("frobnicate -> x", nil, { ops = false }):match({ node("frobnicate", "opaque"), node("x", "opaque") }), 2,
  "opts.ops = false accepts any op name")

---------------------------------------------------------------------------
-- Errors: syntax and meaning, with exact positions.

compile_error("add -> -> rms_norm", [[
pattern:1:8: expected an op name, '(', '.' or '@kind'
add -> -> rms_norm
       ^]], "missing step after '->'")
compile_error("add ->", "pattern:1:7: expected an op name, '(', '.' or '@kind'\nadd ->\n      ^",
  "pattern ending in '->'")
compile_error("add rms_norm", "pattern:1:5: expected '->', '|' or end of pattern\nadd rms_norm\n    ^",
  "two steps without an arrow")
compile_error("add ++", "pattern:1:6: expected '->', '|' or end of pattern\nadd ++\n     ^",
  "double postfix")
compile_error("(add|mul", "pattern:1:9: expected '->', '|' or ')'\n(add|mul\n        ^", "unclosed group")
compile_error("(add|)", "pattern:1:6: expected an op name, '(', '.' or '@kind'\n(add|)\n     ^", "empty alternative")
compile_error("add -> @", "pattern:1:9: expected a kind name after '@'\nadd -> @\n        ^", "'@' without a kind")
compile_error("add -> @elemwize", "pattern:1:8: unknown kind '@elemwize' (did you mean 'elemwise'?) "
  .. "(kinds: elemwise, broadcast, injective, reduction, out_fusable, opaque)\nadd -> @elemwize\n       ^",
  "unknown kind")
compile_error("add -> rms_nrom", "pattern:1:8: unknown op 'rms_nrom' (did you mean 'rms_norm'?)\nadd -> rms_nrom\n       ^",
  "unknown op (a chain that can never match)")
compile_error("sliu(x) * y", "pattern:1:1: unknown op 'sliu' (did you mean 'silu'?)\nsliu(x) * y\n^",
  "unknown op in an expression")
compile_error("", "pattern:1:1: empty pattern\n\n^", "empty source")
compile_error("  \n\t ", "pattern:1:1: empty pattern\n  \n^", "blank source")
compile_error("silu(x) *", "pattern:1:10: expected an operand: a name, a number, a call or '('\nsilu(x) *\n         ^",
  "missing operand")
compile_error("mul(x, y", "pattern:1:9: expected ',' or ')'\nmul(x, y\n        ^", "unclosed call")
compile_error("mul(x,)", "pattern:1:7: expected an operand: a name, a number, a call or '('\nmul(x,)\n      ^",
  "missing argument")
compile_error("silu(x, y)", "pattern:1:1: silu takes 1 operand, not 2\nsilu(x, y)\n^", "arity of a unary op")
compile_error("x + mul(y)", "pattern:1:5: mul takes 2 operands, not 1\nx + mul(y)\n    ^", "arity of a binary op")
compile_error("2 * 3", "pattern:1:3: mul can take at most one scalar operand\n2 * 3\n  ^", "two scalars")
compile_error("x", "pattern:1:1: unknown op 'x'\nx\n^", "a lone variable is an unknown op")
compile_error("2", "pattern:1:1: an expression pattern needs an op at its root, e.g. 'silu(x) * y'\n2\n^",
  "an expression without an op")
compile_error("add ->\n  (mul |\n   @bogus)", "pattern:3:4: unknown kind '@bogus' "
  .. "(kinds: elemwise, broadcast, injective, reduction, out_fusable, opaque)\n   @bogus)\n   ^",
  "positions on later lines")
compile_error("\tadd -> ->", "pattern:1:9: expected an op name, '(', '.' or '@kind'\n\tadd -> ->\n\t       ^",
  "caret under a tab-indented column")
compile_error("add ->", "swiglu:1:7: expected an op name, '(', '.' or '@kind'\nadd ->\n      ^",
  "chunk name", "swiglu")
compile_error("silu(x) -> mul", "pattern:1:10: expected an operand: a name, a number, a call or '('\n"
  .. "silu(x) -> mul\n         ^", "mixed forms: the error from the parse that got further")
compile_error("silu -> mul", "pattern:1:7: expected an operand: a name, a number, a call or '('\nsilu -> mul\n      ^",
  "opts.form = 'expr' forces the expression grammar", nil, { form = "expr" })
compile_error("silu(x)", "pattern:1:5: expected '->', '|' or end of pattern\nsilu(x)\n    ^",
  "opts.form = 'chain' forces the chain grammar", nil, { form = "chain" })
raises(function() pattern.compile(42) end, "pattern.compile: source must be a string", "non-string source", true)

-- Nesting deep enough to reach LPeg's limits is refused with a caret at
-- the level too many; 30 levels still compile.
local deep = string.rep("(", 300) .. "add" .. string.rep(")", 300)
compile_error(deep, "pattern:1:31: nesting too deep (more than 30 levels of parentheses and signs)\n"
  .. deep .. "\n" .. string.rep(" ", 30) .. "^", "300 parentheses")
compile_error(string.rep("-", 100) .. "silu(x)", "pattern:1:31: nesting too deep (more than 30 levels of "
  .. "parentheses and signs)\n" .. string.rep("-", 100) .. "silu(x)\n" .. string.rep(" ", 30) .. "^",
  "100 unary minus signs")
is(pattern.compile(string.rep("(", 30) .. "add" .. string.rep(")", 30)):match({ node("add") }), 1,
  "30 levels of parentheses in a chain")
is(pattern.compile(string.rep("silu(", 30) .. "x" .. string.rep(")", 30)).kind, "expr",
  "30 nested calls in an expression")
is(pattern.compile(string.rep("-(", 15) .. "x" .. string.rep(")", 15) .. " * y").kind, "expr",
  "15 signs and 15 parentheses")

print(string.format("1..%d", count))
if failed > 0 then
  print(string.format("# %d of %d failed", failed, count))
  if rawget(_G, "os") then os.exit(1) end
  error(failed .. " tests failed", 0)
end
