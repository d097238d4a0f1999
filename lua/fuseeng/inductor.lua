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

local REDUCE_AXES = { sum = true, mean = true, amax = true, amin = true }
local REDUCE_AXIS = { softmax = true, log_softmax = true }
local NORMS = { layer_norm = true, rms_norm = true }

local function shape_key(shape)
  local t = {}
  for i, d in ipairs(shape) do t[i] = tostring(d) end
  return table.concat(t, "x")
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
local function reduced_axes(n, rank)
  local a = n.attrs
  local axes
  if REDUCE_AXES[n.op] then
    axes = as_list(a.axes)
    if not axes then
      axes = {}
      for i = 1, rank do axes[i] = i - 1 end
    end
  elseif REDUCE_AXIS[n.op] then
    axes = { a.axis or -1 }
  elseif NORMS[n.op] then
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

-- Node n's iteration domain (cached per run in cache): nil for a view,
-- {numel, key} for pointwise, {red = true, full, rows, rows_key, axes} for
-- a reduction.
local function domain(n, cache)
  local d = cache[n.index]
  if d ~= nil then return d or nil end
  local op = fe.ops[n.op]
  if op and op.view then
    cache[n.index] = false
    return nil
  end
  local input = n.inputs[1]
  local axes = input and reduced_axes(n, input.rank)
  if axes then
    local rows, shape = 1, {}
    for i, s in ipairs(input.shape) do shape[i] = s end
    for _, x in ipairs(axes) do shape[x + 1] = 1 end
    for _, s in ipairs(shape) do rows = rows * s end
    d = { red = true, full = input.numel, rows = rows, rows_key = shape_key(shape),
          axes = table.concat(axes, ",") .. "/" .. shape_key(input.shape) }
  else
    d = { numel = n.numel, key = shape_key(n.shape) }
  end
  cache[n.index] = d
  return d
end

local function has_library(g)
  for _, n in ipairs(g.nodes) do
    local op = fe.ops[n.op]
    if op and op.library then return n end
  end
  return nil
end

-- A node list's domain: its reduction (the first; nil and why if two
-- disagree) and the most elements any pointwise member iterates.
local function summarize(nodes, cache)
  local red, numel, key = nil, 0, nil
  for _, n in ipairs(nodes) do
    local d = domain(n, cache)
    if d and d.red then
      if red and red.axes ~= d.axes then
        return nil, ("reductions over different ranges (%s vs %s)"):format(red.axes, d.axes)
      end
      red = red or d
    elseif d and d.numel > numel then
      numel, key = d.numel, d.key
    end
  end
  return { red = red, numel = numel, key = key }
end

-- Is a the producer side of b (some output of a read by b)?
local function feeds(a, b)
  local out = {}
  for _, t in ipairs(a.outputs) do out[t.name] = true end
  for _, t in ipairs(b.inputs) do if out[t.name] then return true end end
  return false
end

-- The elements a domain iterates: a reduction's full range, else its
-- largest pointwise member.
local function size(s)
  return s.red and s.red.full or s.numel
end

--- can_fuse(a, b, cache): true and how, or false and why, for the two
--- groups of a greedy candidate (group.parts). The engine has already
--- checked legality (cycles, kernel classes); these are Inductor's own
--- gates: extern kernels, max_fusion_size, and domains that line up.
function M.can_fuse(a, b, cache)
  local lib = has_library(a) or has_library(b)
  if lib then
    return false, ("%s '%s' is an extern kernel: nothing fuses into or out of it"):format(lib.op, lib.name)
  end
  if #a + #b > M.MAX_FUSION_SIZE then
    return false, ("%d nodes > max_fusion_size %d"):format(#a + #b, M.MAX_FUSION_SIZE)
  end
  local sa, why = summarize(a.nodes, cache)
  if not sa then return false, why end
  local sb
  sb, why = summarize(b.nodes, cache)
  if not sb then return false, why end
  if sa.red and sb.red then
    if sa.red.axes ~= sb.red.axes then
      return false, ("reductions over different ranges (%s vs %s)"):format(sa.red.axes, sb.red.axes)
    end
    return true, "reduction"
  end
  -- A pointwise-only producer of a larger domain is inlined into it.
  for _, pc in ipairs({ { a, b, sa, sb }, { b, a, sb, sa } }) do
    local p, c, sp, sc = pc[1], pc[2], pc[3], pc[4]
    if not sp.red and sp.numel > 0 and sp.numel < size(sc) and feeds(p, c) then
      return true, "inlined"
    end
  end
  local red = sa.red or sb.red
  if red then
    local s = sa.red and sb or sa
    if s.numel == 0 or s.numel == red.full or s.key == red.rows_key then
      return true, "prologue/epilogue"
    end
    return false, ("pointwise over %s fits neither the reduction's %d elements nor its rows %s")
                  :format(s.key, red.full, red.rows_key)
  end
  if sa.numel > 0 and sb.numel > 0 and sa.numel ~= sb.numel then
    return false, ("pointwise sizes differ (%d vs %d elements)"):format(sa.numel, sb.numel)
  end
  return true, (feeds(a, b) or feeds(b, a)) and "vertical" or "horizontal"
end

--- Bytes a and b both touch (Inductor's score_fusion_memory): tensors one
--- writes and the other reads, or both read.
function M.shared_bytes(a, b)
  local mine = {}
  for _, t in ipairs(a.inputs) do mine[t.name] = t.bytes end
  for _, t in ipairs(a.outputs) do mine[t.name] = t.bytes end
  local seen, sum = {}, 0
  for _, list in ipairs({ b.inputs, b.outputs }) do
    for _, t in ipairs(list) do
      if mine[t.name] and not seen[t.name] then
        seen[t.name] = true
        sum = sum + t.bytes
      end
    end
  end
  return sum
end

local function is_reduction(g, cache)
  for _, n in ipairs(g.nodes) do
    local d = domain(n, cache)
    if d and d.red then return true end
  end
  return false
end

--- score_fusion(a, b, cache): Inductor's key (same reduction-ness with
--- shared data, memory saved, -distance) as one number, compared
--- lexicographically: bit 52 the type, bits 10..51 the bytes (up to 4 TiB),
--- bits 0..9 1023 - distance (distances over 1023 nodes tie).
function M.score(a, b, cache)
  local mem = M.shared_bytes(a, b)
  local same = is_reduction(a, cache) == is_reduction(b, cache) and mem > 0
  local dist = math.max(math.abs(a.first.index - b.last.index), math.abs(b.first.index - a.last.index))
  return (same and 2^52 or 0) + math.min(mem, 2^42 - 1) * 1024 + (1023 - math.min(dist, 1023))
end

local function names(g)
  local t = {}
  for i, n in ipairs(g.nodes) do t[i] = "'" .. n.name .. "'" end
  return "{" .. table.concat(t, ", ") .. "}"
end

--- benchmark(group, ctx, spill): benchmark mode's verdict on a candidate
--- that passed can_fuse: the fused kernel against its two parts apart, on
--- the simulator (measure = false) or this CPU's kernels (ctx:bench).
--- spill = "veto" rejects a fused kernel that spills registers before
--- timing it, as Inductor does; "price" lets the time (spill traffic
--- included) decide. The reason is Inductor's fusion log line.
function M.benchmark(group, ctx, spill, measure)
  local a, b = group.parts[1], group.parts[2]
  local pair = ("%s with %s"):format(names(a), names(b))
  local fused, apart, unit
  if measure then
    local m, why = ctx:bench(group)
    if not m then return false, "cannot fuse " .. pair .. ": not measured: " .. why end
    fused, apart, unit = m.fused * 1e-3, m.separate * 1e-3, "measured"
  else
    local s = ctx:simulate(group)
    if s.spill_regs > 0 and spill == "veto" then
      return false, ("cannot fuse %s: register spilling of the fused kernel (%d regs > %d)")
                    :format(pair, s.regs, ctx.machine.registers)
    end
    fused, apart, unit = s.time, ctx:simulate_parts(group).time, "simulated"
  end
  if fused == apart then
    return false, ("cannot fuse (benchmark): fusing %s gains nothing (%s %s either way)")
                  :format(pair, unit, fe.fmt_time(fused))
  end
  local speedup = fused > 0 and apart / fused or math.huge
  if fused < apart then
    return true, ("can fuse (benchmark): fusing %s cause %.3fx speedup (%s %s vs %s)")
                 :format(pair, speedup, unit, fe.fmt_time(fused), fe.fmt_time(apart))
  end
  return false, ("cannot fuse (benchmark): fusing %s cause %.3fx slowdown (%s %s vs %s)")
                :format(pair, 1 / speedup, unit, fe.fmt_time(fused), fe.fmt_time(apart))
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
  for i = 1, graph.nnodes do
    local n = graph:node(i)
    if n.op == "conv2d" then
      for _, t in ipairs(n.inputs) do
        local s = t.shape
        if not seen[t.name] and not t.producer and t.rank == 4 and s[2] ~= 1 and s[3] * s[4] ~= 1 then
          seen[t.name] = true
          copies[#copies + 1] = { tensor = t, reason = ("channels_last for conv2d '%s'"):format(n.name) }
        end
      end
    end
  end
  return copies
end

--- score_hook(self, a, b, ctx): score as a greedy policy's score hook
--- (domains cached in ctx.state for the run).
function M.score_hook(self, a, b, ctx)
  ctx.state.domains = ctx.state.domains or {}
  return M.score(a, b, ctx.state.domains)
end

--- decide(group, ctx, spill, measure): a greedy candidate's verdict and
--- reason: can_fuse, then, if spill is "veto" or "price", benchmark mode.
function M.decide(group, ctx, spill, measure)
  ctx.state.domains = ctx.state.domains or {}
  local a, b = group.parts[1], group.parts[2]
  local ok, how = M.can_fuse(a, b, ctx.state.domains)
  if not ok then return false, "cannot fuse: " .. how end
  if spill then return M.benchmark(group, ctx, spill, measure) end
  return true, ("can fuse (%s): %s shared"):format(how, fe.fmt_bytes(M.shared_bytes(a, b)))
end

return M
