-- benchmark_fusion.lua: Inductor's benchmark_fusion / speedup_by_fusion
-- (seed 003, "Deep Dive into speedup_by_fusion": every candidate pair is
-- timed fused and unfused, and fused only when faster) with seed 001's
-- fusion_speedup_threshold (section "配置", 1.1: the fused choice must be
-- 10% faster) and its "benchmark all choices" step for kernel choices.
--
-- Differences: the timings come from fuseeng's CPU kernels (ctx:bench), not
-- a GPU; there is no register-spilling veto (the seed's author argues the
-- measurement should decide, and on a CPU there is nothing to veto); a
-- candidate that cannot be measured (the run's bench budget is spent, or
-- an op in it has no CPU kernel) is not fused; and for a final group holding a matmul or conv2d both matmul
-- choices are timed and the faster one kept (`choices = false` skips it).
local fe = require "fuseeng"

return fe.policy {
  name = "benchmark_fusion",
  description = "fuse a candidate when it measures >= threshold x faster on the CPU kernels",
  source = "seed 003, Inductor benchmark_fusion; seed 001, 1.1x threshold",
  driver = "greedy",
  params = { threshold = 1.1, choices = true },
  decide = function(self, group, ctx)
    local m, why = ctx:bench(group)
    if not m then return false, "not measured: " .. why end
    local fuse = m.separate >= m.fused * self.params.threshold
    return fuse, ("measured %.2fx (separate %.3f ms, fused %.3f ms, %s)%s")
                 :format(m.speedup, m.separate, m.fused, m.kernel,
                         fuse and "" or (" below %.2fx"):format(self.params.threshold))
  end,
  kernel = function(self, group, ctx)
    if not self.params.choices then return nil end
    local anchored = false
    for _, n in ipairs(group.nodes) do
      if n.op == "matmul" or n.op == "conv2d" then anchored = true end
    end
    if not anchored then return nil end
    local best, best_ms
    for _, choice in ipairs(fe.kernel_choices) do
      local k = choice.name
      if choice.gemm then
        local m = ctx:bench(group, { kernel = k })
        if m and m.kernel == k and (not best_ms or m.fused < best_ms) then
          best, best_ms = k, m.fused
        end
      end
    end
    return best
  end,
}
