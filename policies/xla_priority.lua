-- xla_priority.lua: XLA's GPU priority fusion (openxla/xla, beyond the seeds:
-- xla/service/gpu/transforms/priority_fusion.cc, PriorityFusionQueue and
-- CanFuse; its tests are priority_fusion_test.cc). Producers wait in a queue
-- ordered by the time fusing them into all their consumers saves, the best is
-- fused first, and the neighbours of each fusion are re-priced (the priority
-- driver, core/script/driver_priority.c). decide holds XLA's CanFuse rules that
-- our legality check does not: matmul/conv/collectives are not fused (XLA
-- leaves them to cuBLAS/cuDNN/NCCL), no reduce into reduce, no epilogue that
-- turns a reduction into a loop fusion, concatenate is not fused into its
-- consumers, and a producer whose value is a model output stays (XLA's root
-- tuple is not fusible).
-- Differences: our plans are partitions, so a producer with several consumers
-- is not duplicated into each as XLA does; it joins them all in one group (one
-- kernel with several outputs), and only when that group is legal. The
-- priority still prices the duplication as XLA does (price = "duplicate":
-- t(P) + sum t(Ci) - sum t(P+Ci)), so a producer whose work would be
-- recomputed at a loss is not fused, and a cheap one (a broadcast) is. Times
-- come from our simulator, not GpuPerformanceModel; there are no bitcasts
-- (free in XLA, fused first) or constants (fused last) in our graphs: a
-- reshape is priced as the copy it is here. "Fusion too large" is max_nodes.
local fe = require "fuseeng"

-- The extent one output element reduces over: XLA calls a reduce
-- significant from 16 elements on (smaller ones are emitted as loops).
local function reduced_extent(node)
  local x = node.inputs[1]
  if node.op == "softmax" or node.op == "log_softmax" then
    local axis = node.attrs.axis or -1
    if axis < 0 then axis = axis + x.rank end
    return x.shape[axis + 1]
  elseif node.op == "rms_norm" or node.op == "layer_norm" then
    return x.shape[x.rank]
  end
  return x.numel // math.max(node.output.numel, 1)
end

-- decide runs for every popped producer, so these are plain loops that
-- allocate nothing and read as few node fields as they can.

-- The producer: the first op XLA would not fuse, its first significant
-- reduce, whether it holds a concat or a model output.
local function survey_producer(part, min_extent)
  local unfusible, reduce, concat, output = nil, nil, false, false
  for i = 1, #part do
    local n = part[i]
    local pat = n.pattern
    if pat == "out_fusable" or pat == "opaque" then
      unfusible = unfusible or n.op
    elseif pat == "reduction" then
      if not reduce and reduced_extent(n) >= min_extent then reduce = n end
    elseif pat == "injective" and n.op == "concat" then
      concat = true
    end
    if n.is_output then output = true end
  end
  return unfusible, reduce, concat, output
end

-- A consumer: the first op XLA would not fuse, and, when the producer holds
-- a reduce (with_reduce), its first significant reduce and its largest node
-- output (elements).
local function survey_consumer(part, min_extent, with_reduce)
  local unfusible, reduce, largest = nil, nil, 0
  for i = 1, #part do
    local n = part[i]
    local pat = n.pattern
    if pat == "out_fusable" or pat == "opaque" then
      unfusible = unfusible or n.op
    end
    if with_reduce then
      if pat == "reduction" and not reduce and reduced_extent(n) >= min_extent then reduce = n end
      local e = n.numel
      if e > largest then largest = e end
    end
  end
  return unfusible, reduce, largest
end

return fe.policy {
  name = "xla_priority",
  description = "XLA's GPU priority fusion: the producer that saves most fuses into all its consumers first",
  source = "XLA GPU priority fusion (priority_fusion.cc)",
  driver = "priority",
  tiling = "auto",
  memo = true,   -- answers depend on a group's structure only (docs/policy-guide.md)
  params = { price = "duplicate", max_nodes = 64, max_consumers = 8, min_priority = 0,
             min_reduce = 16, fuse_gemm = false },
  decide = function(self, group, ctx)
    local P = self.params
    local parts = group.parts
    local unfusible, reduce, concat, output = survey_producer(parts[1], P.min_reduce)
    if unfusible and not P.fuse_gemm then
      return false, ("the producer is not fusible (%s)"):format(unfusible)
    end
    if output then return false, "its value is a model output (XLA's root tuple is not fusible)" end
    if concat then return false, "concatenate is not fused into its consumers" end
    for i = 2, #parts do
      local c_unfusible, c_reduce, c_largest = survey_consumer(parts[i], P.min_reduce, reduce ~= nil)
      if c_unfusible and not P.fuse_gemm then
        return false, ("the consumer is not fusible (%s)"):format(c_unfusible)
      end
      if reduce and c_reduce then
        return false, ("both the producer and the consumer contain a reduce (%s, %s)")
                      :format(reduce.op, c_reduce.op)
      end
      if reduce and c_largest > reduce.numel then
        return false, ("fusion into the output of a reduce (%s) would make it a loop fusion")
                      :format(reduce.op)
      end
    end
    local n = #parts - 1
    return true, ("into %d consumer%s: saves %s"):format(n, n == 1 and "" or "s", fe.fmt_time(ctx.priority))
  end,
}
