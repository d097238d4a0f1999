-- xla_priority.lua: XLA's GPU fusion as JAX 0.11 runs it on an H200 (openxla/xla,
-- beyond the seeds), three of its passes in their order:
--   1. GemmFusion (xla/service/gpu/transforms/gemm_fusion.cc, with the
--      profitability rules of triton_tiling_propagation.cc): a matmul becomes
--      a Triton GEMM kernel that takes the cheap producers of its operands
--      (unary ops, a binary op whose other operand is a broadcast
--      weight or constant; at most gemm_max_params inputs an operand) and
--      the chain of its single consumers that distribute over the sum
--      (multiply by a scalar or weight, negate, casts that do not widen);
--      triton_gemm = false leaves matmuls alone, as cuBLAS calls.
--   2. SoftmaxRewriterTriton: a reduction over the last axis fuses with what
--      broadcasts it back along the same rows (a normalization "diamond"), and
--      two such reductions over the same rows (a layer norm's mean and
--      variance) share one kernel.
--   3. PriorityFusion (priority_fusion.cc, PriorityFusionQueue and CanFuse;
--      tests in priority_fusion_test.cc): producers wait in a queue ordered
--      by the time fusing them into all their consumers saves, the best is
--      fused first and its neighbours re-priced (core/script/driver_priority.c);
--      decide holds the CanFuse rules our legality check does not: no reduce
--      into reduce, no epilogue that turns a reduction into a loop fusion,
--      concatenate is not fused into its consumers, a model output's producer
--      stays (XLA's root tuple is not fusible), convolutions are cuDNN's.
--      Then XLA's multi-output fusion: a producer that cannot join all its
--      consumers joins one (multi_output, the driver's second queue).
-- The GEMM fusions are the driver's fixed groups: made before its queue and
-- never reopened, as the pass before priority fusion left them.
-- Differences: our plans are partitions, so a producer is never duplicated
-- into several consumers as XLA does; the priority still prices duplication
-- (price = "duplicate"), and a GEMM takes a producer only when all its
-- readers are in that GEMM. XLA's autotuner may split a matmul's K over two
-- kernels (the partial products with the prologue, then their sum with the
-- epilogue); a plan holds the matmul once, with its prologue. Views stay out
-- of GEMM fusions (our matmul kernels hold no data movement; a view
-- launches nothing here). Times are our simulator's, not
-- GpuPerformanceModel's; the normalization rows are bounded by norm_max_row,
-- not Triton's tiling cost model. "Fusion too large" is max_nodes.
local fe = require "fuseeng"

-- Ops that move or relabel data and compute nothing.
local VIEW = { reshape = true, transpose = true, expand = true }
-- Ops a Triton GEMM applies to its partial sums (IsDistributiveOverAddition;
-- its views are not ours to take: our matmul kernels hold no data movement,
-- and a view launches nothing here).
local DISTRIBUTIVE = { mul = true, neg = true, cast = true }

-- Whether tensor t is a weight or input seen through views (XLA's effective
-- parameter: a parameter or a bitcast of one).
local function is_param(t)
  for _ = 1, 8 do
    if t.kind ~= "activation" then return true end
    local p = t.producer
    if not (p and VIEW[p.op]) then return false end
    t = p.inputs[1]
  end
  return false
end

-- The one axis (0-based) a reduction reduces, or nil when it names several.
local function reduced_axis(n)
  local x, op = n.inputs[1], n.op
  local a
  if op == "rms_norm" or op == "layer_norm" then
    a = x.rank - 1
  elseif op == "softmax" or op == "log_softmax" then
    a = n.attrs.axis or -1
  else
    local axes = n.attrs.axes
    if type(axes) ~= "table" or #axes ~= 1 then return nil end
    a = axes[1]
  end
  if a < 0 then a = a + x.rank end
  return a
end

-- The row length of a reduction over the last axis only, and its rows;
-- nil for any other reduction.
local function row_reduce(n)
  local x = n.inputs[1]
  local r = x.rank
  if r == 0 or reduced_axis(n) ~= r - 1 then return nil end
  local last = x.shape[r]
  return last, x.numel // last
end

-- The extent one output element reduces over: XLA calls a reduce
-- significant from 16 elements on (smaller ones are emitted as loops).
local function reduced_extent(node)
  local x, a = node.inputs[1], reduced_axis(node)
  if a then return x.shape[a + 1] end
  return x.numel // math.max(node.output.numel, 1)
end

-- ---- pass 1: the GEMM fusions, found once per run ----

-- Whether XLA's autotuner would split the matmul's K (see the header): its
-- 64x128 output tiles leave cores idle and K is long.
local function splits_k(dot, P)
  if P.split_k_cores <= 0 then return false end
  local out, a = dot.output, dot.inputs[1]
  local r = out.rank
  local n = r >= 1 and out.shape[r] or 1
  local m = r >= 2 and out.shape[r - 1] or 1
  local k = a.rank >= 1 and a.shape[a.rank] or 1
  if dot.attrs.transpose_a and a.rank >= 2 then k = a.shape[a.rank - 1] end
  local tiles = (out.numel // math.max(m * n, 1)) * ((m + 63) // 64) * ((n + 127) // 128)
  return k >= P.split_k_min and tiles < P.split_k_cores
end

-- Whether XLA's GEMM fusion takes node n into an operand (profitability of
-- fusing toward the operands): unary ops that do not narrow, and a binary
-- op whose other operand is a broadcast weight or constant. Views stop the
-- walk (our matmul kernels hold no data movement).
local function prologue_worth(n)
  local op, pat = n.op, n.pattern
  if pat ~= "elemwise" and pat ~= "broadcast" then return false end
  if op == "batch_norm" or op == "where" then return false end
  local ins = n.inputs
  if #ins == 1 then
    return op ~= "cast" or n.output.bytes >= ins[1].bytes
  end
  if #ins ~= 2 then return false end
  for i = 1, 2 do
    local t = ins[i]
    if t.numel < n.numel and is_param(t) then return true end
  end
  return is_param(ins[1]) and is_param(ins[2])
end

-- Whether node n, the single reader of a GEMM's value, distributes over the
-- partial sums and is worth taking (its other operand a scalar or weight;
-- a cast that does not widen).
local function epilogue_worth(n, from)
  local op = n.op
  if op == "div" and n.attrs.scalar and n.attrs.scalar_index == 1 then op = "mul" end
  if not DISTRIBUTIVE[op] then return false end
  if op == "cast" then return n.output.bytes <= n.inputs[1].bytes end
  local seen = 0
  for _, t in ipairs(n.inputs) do
    if t.name == from.name then
      seen = seen + 1
    elseif not is_param(t) then
      return false
    end
  end
  return seen == 1
end

-- Whether XLA compiles matmuls as Triton GEMMs in this run (the params).
local function triton(P)
  return P.triton_gemm and not P.fuse_gemm
end

-- Whether node n is a matmul whose K XLA splits: its node is then the sum
-- of the partial products, fused as any producer (a function of its shape:
-- decide's answers stay structural).
local function is_split(P, n)
  return n.op == "matmul" and triton(P) and splits_k(n, P)
end

-- The GEMM fusions, as groups of node indices with their reason: for each
-- matmul in topological order (XLA's post-order visit; a node an earlier
-- GEMM took stays there) its operand producers, then the matmul and the
-- chain of its single distributive readers, or, with split K, the operand
-- producers alone (the partial products' kernel).
local function gemm_fusions(graph, P)
  local taken, groups = {}, {}
  for _, di in ipairs(graph:nodes_of("matmul")) do
    local dot = graph:node(di)
    local sk = splits_k(dot, P)
    local set, members = { [di] = true }, {}
    -- toward the operands, breadth first, each operand at most
    -- gemm_max_params inputs; a node joins when all its readers are in
    for _, t in ipairs(dot.inputs) do
      local queue, head, inputs = { t }, 1, 1
      while head <= #queue do
        local x = queue[head]; head = head + 1
        local p = x.producer
        if p and not taken[p.index] and not set[p.index] and prologue_worth(p) then
          local all_in = true
          for _, c in ipairs(p.consumers) do
            if not set[c.index] then all_in = false break end
          end
          local added = #p.inputs - 1
          if all_in and inputs + added <= P.gemm_max_params then
            set[p.index] = true
            members[#members + 1] = p.index
            inputs = inputs + added
            for _, u in ipairs(p.inputs) do queue[#queue + 1] = u end
          end
        end
      end
    end
    if sk then
      if #members > 0 then
        members.reason = ("Triton GEMM fusion of %s (its split-K partial products)"):format(dot.name)
      end
    else
      members[#members + 1] = di
      -- toward the users: a chain of single readers
      local n = dot
      while not n.is_output do
        local cs = n.consumers
        if #cs ~= 1 then break end
        local c = cs[1]
        if taken[c.index] or not epilogue_worth(c, n.output) then break end
        members[#members + 1] = c.index
        n = c
      end
      members.reason = ("Triton GEMM fusion of %s"):format(dot.name)
    end
    if members.reason then
      for _, v in ipairs(members) do taken[v] = true end
      groups[#groups + 1] = members
    end
  end
  return groups
end

-- The producer: the first op XLA would not fuse, its first significant
-- reduce, whether it holds a concat or a model output.
local function survey_producer(part, min_extent, P)
  local unfusible, reduce, concat, output = nil, nil, false, false
  for i = 1, #part do
    local n = part[i]
    local pat = n.pattern
    if pat == "out_fusable" or pat == "opaque" then
      if not is_split(P, n) then unfusible = unfusible or n.op end
    elseif pat == "reduction" then
      if not reduce and reduced_extent(n) >= min_extent then reduce = n end
    elseif pat == "injective" and n.op == "concat" then
      concat = true
    end
    if n.is_output then output = true end
  end
  return unfusible, reduce, concat, output
end

-- A consumer: the first op XLA would not fuse (a split matmul reading the
-- producer too: its partial products are a kernel of their own), and,
-- when the producer holds a reduce (with_reduce), its first significant
-- reduce and its largest node output (elements).
local function survey_consumer(part, producer, min_extent, with_reduce, P)
  local unfusible, reduce, largest = nil, nil, 0
  for i = 1, #part do
    local n = part[i]
    local pat = n.pattern
    if pat == "out_fusable" or pat == "opaque" then
      if not is_split(P, n) then
        unfusible = unfusible or n.op
      else
        for _, t in ipairs(n.inputs) do
          local p = t.producer
          if p and producer:contains(p) then unfusible = unfusible or n.op end
        end
      end
    end
    if with_reduce then
      if pat == "reduction" and not reduce and reduced_extent(n) >= min_extent then reduce = n end
      local e = n.numel
      if e > largest then largest = e end
    end
  end
  return unfusible, reduce, largest
end

-- Whether reductions a (the producer's) and b (the consumer's, or nil)
-- form one normalization kernel: a row reduction of at most max_row
-- elements, and b one over the same rows.
local function normalization(a, b, max_row)
  local len, rows = row_reduce(a)
  if not len or len > max_row then return false end
  if not b then return true end
  local len2, rows2 = row_reduce(b)
  return len2 == len and rows2 == rows
end

return fe.policy {
  name = "xla_priority",
  description = "XLA's GPU fusion: Triton GEMM and normalization fusions, then the producer that saves most fuses into all its consumers first",
  source = "XLA GPU priority fusion (priority_fusion.cc), GemmFusion, SoftmaxRewriterTriton",
  driver = "priority",
  tiling = "auto",
  memo = true,   -- decide's answers depend on a group's structure only (docs/policy-guide.md)
  params = { price = "duplicate", max_nodes = 64, max_consumers = 8, min_priority = 0,
             min_reduce = 16, fuse_gemm = false, triton_gemm = true, gemm_max_params = 4,
             split_k_cores = 132, split_k_min = 512, norm_max_row = 16384, multi_output = true },

  -- the pass before priority fusion: the Triton GEMM fusions
  fixed = function(self, graph, ctx)
    local P = self.params
    return triton(P) and gemm_fusions(graph, P) or {}
  end,

  -- the sum of split-K partial products (the only producers asked about,
  -- priority_ops): XLA prices a reduce fused into its readers as the
  -- traffic of its value saved; our simulator would price a matmul kernel
  -- with an epilogue
  priority_ops = { "matmul" },
  priority = function(self, producer, consumers, ctx)
    local P = self.params
    for i = 1, #producer do
      if is_split(P, producer[i]) then
        local m, bytes = ctx.machine, 0
        for _, t in ipairs(producer.outputs) do bytes = bytes + t.bytes end
        return 2 * bytes / m.l3_bandwidth + m.launch_us * 1e-6
      end
    end
    return nil
  end,

  decide = function(self, group, ctx)
    local P = self.params
    local parts = group.parts
    local unfusible, reduce, concat, output = survey_producer(parts[1], P.min_reduce, P)
    if unfusible and not P.fuse_gemm then
      return false, ("the producer is not fusible (%s)"):format(unfusible)
    end
    if output then return false, "its value is a model output (XLA's root tuple is not fusible)" end
    if concat then return false, "concatenate is not fused into its consumers" end
    local norm = false
    for i = 2, #parts do
      local c_unfusible, c_reduce, c_largest =
        survey_consumer(parts[i], parts[1], P.min_reduce, reduce ~= nil, P)
      if c_unfusible and not P.fuse_gemm then
        return false, ("the consumer is not fusible (%s)"):format(c_unfusible)
      end
      if reduce and c_reduce then
        if not normalization(reduce, c_reduce, P.norm_max_row) then
          return false, ("both the producer and the consumer contain a reduce (%s, %s)")
                        :format(reduce.op, c_reduce.op)
        end
        norm = true
      end
      if reduce and c_largest > reduce.numel then
        if not (normalization(reduce, nil, P.norm_max_row) and c_largest <= reduce.inputs[1].numel) then
          return false, ("fusion into the output of a reduce (%s) would make it a loop fusion")
                        :format(reduce.op)
        end
        norm = true
      end
    end
    local n = #parts - 1
    return true, ("%sinto %d consumer%s: saves %s"):format(
      norm and "a normalization kernel: " or "", n, n == 1 and "" or "s", fe.fmt_time(ctx.priority))
  end,
}
