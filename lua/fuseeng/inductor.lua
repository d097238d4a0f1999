-- fuseeng.inductor: Inductor's fusion heuristics (seed 003, "Deep Dive into
-- fuse_nodes" and "speedup_by_fusion") as pieces a greedy policy plugs in:
-- can_fuse's gates, score_fusion's ordering and benchmark mode's verdict.
-- policies/inductor_greedy.lua, spill_veto.lua and spill_tolerant.lua are
-- built from them; the greedy driver (core/script/driver_greedy.c) is
-- fuse_nodes' loop (shared buffers, +-64 window, rounds, stale pairs).
--
-- Inductor schedules loops, not ops: a node is an iteration domain, the
-- elements it writes (pointwise) or its rows x reduced elements
-- (reduction), and SIMD kernels fuse nodes whose domains line up. Views do
-- not exist for it: they are index arithmetic in their reader. Here:
--   view       (fe.ops[op].view) no domain: fuses with anything, launches
--              nothing on its own
--   reduction  sum/mean/amax/amin over attrs.axes, softmax over attrs.axis,
--              layer/rms_norm over normalized_shape: {full = input
--              elements, rows = its shape with the reduced axes set to 1}
--   pointwise  everything else (elementwise, broadcast, gathers, concat,
--              batch_norm): its output elements
-- and a group's domain is compatible when its reductions all reduce the
-- same axes of the same shape, and each pointwise member iterates either
-- the full domain (prologue/epilogue) or exactly the rows (a row-wise
-- epilogue such as rsqrt(mean + eps)). Inductor inlines a pointwise
-- producer into every reader before scheduling (a broadcast mask is
-- recomputed per element of its reader); a pointwise-only part that feeds
-- a larger domain is taken into it here for the same reason, but once,
-- since a plan cannot duplicate nodes.
local fe = require "fuseeng"

local M = {}

-- Inductor's config defaults.
M.MAX_FUSION_SIZE = 64       -- config.max_fusion_size: nodes per fused kernel

--- The extern kernels (library ops: matmul, conv2d, sdpa), sorted: nothing
--- fuses into or out of them, so a greedy policy gives them as solo_ops
--- and the driver forms no candidate with them (can_fuse would refuse
--- every one; on a LLaMA model those were 40% of the decisions).
M.EXTERN_OPS = {}
for name, op in pairs(fe.ops) do
  if op.library then M.EXTERN_OPS[#M.EXTERN_OPS + 1] = name end
end
table.sort(M.EXTERN_OPS)

local REDUCE_AXES = { sum = true, mean = true, amax = true, amin = true }
local REDUCE_AXIS = { softmax = true, log_softmax = true }
local NORMS = { layer_norm = true, rms_norm = true }

local function shape_key(shape)
  return table.concat(shape, "x")
end

local function as_list(v)
  if v == nil then return nil end
  if type(v) == "number" then return { v } end
  local t = {}
  for i, x in ipairs(v) do t[i] = x end
  return t
end

-- The axes node n reduces (0-based, sorted), or nil if it is no reduction
-- Inductor would schedule as one (custom reductions such as cumsum are
-- scans: treated as pointwise).
local function reduced_axes(n, op, rank)
  local a = n.attrs
  local axes
  if REDUCE_AXES[op] then
    axes = as_list(a.axes)
    if not axes then
      axes = {}
      for i = 1, rank do axes[i] = i - 1 end
    end
  elseif REDUCE_AXIS[op] then
    axes = { a.axis or -1 }
  elseif NORMS[op] then
    local k = a.normalized_shape and #as_list(a.normalized_shape) or 1
    axes = {}
    for i = 1, k do axes[i] = rank - k + i - 1 end
  else
    return nil
  end
  for i, x in ipairs(axes) do axes[i] = x < 0 and x + rank or x end
  table.sort(axes)
  return axes
end

-- Node n's iteration domain: nil for a view; for a reduction {red = true,
-- full, rows, rows_key, axes}; for pointwise false, its numel and n, whose
-- shape key is made only when a gate compares it (key_of: most pointwise
-- nodes are never compared, and a key per node was a table and a string).
local function domain(n, name, op)
  if op and op.view then return nil end
  local input, axes
  if REDUCE_AXES[name] or REDUCE_AXIS[name] or NORMS[name] then
    input = n.inputs[1]
    axes = input and reduced_axes(n, name, input.rank)
  end
  if not axes then return false, n.numel, n end
  local rows, shape = 1, {}
  for i, s in ipairs(input.shape) do shape[i] = s end
  for _, x in ipairs(axes) do shape[x + 1] = 1 end
  for _, s in ipairs(shape) do rows = rows * s end
  return { red = true, full = input.numel, rows = rows, rows_key = shape_key(shape),
           axes = table.concat(axes, ",") .. "/" .. shape_key(input.shape) }
end

-- Group g's facts, memoised in cache.groups under g.id (id, when the caller has it): lib (its first extern node, or false); why (set when
-- two of its reductions disagree); its domain: red (the first reduction's,
-- or false), numel and key (the most elements a pointwise member iterates,
-- and that member: key_of turns it into its shape's key; at is its index,
-- the first such in order);
-- n, first and last (its size and its first and last node's index); id.
-- These loops over up to max_fusion_size members were most of a plan's
-- time: the greedy driver scores each pair of groups each round, and most
-- groups are new each round. So a fused pair's facts are made from its
-- parts' when decide says yes (fused), in the table of one of them: a
-- greedy driver never shows a part again (its groups only grow); a group
-- the cache does not know (one whose decide the memo answered) is
-- summarised from its nodes.
-- A facts table is a list, not a record: ten named fields made each a hash
-- part of sixteen slots, and a run keeps one per group. SIG is its
-- ctx:signature, made when first asked for (benchmark mode); a fused
-- group's SIG comes from its decide.
local ID <const>, LIB <const>, WHY <const>, RED <const>, NUMEL <const> = 1, 2, 3, 4, 5
local KEY <const>, AT <const>, N <const>, FIRST <const>, LAST <const> = 6, 7, 8, 9, 10
local SIG <const> = 11

-- What facts needs of an op, by name: VIEW (no domain), RED (a
-- reduction, if its attributes make it one), LIB (an extern kernel) or
-- POINTWISE; made once per op name.
local POINTWISE <const>, VIEW <const>, RED_OP <const>, LIB_OP <const> = 0, 1, 2, 3
local op_class = setmetatable({}, { __index = function(t, name)
  local op = fe.ops[name]
  local c = POINTWISE
  if op and op.view then c = VIEW
  elseif REDUCE_AXES[name] or REDUCE_AXIS[name] or NORMS[name] then c = RED_OP end
  if op and op.library then c = c == POINTWISE and LIB_OP or c end
  t[name] = c
  return c
end })

local function facts(g, cache, id)
  local groups = cache.groups
  if not groups then
    groups = {}
    cache.groups = groups
  end
  id = id or g.id
  local f = groups[id]
  if f then return f end
  local lib = false
  local red, numel, key, at = false, 0, nil, nil
  local why, first, last
  local nodes = g.nodes
  -- A node in a larger group is no group of one again: its facts (id =
  -- its index) go, or a million of them would stay for the whole run.
  local several = #nodes > 1
  for i = 1, #nodes do
    local n = nodes[i]
    local name, index = n.op, n.index
    first, last = first or index, index
    if several then groups[index] = nil end
    local c = op_class[name]
    if c == POINTWISE or c == LIB_OP then
      if c == LIB_OP and not lib then lib = n end
      local dn = n.numel
      if dn > numel then numel, key, at = dn, n, index end
    elseif c == RED_OP then
      local d, dn, dk = domain(n, name, nil)
      if d then
        if red and red.axes ~= d.axes and not why then
          why = ("reductions over different ranges (%s vs %s)"):format(red.axes, d.axes)
        end
        red = red or d
      elseif dn > numel then
        numel, key, at = dn, dk, index
      end
    end
  end
  f = { id, lib, why, red, numel, key, at, #nodes, first, last }
  groups[id] = f
  return f
end

-- decide said yes to fusing parts with facts fa and fb into group (whose
-- ctx:signature is sig, if benchmark mode made it): the fused group's facts
-- are made in fa's table from both parts' (a greedy driver never shows a
-- part again: its groups only grow), and fb's is forgotten. Both passed
-- can_fuse: no extern, no disagreement, and reductions that agree, so
-- either reduction's domain is the other's.
local function fused(group, fa, fb, cache, sig)
  local groups = cache.groups
  groups[fa[ID]], groups[fb[ID]] = nil, nil
  if fb[NUMEL] > fa[NUMEL] or (fb[NUMEL] == fa[NUMEL] and fb[NUMEL] > 0 and fb[AT] < fa[AT]) then
    fa[NUMEL], fa[KEY], fa[AT] = fb[NUMEL], fb[KEY], fb[AT]
  end
  fa[RED] = fa[RED] or fb[RED]
  fa[N] = fa[N] + fb[N]
  if fb[FIRST] < fa[FIRST] then fa[FIRST] = fb[FIRST] end
  if fb[LAST] > fa[LAST] then fa[LAST] = fb[LAST] end
  fa[LIB], fa[WHY], fa[SIG] = false, nil, sig
  local id = group.id
  fa[ID] = id
  groups[id] = fa
end

-- The run's cache of group facts (ctx.state.inductor).
local function run_cache(ctx)
  local state = ctx.state
  local cache = state.inductor
  if not cache then
    -- channels_last: Inductor's layout optimization is on and the graph
    -- holds a convolution, so its rank-4 activations are NHWC (gates)
    cache = { channels_last = ctx.params.layout_optimization == true
                              and #ctx.graph:nodes_of("conv2d") > 0 }
    state.inductor = cache
  end
  return cache
end

-- Does group s write a tensor that a node outside s and other reads (or a
-- graph output)? Then Inductor stores it: s is a scheduler node of its
-- own, not a loader inlined into other.
local function read_elsewhere(s, other)
  local inside = {}
  for _, n in ipairs(s.nodes) do inside[n.index] = true end
  for _, n in ipairs(other.nodes) do inside[n.index] = true end
  for _, n in ipairs(s.nodes) do
    for _, t in ipairs(n.outputs) do
      if t.is_output then return true end
      for _, c in ipairs(t.consumers) do
        if not inside[c.index] then return true end
      end
    end
  end
  return false
end

-- The simulator's figures for a group, kept by its structure
-- (ctx:signature): a model's repeated blocks price each kernel once. f is
-- the group's facts, which keep its signature, or nil for a candidate;
-- the signature is returned too.
local function priced(ctx, group, f)
  local cache = run_cache(ctx)
  local known = cache.priced
  if not known then
    known = {}
    cache.priced = known
  end
  local sig = f and f[SIG]
  if not sig then
    sig = ctx:signature(group)
    if f then f[SIG] = sig end
  end
  local s = known[sig]
  if not s then
    local r = ctx:simulate(group)
    s = { time = r.time, spill_regs = r.spill_regs, regs = r.regs }
    known[sig] = s
  end
  return s, sig
end

-- The shape key of facts s's largest pointwise member (made once).
local function key_of(s)
  local k = s[KEY]
  if k and type(k) ~= "string" then
    k = shape_key(k.shape)
    s[KEY] = k
  end
  return k
end

local gates

-- A node's attributes as text in key order ("perm=1,0 start=0"), for
-- access keys.
local function attr_text(n)
  local a, keys, parts = n.attrs, {}, {}
  for k in pairs(a) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do
    local v = a[k]
    parts[i] = k .. "=" .. (type(v) == "table" and table.concat(v, ",") or tostring(v))
  end
  return table.concat(parts, " ")
end

-- How node n indexes its input tensor t, as a key equal for two reads
-- exactly when they read the same elements in the same order (Inductor's
-- MemoryDep: buffer, index, sizes): "flat" for an elementwise or
-- broadcast op of t's size or a reshape (contiguous: the flat index is
-- unchanged); a broadcast from t's shape into the node's; else the op,
-- its attributes, its output shape and t's position among its inputs
-- (a transpose, slice, gather, concat each index t their own way).
local function access(n, t, pos)
  local pat = n.pattern
  if (pat == "elemwise" or pat == "broadcast") and n.op ~= "batch_norm" then
    if n.numel == t.numel then return "flat" end
    return "broadcast " .. shape_key(t.shape) .. " to " .. shape_key(n.shape)
  end
  if n.op == "reshape" then return "flat" end
  return ("%s{%s} to %s #%d"):format(n.op, attr_text(n), shape_key(n.shape), pos)
end

-- Do groups a and b read some tensor both read from outside with the same
-- indexing? true, or false and the keys of the first shared tensor (for
-- the reason: structure only, no names).
local function same_access(a, b)
  local keys, seen = {}, {}
  for _, n in ipairs(a.nodes) do
    for i, t in ipairs(n.inputs) do
      if not (t.producer and a:contains(t.producer)) then
        local k = keys[t.name] or {}
        keys[t.name] = k
        k[access(n, t, i)] = true
      end
    end
  end
  local first
  for _, n in ipairs(b.nodes) do
    for i, t in ipairs(n.inputs) do
      local k = keys[t.name]
      if k and not (t.producer and b:contains(t.producer)) then
        local mine = access(n, t, i)
        if k[mine] then return true end
        if not first and not seen[t.name] then
          local theirs = {}
          for x in pairs(k) do theirs[#theirs + 1] = x end
          table.sort(theirs)
          first = table.concat(theirs, ", ") .. " vs " .. mine
        end
        seen[t.name] = true
      end
    end
  end
  return false, first
end

-- t[k], a new table there if it has none.
local function sub(t, k)
  local s = t[k]
  if not s then
    s = {}
    t[k] = s
  end
  return s
end

-- fmt:format(x, shape(y)) (shape: optional), made once per run for each
-- (fmt, x, y) in cache: a gate's reason depends on sizes and shapes only,
-- which repeat with the model's blocks (the decision log interns the
-- reason anyway). x and y must not be nil or NaN.
local function said(cache, fmt, x, y, shape)
  local by_fmt = cache.said
  local by_x = by_fmt and by_fmt[fmt]
  local by_y = by_x and by_x[x]
  local s = by_y and by_y[y]
  if not s then   -- the first time: no calls on the path taken every other time
    s = fmt:format(x, shape and shape(y) or y)
    sub(sub(sub(cache, "said"), fmt), x)[y] = s
  end
  return s
end

--- can_fuse(a, b, cache): true and how, or false and why, for the two
--- groups of a greedy candidate (group.parts). The engine has already
--- checked legality (cycles, kernel classes); these are Inductor's own
--- gates: extern kernels, max_fusion_size, and domains that line up.
--- cache holds per-group facts for the run (any table kept for it).
function M.can_fuse(a, b, cache)
  return gates(a, b, facts(a, cache), facts(b, cache), cache)
end

-- can_fuse on two groups' facts; reasons kept in cache (said).
function gates(a, b, sa, sb, cache)
  local lib = sa[LIB] or sb[LIB]
  if lib then
    return false, ("%s in {part%d} is an extern kernel: nothing fuses into or out of it")
                  :format(lib.op, sa[LIB] and 1 or 2)
  end
  if sa[N] + sb[N] > M.MAX_FUSION_SIZE then
    return false, said(cache, "%d nodes > max_fusion_size %d", sa[N] + sb[N], M.MAX_FUSION_SIZE)
  end
  if sa[WHY] then return false, sa[WHY] end
  if sb[WHY] then return false, sb[WHY] end
  if sa[RED] and sb[RED] then
    if sa[RED].axes ~= sb[RED].axes then
      return false, said(cache, "reductions over different ranges (%s vs %s)", sa[RED].axes, sb[RED].axes)
    end
    return true, "reduction"
  end
  -- A pointwise-only producer of a larger domain is inlined into it.
  local ra, rb = sa[RED], sb[RED]
  if not ra and sa[NUMEL] > 0 and sa[NUMEL] < (rb and rb.full or sb[NUMEL]) and a:feeds(b) then
    return true, "inlined"
  end
  if not rb and sb[NUMEL] > 0 and sb[NUMEL] < (ra and ra.full or sa[NUMEL]) and b:feeds(a) then
    return true, "inlined"
  end
  local red = sa[RED] or sb[RED]
  if red then
    local s = sa[RED] and sb or sa
    -- Inductor's SIMD can_fuse compares sizes, not shapes: the pointwise
    -- side's numel against the reduction's numel x rnumel or its numel
    -- (the rows), so a keepdim=False reduction ([64, 128] -> [64]) takes
    -- its [64] epilogue as a keepdim=True one ([64, 1]) does.
    if s[NUMEL] == 0 or s[NUMEL] == red.full or s[NUMEL] == red.rows then
      -- Channels_last (layout optimization): a reduction over H and W of
      -- an NHWC tensor reduces a strided axis. Inductor makes it one
      -- persistent pass only up to 64 elements a row (its threshold for
      -- reductions that are not over the innermost axis); a longer one
      -- loops, and takes its pointwise producer only when it is inlined
      -- (read by nothing else), as a ResNet's last block into its average
      -- pool, and keeps a stored one apart, as a squeeze-and-excitation
      -- block's activation at 14x14 and more before its pool (RegNetY and
      -- MobileNetV3 against Inductor 2.11: at 7x7 both fuse it).
      local sg, rg = sa[RED] and b or a, sa[RED] and a or b
      if cache.channels_last and s[NUMEL] == red.full and red.full > 64 * red.rows
         and red.axes:match("^2,3/%d+x%d+x%d+x%d+$") and sg:feeds(rg) and read_elsewhere(sg, rg) then
        return false, said(cache, "channels_last: a looped reduction over H and W (%s) takes no "
                           .. "stored producer", red.axes, false)
      end
      return true, "prologue/epilogue"
    end
    return false, ("pointwise over %s fits neither the reduction's %d elements nor its %d rows (%s)")
                  :format(key_of(s), red.full, red.rows, red.rows_key)
  end
  if sa[NUMEL] > 0 and sb[NUMEL] > 0 and sa[NUMEL] ~= sb[NUMEL] then
    return false, said(cache, "pointwise sizes differ (%d vs %d elements)", sa[NUMEL], sb[NUMEL])
  end
  if a:feeds(b) or b:feeds(a) then return true, "vertical" end
  -- Horizontal: Inductor's score_fusion_memory counts a buffer both read
  -- only when both read it with the same index (its MemoryDeps are equal),
  -- and can_fuse refuses a pair that shares nothing so counted.
  local same, how = same_access(a, b)
  if not same then
    return false, "horizontal: no tensor both read with the same indexing ("
                  .. (how or "nothing both read") .. ")"
  end
  return true, "horizontal"
end

--- Bytes a and b both touch (Inductor's score_fusion_memory): tensors one
--- writes and the other reads, or both read (group:shared_bytes; the two
--- must not overlap).
function M.shared_bytes(a, b)
  return a:shared_bytes(b)
end

--- score_fusion(a, b, cache): Inductor's key (same reduction-ness with
--- shared data, memory saved, -distance) as one number, compared
--- lexicographically: bit 52 the type, bits 10..51 the bytes (up to 4 TiB),
--- bits 0..9 1023 - distance (distances over 1023 nodes tie).
local function score(a, b, cache)
  local mem = a:shared_bytes(b)
  local groups = cache.groups or {}
  local ia, ib = a.id, b.id
  local fa, fb = groups[ia] or facts(a, cache, ia), groups[ib] or facts(b, cache, ib)
  local same = not fa[RED] == not fb[RED] and mem > 0
  -- max(|fa[FIRST] - fb[LAST]|, |fb[FIRST] - fa[LAST]|), without the four
  -- calls into the math library (this runs for every candidate pair).
  local d1, d2 = fa[FIRST] - fb[LAST], fb[FIRST] - fa[LAST]
  if d1 < 0 then d1 = -d1 end
  if d2 < 0 then d2 = -d2 end
  local dist = d1 > d2 and d1 or d2
  if dist > 1023 then dist = 1023 end
  if mem > 2^42 - 1 then mem = 2^42 - 1 end
  return (same and 2^52 or 0) + mem * 1024 + (1023 - dist)
end
M.score = score

local benchmark

-- Benchmark mode's verdict on times fused and apart (unit "simulated" or
-- "measured"): fuse or not, and the log line's head and tail around the
-- pair's names.
local function judged(fused, apart, unit)
  if fused == apart then
    return false, "cannot fuse (benchmark): fusing ",
           (" gains nothing (%s %s either way)"):format(unit, fe.fmt_time(fused))
  end
  local speedup = fused > 0 and apart / fused or math.huge
  if fused < apart then
    return true, "can fuse (benchmark): fusing ", (" cause %.3fx speedup (%s %s vs %s)")
                 :format(speedup, unit, fe.fmt_time(fused), fe.fmt_time(apart))
  end
  return false, "cannot fuse (benchmark): fusing ", (" cause %.3fx slowdown (%s %s vs %s)")
                :format(1 / speedup, unit, fe.fmt_time(fused), fe.fmt_time(apart))
end

-- judged on simulated times, kept per (fused, apart) in the run's cache:
-- priced kernels repeat with the model's blocks, and three string.formats
-- per candidate were a twentieth of a spill policy's planning.
local function judged_simulated(cache, fused, apart)
  if fused ~= fused or apart ~= apart then return judged(fused, apart, "simulated") end   -- NaN: no key
  local by_fused = cache.judged
  local by_apart = by_fused and by_fused[fused]
  local j = by_apart and by_apart[apart]
  if not j then
    j = table.pack(judged(fused, apart, "simulated"))
    sub(sub(cache, "judged"), fused)[apart] = j
  end
  return j[1], j[2], j[3]
end

--- benchmark(group, ctx, spill, measure): benchmark mode's verdict on a candidate
--- that passed can_fuse: the fused kernel against its two parts apart, on
--- the simulator (measure = false) or the run's device (ctx:bench: the
--- CPU's kernels, or the GPU's with --device cuda). spill = "veto" rejects
--- a fused kernel that spills registers (by the simulator's estimate, or
--- the spill bytes the GPU's compiler reports) before trusting its time, as
--- Inductor does; "price" lets the time (spill traffic
--- included) decide. The reason is Inductor's fusion log line.
function M.benchmark(group, ctx, spill, measure)
  local cache, parts = run_cache(ctx), group.parts
  return benchmark(group, ctx, spill, measure, parts[1], parts[2],
                   facts(parts[1], cache), facts(parts[2], cache))
end

-- benchmark on the parts a and b with facts fa and fb; a third result is
-- the fused group's signature when the simulator priced it.
function benchmark(group, ctx, spill, measure, a, b, fa, fb)
  -- The engine writes the parts' names in for "{part1}" and "{part2}"
  -- (Inductor's buffer sets: {'a'}, {'a', 'b'}, {'a', ..., 'z'} (N nodes)),
  -- so the reason depends on the pair's structure only (memo = true).
  local ok, head, tail, sig
  if measure then
    local m, why = ctx:bench(group)
    if not m then return false, "cannot fuse {part1} with {part2}: not measured: " .. why end
    -- On a GPU the compiler reports spills (local bytes a thread) of the
    -- fused kernel it built: the veto Inductor applies, on the real count.
    if spill == "veto" and (m.spill_bytes or 0) > 0 then
      return false, ("cannot fuse {part1} with {part2}: register spilling of the fused kernel "
                     .. "(%d spill bytes a thread at %d registers, reported by the %s compiler)")
                    :format(m.spill_bytes, m.registers, m.device)
    end
    ok, head, tail = judged(m.fused * 1e-3, m.separate * 1e-3, "measured")
  else
    local s
    s, sig = priced(ctx, group)
    if s.spill_regs > 0 and spill == "veto" then
      local why = said(run_cache(ctx), ": register spilling of the fused kernel (%d regs > %d)",
                       s.regs, ctx.machine.registers)
      return false, "cannot fuse {part1} with {part2}" .. why
    end
    -- The parts apart: their times summed in order, as ctx:simulate_parts does.
    ok, head, tail = judged_simulated(run_cache(ctx), s.time,
                                      0 + priced(ctx, a, fa).time + priced(ctx, b, fb).time)
  end
  if ok then return true, head .. "{part1} with {part2}" .. tail, sig end
  return false, head .. "{part1} with {part2}" .. tail
end

--- layout_copies(graph): Inductor's layout optimization
--- (config.layout_optimization) for conv nets: when the graph holds a
--- conv2d, convolutions run channels_last, so every conv2d input that
--- arrives in NCHW order from outside, a graph input or a weight, is
--- copied into NHWC by a kernel of its own (Inductor's
--- triton_poi_fused_convolution_N). Activations need none: the kernels
--- that produce them write channels_last directly. Nor does a rank-4
--- tensor whose two orders coincide: C == 1 or H*W == 1 (a 1x1 weight
--- [O, I, 1, 1]). Each tensor once, in node order; the reason names the
--- first conv that reads it. The list a copies hook returns.
function M.layout_copies(graph)
  local copies, seen = {}, {}
  for _, i in ipairs(graph:nodes_of("conv2d")) do
    local n = graph:node(i)
    for _, t in ipairs(n.inputs) do
      local s = t.shape
      if not seen[t.name] and not t.producer and t.rank == 4 and s[2] ~= 1 and s[3] * s[4] ~= 1 then
        seen[t.name] = true
        copies[#copies + 1] = { tensor = t, reason = ("channels_last for conv2d '%s'"):format(n.name) }
      end
    end
  end
  return copies
end

--- score_hook(self, a, b, ctx): score as a greedy policy's score hook
--- (group facts cached in ctx.state for the run).
function M.score_hook(self, a, b, ctx)
  return score(a, b, ctx.state.inductor or run_cache(ctx))
end

--- decide(group, ctx, spill, measure): a greedy candidate's verdict and
--- reason: can_fuse, then, if spill is "veto" or "price", benchmark mode.
function M.decide(group, ctx, spill, measure)
  local cache, parts = ctx.state.inductor or run_cache(ctx), group.parts
  local a, b = parts[1], parts[2]
  local groups = cache.groups or {}
  local ia, ib = a.id, b.id
  local fa, fb = groups[ia] or facts(a, cache, ia), groups[ib] or facts(b, cache, ib)
  local ok, how = gates(a, b, fa, fb, cache)
  if not ok then return false, said(cache, "cannot fuse: %s", how, false) end
  local why, sig
  if spill then
    ok, why, sig = benchmark(group, ctx, spill, measure, a, b, fa, fb)
  else
    why = said(cache, "can fuse (%s): %s shared", how, a:shared_bytes(b), fe.fmt_bytes)
  end
  if ok then fused(group, fa, fb, cache, sig) end
  return ok, why
end

return M
