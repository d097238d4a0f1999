-- fuseeng.pattern: the op-pattern DSL. Policies name the op groups they want
-- fused ("add -> rms_norm", "(add|mul|sub|div)+ -> rms_norm?", "silu(x) * y");
-- the `patterns` driver (InfiniCore's sliding-window find_fusable_subgraphs,
-- seed 000) asks each compiled pattern how far it matches from every node.
--
-- Note on the two forms and how they match
--
-- A chain ("a -> (b|@elemwise)+ -> c?") is a regular expression whose letters
-- are graph nodes, read along producer -> consumer edges. The driver wants
-- the LONGEST match, which a PEG cannot give directly: LPeg's repetition is
-- possessive, so a naive translation of "(add|mul)+ -> add" never matches,
-- because the loop eats the last add. So a chain compiles in three steps:
--
--   source --LPeg grammar--> tree --Thompson--> NFA --subsets--> DFA
--
-- The DFA's alphabet is finite although op names are not: a node is one of
-- the ops the pattern names or "some other op", paired with one of the kinds
-- the pattern names or "some other kind". Running a DFA and remembering the
-- last accepting step is exactly longest-match, in one pass, with no
-- backtracking and no allocation:
--
--   p:match(seq, i)      walks seq[i], seq[i+1], ... through the DFA table;
--   p:match_tokens(s, i) runs the same DFA as an LPeg grammar (one rule per
--                        state, `+ true` in accepting ones) over a token
--                        string "op:kind;op:kind;..." (pattern.tokens), for
--                        callers that already hold such a string.
--
-- An expression ("rms_norm(x + r, w)") is a tree pattern matched from its root
-- node up through `.producer` links: a depth-first search with a goal stack
-- and undo on failure, so commutative ops (add, mul, maximum, minimum) can be
-- tried in both operand orders and a variable used twice binds one tensor,
-- even when a later goal forces an earlier choice to be revisited.

local dsl = require "fuseeng.dsl"

local P, R, S, V, C, Cp, Ct, expect, fail = dsl.vocabulary()

local pattern = {}

---------------------------------------------------------------------------
-- Vocabulary, from the engine's op registry (core/ir/ops.c, through
-- fuseeng.core): it is the one owner of op names, kinds and arities.
local core = require "fuseeng.core"
pattern.kinds = core.kinds
local KIND_SPELLINGS = { ["out-fusable"] = "out_fusable" }   -- DESIGN.md spells it with a dash

-- Operand counts as a pattern sees them: a broadcast op that takes one
-- tensor fewer plus attrs.scalar still has its full arity in an expression.
local MANY = math.huge
pattern.ops = {}
for name, op in pairs(core.ops) do
  local max = op.max_inputs or MANY
  local min = op.kind == "broadcast" and max or op.min_inputs
  pattern.ops[name] = { kind = op.kind, min = min, max = max }
end

local COMMUTATIVE = { add = true, mul = true, maximum = true, minimum = true }
local INFIX = { ["+"] = "add", ["-"] = "sub", ["*"] = "mul", ["/"] = "div" }

---------------------------------------------------------------------------
-- Syntax tree constructors, called from the grammars' captures.

local function op_node(pos, name) return { tag = "op", name = name, pos = pos } end
local function any_node(pos) return { tag = "any", pos = pos } end
local function kind_node(pos, kind) return { tag = "kind", kind = kind, pos = pos } end

local function list_node(tag, field)
  return function(pos, items)
    if #items == 1 then return items[1] end
    return { tag = tag, [field] = items, pos = pos }
  end
end
local alt_node, seq_node = list_node("alt", "alts"), list_node("seq", "items")

local function repeat_node(atom, postfix)
  if not postfix then return atom end
  return { tag = "rep", body = atom, postfix = postfix, pos = atom.pos }
end

local function var_node(pos, name) return { tag = "var", name = name, pos = pos } end
local function num_node(pos, text) return { tag = "num", value = tonumber(text), pos = pos } end
local function scalar_var_node(pos, name) return { tag = "svar", name = name, pos = pos } end
local function call_node(pos, name, optional, args)
  return { tag = "call", op = name, optional = optional == "?", args = args, pos = pos }
end
local function bind_node(pos, name, body) return { tag = "bind", name = name, body = body, pos = pos } end

-- "a + b - c" arrives as {a, pos, "+", b, pos, "-", c}; operators are left
-- associative, so fold from the left.
local function fold_infix(t)
  local acc = t[1]
  for i = 2, #t, 3 do
    acc = { tag = "call", op = INFIX[t[i + 1]], args = { acc, t[i + 2] }, pos = t[i] }
  end
  return acc
end

-- A minus sign before a number is part of the number; before anything else
-- it is the neg op.
local function negate(pos, operand)
  if operand.tag == "num" then return { tag = "num", value = -operand.value, pos = pos } end
  return { tag = "call", op = "neg", args = { operand }, pos = pos }
end

---------------------------------------------------------------------------
-- Grammars.

local space = S" \t\r\n"^0
local word_start = R("az", "AZ") + "_"
local identifier = word_start * (word_start + R"09")^0
local kind_word = word_start * (word_start + R"09" + "-" * #word_start)^0   -- out-fusable, but @a->b
local number_literal = (R"09"^1 * ("." * R"09"^0)^-1 + "." * R"09"^1)
                       * (S"eE" * S"+-"^-1 * R"09"^1)^-1
local function token(text) return P(text) * space end

local STEP = "expected an op name, '(', '.' or '@kind'"
local OPERAND = "expected an operand: a name, a number, a call or '('"

local chain_grammar = P{ "chain",
  chain        = space * expect(V"alternatives", STEP)
                 * expect(-1, "expected '->', '|' or end of pattern"),
  alternatives = Cp() * Ct(V"sequence" * (token"|" * expect(V"sequence", STEP))^0) / alt_node,
  sequence     = Cp() * Ct(V"step" * (token"->" * expect(V"step", STEP))^0) / seq_node,
  step         = V"atom" * (C(S"+*?") * space)^-1 / repeat_node,
  atom         = V"op_name" + V"any_op" + V"op_of_kind" + V"group",
  op_name      = Cp() * C(identifier) * space / op_node,
  any_op       = Cp() * "." * space / any_node,
  op_of_kind   = Cp() * "@" * expect(C(kind_word), "expected a kind name after '@'") * space / kind_node,
  group        = token"(" * expect(V"alternatives", STEP)
                 * expect(token")", "expected '->', '|' or ')'"),
}

local expr_grammar = P{ "expression",
  expression    = space * expect(V"sum", OPERAND) * expect(-1, "expected an operator or end of pattern"),
  sum           = Ct(V"product" * (Cp() * C(S"+-") * space * expect(V"product", OPERAND))^0) / fold_infix,
  product       = Ct(V"unary" * (Cp() * C(S"*/") * space * expect(V"unary", OPERAND))^0) / fold_infix,
  unary         = Cp() * "-" * space * expect(V"unary", OPERAND) / negate + V"primary",
  primary       = V"number" + V"scalar" + V"binding" + V"call" + V"variable" + V"parenthesised",
  number        = Cp() * C(number_literal) * space / num_node,
  scalar        = Cp() * "#" * expect(C(identifier), "expected a name after '#'") * space / scalar_var_node,
  binding       = Cp() * C(identifier) * space * token":=" * expect(V"unary", OPERAND) / bind_node,
  call          = Cp() * C(identifier) * C(P"?"^-1) * space * token"(" * Ct(V"arguments")
                  * expect(token")", "expected ',' or ')'") / call_node,
  arguments     = #P")" + expect(V"sum", OPERAND) * (token"," * expect(V"sum", OPERAND))^0,
  variable      = Cp() * C(identifier) * space / var_node,
  parenthesised = token"(" * expect(V"sum", OPERAND) * expect(token")", "expected an operator or ')'"),
}

---------------------------------------------------------------------------
-- Checks shared by both forms: names that can never match are errors, with
-- the position of the name.

local function check_op(name, pos, ops)
  if ops and not ops[name] then
    local names = {}
    for known in pairs(ops) do names[#names + 1] = known end
    table.sort(names)
    fail(pos, string.format("unknown op '%s'%s", name, dsl.suggest(name, names)))
  end
end

local function check_kind(node)
  local kind = KIND_SPELLINGS[node.kind] or node.kind
  for _, known in ipairs(pattern.kinds) do
    if kind == known then node.kind = kind; return end
  end
  fail(node.pos, string.format("unknown kind '@%s'%s (kinds: %s)", node.kind,
    dsl.suggest(node.kind, pattern.kinds), table.concat(pattern.kinds, ", ")))
end

---------------------------------------------------------------------------
-- Chains: tree -> NFA -> DFA.

-- Fewest and most nodes a tree matches (most = nil when unbounded), and the
-- ops and kinds it names, in first-mention order.
local function chain_facts(node, ops, named, kinds)
  local tag = node.tag
  if tag == "op" then
    check_op(node.name, node.pos, ops)
    if not named[node.name] then named[#named + 1] = node.name; named[node.name] = #named end
    return 1, 1
  elseif tag == "any" then
    return 1, 1
  elseif tag == "kind" then
    check_kind(node)
    if not kinds[node.kind] then kinds[#kinds + 1] = node.kind; kinds[node.kind] = #kinds end
    return 1, 1
  elseif tag == "seq" then
    local lo, hi = 0, 0
    for _, item in ipairs(node.items) do
      local l, h = chain_facts(item, ops, named, kinds)
      lo, hi = lo + l, (hi and h) and hi + h or nil
    end
    return lo, hi
  elseif tag == "alt" then
    local lo, hi = math.huge, 0
    for _, alt in ipairs(node.alts) do
      local l, h = chain_facts(alt, ops, named, kinds)
      lo, hi = math.min(lo, l), (hi and h) and math.max(hi, h) or nil
    end
    return lo, hi
  else
    local l, h = chain_facts(node.body, ops, named, kinds)
    if node.postfix == "?" then return 0, h end
    return node.postfix == "+" and l or 0, nil
  end
end

-- Thompson construction: every state has at most one consuming edge (the
-- step tree node it tests) plus any number of empty edges.
local function build_nfa(tree)
  local empty, test, target = {}, {}, {}
  local count = 0
  local function state() count = count + 1; empty[count] = {}; return count end
  local function link(from, to) local t = empty[from]; t[#t + 1] = to end

  local function fragment(node)
    local tag = node.tag
    if tag == "seq" then
      local first, last = fragment(node.items[1])
      for i = 2, #node.items do
        local s, e = fragment(node.items[i])
        link(last, s); last = e
      end
      return first, last
    end
    local s, e = state(), state()
    if tag == "alt" then
      for _, alt in ipairs(node.alts) do
        local as, ae = fragment(alt)
        link(s, as); link(ae, e)
      end
    elseif tag == "rep" then
      local bs, be = fragment(node.body)
      link(s, bs); link(be, e)
      if node.postfix ~= "+" then link(s, e) end
      if node.postfix ~= "?" then link(be, bs) end
    else
      test[s], target[s] = node, e
    end
    return s, e
  end

  local start, final = fragment(tree)
  return { empty = empty, test = test, target = target, start = start, final = final }
end

-- The states reachable from `states` by empty edges, sorted, and a key for it.
local function closure(nfa, states)
  local seen, out, stack = {}, {}, {}
  for i = 1, #states do stack[i] = states[i] end
  while #stack > 0 do
    local s = table.remove(stack)
    if not seen[s] then
      seen[s] = true
      out[#out + 1] = s
      for _, t in ipairs(nfa.empty[s]) do stack[#stack + 1] = t end
    end
  end
  table.sort(out)
  return out, table.concat(out, ",")
end

-- Does a node of op class `oc` and kind class `kc` pass the step `node`?
-- Class 0 is "an op (kind) the pattern does not name".
local function passes(node, oc, kc, named, kinds)
  if node.tag == "any" then return true end
  if node.tag == "op" then return named[node.name] == oc end
  return kinds[node.kind] == kc
end

local MAX_DFA_STATES = 4096

-- Subset construction. Returns the flat transition table T (T[(d-1)*width +
-- symbol] is the next state, 0 when the match is over), accepting and
-- terminal (no way on) flags per state, and the number of states.
local function build_dfa(nfa, named, kinds, pos)
  local K1 = #kinds + 1
  local width = (#named + 1) * K1
  local T, accepting, terminal = {}, {}, {}
  local sets, index = {}, {}
  local function intern(states)
    local set, key = closure(nfa, states)
    local d = index[key]
    if not d then
      d = #sets + 1
      if d > MAX_DFA_STATES then fail(pos, "pattern too complex (more than " .. MAX_DFA_STATES .. " matcher states)") end
      sets[d], index[key] = set, d
    end
    return d
  end
  intern({ nfa.start })
  local d = 1
  while d <= #sets do
    local set = sets[d]
    local live = false
    for oc = 0, #named do
      for kc = 0, K1 - 1 do
        local moved = {}
        for _, s in ipairs(set) do
          local node = nfa.test[s]
          if node and passes(node, oc, kc, named, kinds) then moved[#moved + 1] = nfa.target[s] end
        end
        local next_state = #moved > 0 and intern(moved) or 0
        T[(d - 1) * width + oc * K1 + kc + 1] = next_state
        live = live or next_state ~= 0
      end
    end
    accepting[d], terminal[d] = false, not live
    for _, s in ipairs(set) do
      if s == nfa.final then accepting[d] = true end
    end
    d = d + 1
  end
  return T, accepting, terminal, #sets, width
end

-- The same DFA as an LPeg grammar over "op:kind;" tokens: one rule per state,
-- each alternative consuming one token; accepting states end in `+ true`.
-- The DFA is deterministic, so ordered choice loses nothing, and a state
-- whose continuation fails falls back to accepting here: longest match.
local function build_token_matcher(chain)
  local named, kinds, K1, width = chain._named, chain._kinds, #chain._kinds + 1, chain._width
  local op_chars, kind_chars = (1 - S":;")^0, (1 - P";")^0

  local named_ops = P(false)
  for _, name in ipairs(named) do named_ops = named_ops + P(name .. ":") end
  local function op_token(oc)
    if oc > 0 then return P(named[oc] .. ":") end
    return -named_ops * op_chars * ":"
  end

  local function spellings(kind)
    local p = P(kind .. ";")
    for alias, canon in pairs(KIND_SPELLINGS) do
      if canon == kind then p = p + P(alias .. ";") end
    end
    return p
  end
  local named_kinds = P(false)
  for _, kind in ipairs(kinds) do named_kinds = named_kinds + spellings(kind) end
  local function kind_token(kc)
    if kc > 0 then return spellings(kinds[kc]) end
    return -named_kinds * kind_chars * ";"
  end

  local rules = {}
  for d = 1, chain._states do
    local rule = P(false)
    for oc = 0, #named do
      local first, same, alts = nil, true, P(false)
      for kc = 0, K1 - 1 do
        local t = chain._T[(d - 1) * width + oc * K1 + kc + 1]
        if kc == 0 then first = t elseif t ~= first then same = false end
        if t ~= 0 then alts = alts + kind_token(kc) * V(t) end
      end
      if same and first ~= 0 then
        rule = rule + op_token(oc) * kind_chars * ";" * V(first)
      elseif not same then
        rule = rule + op_token(oc) * alts
      end
    end
    if chain._accepting[d] then rule = rule + P(true) end
    rules[d] = rule
  end
  return P(rules) * Cp()
end

local Chain = {}
Chain.__index = Chain

-- Length of the longest match starting at seq[start or 1], 0 if only the
-- empty sequence matches there, nil if nothing does.
-- Second result: true when the sequence ran out while the automaton could
-- still go on, so a longer sequence might match more (drivers that walk
-- paths stop extending a path once no pattern is alive).
function Chain:match(seq, start)
  local T, width, opc, kc = self._T, self._width, self._opc, self._kc
  local accepting, terminal = self._accepting, self._terminal
  local i = start or 1
  local best = accepting[1] and 0 or nil
  local base, n = 0, 0
  while true do
    local node = seq[i]
    if node == nil then return best, true end
    local symbol = (opc[node.op] or 0) + 1
    if kc then symbol = symbol + (kc[node.pattern] or 0) end
    local d = T[base + symbol]
    if d == 0 then return best, false end
    n = n + 1
    if accepting[d] then best = n end
    if terminal[d] then return best, false end
    i = i + 1
    base = (d - 1) * width
  end
end

-- Over a token string (pattern.tokens): the byte just past the longest match
-- starting at byte `init`, or nil. A match of no tokens returns `init`.
-- Each token matched nests one grammar call, so an unbounded pattern over
-- more than about 200 tokens hits LPeg's backtrack limit (lpeg.setmaxstack);
-- p:match has no such limit and is faster: prefer it.
function Chain:match_tokens(s, init)
  local lp = self._lp
  if not lp then
    if self._states > 1000 then   -- LPeg's limit on grammar rules
      error("pattern '" .. self.source .. "' has too many matcher states for match_tokens; use p:match", 2)
    end
    lp = build_token_matcher(self)
    self._lp = lp
  end
  return lp:match(s, init)
end

function Chain:match_expr()
  error("chain pattern '" .. self.source .. "': use p:match(seq), not p:match_expr", 2)
end

local function compile_chain(tree, ops)
  local named, kinds = {}, {}
  local lo, hi = chain_facts(tree, ops, named, kinds)
  local nfa = build_nfa(tree)
  local T, accepting, terminal, states, width = build_dfa(nfa, named, kinds, tree.pos)
  local K1 = #kinds + 1
  local opc = {}
  for oc, name in ipairs(named) do opc[name] = oc * K1 end
  local kc = nil
  if #kinds > 0 then
    kc = {}
    for k, kind in ipairs(kinds) do kc[kind] = k end
    for alias, canon in pairs(KIND_SPELLINGS) do kc[alias] = kc[canon] end
  end
  return setmetatable({
    kind = "chain", min_len = lo, max_len = hi, tree = tree,
    _T = T, _width = width, _accepting = accepting, _terminal = terminal, _states = states,
    _opc = opc, _kc = kc, _named = named, _kinds = kinds,
  }, Chain)
end

-- "op:kind;" for each of seq[i..j] (default: all of seq), for match_tokens.
function pattern.tokens(seq, i, j)
  local parts = {}
  i = i or 1
  while j == nil or i <= j do
    local node = seq[i]
    if node == nil then break end
    parts[#parts + 1] = (node.op or "") .. ":" .. (node.pattern or "") .. ";"
    i = i + 1
  end
  return table.concat(parts)
end

---------------------------------------------------------------------------
-- Expressions.

local function expr_facts(node, ops, facts)
  if node.tag == "var" or node.tag == "bind" or node.tag == "svar" then
    local kind = node.tag == "svar" and "scalar" or "tensor"
    local seen = facts.seen[node.name]
    if seen and seen ~= kind then
      fail(node.pos, string.format("'%s' names a %s elsewhere in the pattern", node.name, seen))
    end
    if not seen then facts.seen[node.name] = kind; facts.vars[#facts.vars + 1] = node.name end
    if node.tag == "bind" then
      if facts.bound[node.name] then fail(node.pos, "'" .. node.name .. "' is bound to an expression twice") end
      facts.bound[node.name] = true
      facts.binds = true
      expr_facts(node.body, ops, facts)
    end
    return
  elseif node.tag == "num" then
    return
  end
  check_op(node.op, node.pos, ops)
  if node.optional and #node.args ~= 1 then
    fail(node.pos, string.format("an optional op (%s?) takes one operand, which stands for it when it is absent", node.op))
  end
  local info = ops and ops[node.op]
  local n = #node.args
  if info and (n < info.min or n > info.max) then
    local want = info.min == info.max and tostring(info.min)
                 or info.max == MANY and info.min .. " or more" or info.min .. " to " .. info.max
    fail(node.pos, string.format("%s takes %s operand%s, not %d", node.op, want, want == "1" and "" or "s", n))
  end
  local scalars = 0
  for _, arg in ipairs(node.args) do
    if arg.tag == "num" or arg.tag == "svar" then scalars = scalars + 1 end
  end
  if scalars > 1 then fail(node.pos, node.op .. " can take at most one scalar operand") end
  facts.calls = facts.calls + 1
  if facts.ops[node.op] then facts.repeats_op = true end
  facts.ops[node.op] = true
  for _, arg in ipairs(node.args) do expr_facts(arg, ops, facts) end
end

-- Goal stack entries say what kind of value they hold.
local TENSOR, SCALAR = 1, 2

-- The scalar operand of a node, if any, and its 1-based operand position:
-- attrs.scalar_index counts from 0 and defaults to the last operand, as in
-- the engine's shape inference (core/ir/infer.c).
local function scalar_of(node, nin)
  local attrs = node.attrs
  if attrs == nil then return nil end
  local value = attrs.scalar
  if value == nil then return nil end
  return value, (attrs.scalar_index or nin) + 1
end

local function same_number(a, b)
  if type(a) ~= "number" then return false end
  if a == b then return true end
  local scale = math.max(math.abs(a), math.abs(b))
  return math.abs(a - b) <= 1e-6 * scale   -- scalars may have gone through f32
end

local solve

-- Match call pattern `pat` against `node`, which satisfies the goal in slot
-- `slot`; its operands become goals in slots slot.. and the search goes on.
-- A node's op and inputs, and a tensor's producer, read once: a match
-- backtracks over the same nodes, neighbouring roots share producers, and
-- fields of C-backed nodes are built on every read. The tables are emptied
-- when they fill (weak tables cost the collector more than they save).
local CACHE_MAX = 4096
local OPS, INPUTS, PRODUCERS, cached = {}, {}, {}, 0

local function remember()
  cached = cached + 1
  if cached > CACHE_MAX then
    OPS, INPUTS, PRODUCERS, cached = {}, {}, {}, 0
  end
end

local function op_of(node)
  local op = OPS[node]
  if op == nil then
    op = node.op
    if type(node) ~= "table" then remember(); OPS[node] = op end
  end
  return op
end

local function match_call(st, pat, node, slot)
  if op_of(node) ~= pat.op then return false end
  local inputs = INPUTS[node]
  if inputs == nil then
    inputs = node.inputs
    if type(node) ~= "table" and inputs ~= nil then remember(); INPUTS[node] = inputs end
  end
  local nin = inputs and #inputs or 0
  local args = pat.args
  local n = #args
  -- A valid graph has a scalar only where a tensor operand is missing, so
  -- attrs are read only then (they may be costly for a C-backed node).
  local scalar, at
  if nin ~= n then
    if nin + 1 ~= n then return false end
    scalar, at = scalar_of(node, nin)
    if scalar == nil then return false end
  end
  local m = st.depth + 1
  st.depth, st.matched[m] = m, node
  local gp, gv, gk = st.gp, st.gv, st.gk
  local top = slot + n - 1
  for order = 1, (pat.commutative and n == 2) and 2 or 1 do
    for j = 1, n do
      local k = order == 1 and j or 3 - j          -- operand k is matched by args[j]
      local g = top - j + 1                        -- first argument on top of the stack
      gp[g] = args[j]
      if scalar ~= nil and k == at then
        gv[g], gk[g] = scalar, SCALAR
      else
        gv[g], gk[g] = inputs[(scalar ~= nil and k > at) and k - 1 or k], TENSOR
      end
    end
    if solve(st, top) then return true end
  end
  st.depth = m - 1
  return false
end

-- Solve goals 1..top (top first). On failure slots 1..top and the bindings
-- are as they were on entry, which is what lets a caller try another order.
function solve(st, top)
  if top == 0 then return true end
  local gp, gv, gk = st.gp, st.gv, st.gk
  local pat, val, kind = gp[top], gv[top], gk[top]
  local tag = pat.tag
  local ok
  if tag == "num" then
    ok = kind == SCALAR and same_number(val, pat.value) and solve(st, top - 1)
  elseif tag == "svar" then
    local bound = st.bind[pat.name]
    if kind ~= SCALAR then
      ok = false
    elseif bound ~= nil then
      ok = same_number(val, bound) and solve(st, top - 1)
    else
      st.bind[pat.name] = val
      ok = solve(st, top - 1)
      if not ok then st.bind[pat.name] = nil end
    end
  elseif kind ~= TENSOR or val == nil then
    ok = false
  elseif tag == "var" or tag == "bind" then
    local name, id = pat.name, st.id
    local key = id and id(val) or val
    local bound = st.bound[name]
    if bound ~= nil and bound ~= key then
      ok = false
    else
      if bound == nil then st.bound[name], st.bind[name] = key, val end
      -- A binding's body then matches the same tensor, in this goal's slot.
      if tag == "bind" then gp[top] = pat.body; ok = solve(st, top) else ok = solve(st, top - 1) end
      if not ok and bound == nil then st.bound[name], st.bind[name] = nil, nil end
    end
  else
    local producer = PRODUCERS[val]
    if producer == nil then
      producer = val.producer
      if type(val) ~= "table" then remember(); PRODUCERS[val] = producer or false end
    end
    ok = producer and match_call(st, pat, producer, top) or false
    -- An optional op that is not there: its operand stands for it.
    if not ok and pat.optional then
      gp[top], gv[top], gk[top] = pat.args[1], val, kind   -- match_call reused the slot
      ok = solve(st, top)
    end
  end
  if not ok then gp[top], gv[top], gk[top] = pat, val, kind end
  return ok
end

local Expr = {}
Expr.__index = Expr

-- nodes in an order where each comes after the matched producers of its
-- inputs, stable otherwise. Needed when a bound name's body is matched after
-- a plain use of the name has led elsewhere (n is a few dozen at most).
local function producers_first(nodes, id)
  local key = function(o) return id and id(o) or o end
  local index, placed, out = {}, {}, {}
  for i, n in ipairs(nodes) do index[key(n)] = i end
  local function place(i)
    if placed[i] then return end
    placed[i] = true
    for _, t in ipairs(nodes[i].inputs or {}) do
      local j = t.producer and index[key(t.producer)]
      if j then place(j) end
    end
    out[#out + 1] = nodes[i]
  end
  for i = 1, #nodes do place(i) end
  return out
end

local function new_state()
  return { gp = {}, gv = {}, gk = {}, bound = {}, bind = {}, matched = {}, depth = 0 }
end

-- Match with `node` as the pattern's root. Returns bindings (variable name ->
-- tensor) and the matched op nodes, producers first and root last; or nil.
-- opts.id(obj) gives the identity used to compare tensors and nodes, for
-- callers whose objects are fresh proxies on every access.
function Expr:match_expr(node, opts)
  if node == nil or op_of(node) ~= self.root_op then return nil end
  local st = self._state
  if st.busy then st = new_state() end    -- re-entered from opts.id: use a private stack
  local id = opts and opts.id or self._id
  st.busy, st.id, st.depth = true, id, 0
  -- Node fields and opts.id are the caller's code and may raise; the shared
  -- state must not stay half-used when they do.
  local fine, ok = pcall(match_call, st, self.tree, node, 1)
  if not fine then
    self._state = new_state()
    error(ok, 0)
  end
  local bindings, nodes
  if ok then
    bindings, nodes = {}, {}
    for _, name in ipairs(self.vars) do
      bindings[name] = st.bind[name]
      st.bound[name], st.bind[name] = nil, nil
    end
    -- Reversed pre-order puts producers first. Only a pattern naming an op
    -- twice can match one node twice; it is then listed once, at its first
    -- place, which keeps producers before consumers.
    local matched, listed = st.matched, self._repeats_op and {}
    for i = st.depth, 1, -1 do
      local n = matched[i]
      matched[i] = nil
      if listed then
        local key = id and id(n) or n
        if not listed[key] then listed[key] = true; nodes[#nodes + 1] = n end
      else
        nodes[#nodes + 1] = n
      end
    end
    if self._binds then nodes = producers_first(nodes, id) end
  end
  st.busy, st.id = false, nil
  return bindings, nodes
end

function Expr:match()
  error("expression pattern '" .. self.source .. "': use p:match_expr(node), not p:match", 2)
end
Expr.match_tokens = Expr.match

local function mark_commutative(node)
  if node.tag == "bind" then return mark_commutative(node.body) end
  if node.tag ~= "call" then return end
  node.commutative = COMMUTATIVE[node.op] or false
  for _, arg in ipairs(node.args) do mark_commutative(arg) end
end

-- The ops that can produce the tensor an operand pattern matches: its op,
-- or for an optional op also what its operand can be; nil when anything
-- can (a variable).
local function first_ops(node)
  if node.tag == "bind" then return first_ops(node.body) end
  if node.tag ~= "call" then return nil end
  if not node.optional then return { node.op } end
  local inner = first_ops(node.args[1])
  if not inner then return nil end
  local list = { node.op }
  for _, op in ipairs(inner) do list[#list + 1] = op end
  return list
end

-- The most ops on a path from the tree's root down to a variable or
-- number: how far up from its root node a match can look (the patterns
-- driver remembers matches by the structure within that height).
local function height(node)
  if node.tag == "bind" then return height(node.body) end
  if node.tag ~= "call" then return 0 end
  local h = 0
  for _, arg in ipairs(node.args) do
    local a = height(arg)
    if a > h then h = a end
  end
  return h + 1
end

local function compile_expr(tree, ops, opts)
  if tree.tag ~= "call" then
    fail(tree.pos, "an expression pattern needs an op at its root, e.g. 'silu(x) * y'")
  end
  if tree.optional then fail(tree.pos, "the root of an expression pattern cannot be optional") end
  local facts = { vars = {}, seen = {}, bound = {}, calls = 0, ops = {}, repeats_op = false }
  expr_facts(tree, ops, facts)
  mark_commutative(tree)
  -- root_needs: for each operand of the root that must be made by some op,
  -- the ops that may make it. A root whose inputs' producers miss one
  -- cannot match, which the patterns driver checks before asking.
  local needs = {}
  for _, arg in ipairs(tree.args) do needs[#needs + 1] = first_ops(arg) end
  return setmetatable({
    kind = "expr", tree = tree, vars = facts.vars, root_op = tree.op, root_needs = needs,
    height = height(tree), size = facts.calls, _state = new_state(), _id = opts and opts.id,
    _repeats_op = facts.repeats_op or facts.binds, _binds = facts.binds,
  }, Expr)
end

---------------------------------------------------------------------------
-- Entry point.

-- LPeg's stacks (its backtrack stack, nested captures) hold any nesting a
-- person writes, not any text: deeper nesting is refused up front, so the
-- error can point at the one level too many. Levels are open parentheses
-- plus the unary minus signs since the last name or number (a count that
-- errs on the safe side: "a - -b" counts two).
local MAX_NESTING = 30

local function check_nesting(src)
  local depth, minus = 0, 0
  for pos, c in src:gmatch("()([%(%)%-%w])") do
    if c == "(" then
      depth = depth + 1
    elseif c == ")" then
      depth = math.max(depth - 1, 0)
    elseif c == "-" then
      if src:sub(pos + 1, pos + 1) ~= ">" then minus = minus + 1 end
    else
      minus = 0
    end
    if depth + minus > MAX_NESTING then
      fail(pos, string.format("nesting too deep (more than %d levels of parentheses and signs)", MAX_NESTING))
    end
  end
end

local function parse(grammar, src)
  local ok, tree = pcall(grammar.match, grammar, src)
  if ok then return tree end
  if type(tree) == "string" and (tree:find("stack overflow", 1, true) or tree:find("nesting too deep", 1, true)) then
    -- LPeg's own limit, met in a way check_nesting does not foresee.
    fail(#src + 1, "nesting too deep for the pattern parser")
  end
  error(tree, 0)   -- our own failures, and bugs
end

-- Compile `src`; raise "chunk:line:col: message" plus the line and a caret.
-- opts.form = "chain" | "expr" forces a form (default: whichever parses; on
-- two failures, the one that got further). opts.ops replaces pattern.ops, or
-- is false to accept any op name. opts.id is the default for match_expr.
function pattern.compile(src, chunkname, opts)
  local chunk = chunkname or "pattern"
  if type(src) ~= "string" then error("pattern.compile: source must be a string", 2) end
  opts = opts or {}
  local ops = opts.ops
  if ops == nil then ops = pattern.ops end
  if not src:find("%S") then dsl.raise(chunk, src, { pos = 1, msg = "empty pattern" }) end
  local _, deep = dsl.try(check_nesting, src)
  if deep then dsl.raise(chunk, src, deep) end

  local tree, form, failure
  if opts.form ~= "expr" then
    tree, failure = dsl.try(parse, chain_grammar, src)
    form = "chain"
  end
  if not tree and opts.form ~= "chain" then
    local etree, efailure = dsl.try(parse, expr_grammar, src)
    if etree then
      tree, form = etree, "expr"
    elseif not failure or efailure.pos > failure.pos then
      failure = efailure
    end
  end
  if not tree then dsl.raise(chunk, src, failure) end

  local p, err = dsl.try(form == "chain" and compile_chain or compile_expr, tree, ops, opts)
  if not p then dsl.raise(chunk, src, err) end
  p.source, p.chunk = src, chunk
  return p
end

return pattern
