-- benchmark_fusion.lua: Inductor's benchmark_fusion / speedup_by_fusion
-- (seed 003, "Deep Dive into speedup_by_fusion": every candidate pair is
-- timed fused and unfused, and fused only when faster) with seed 001's
-- fusion_speedup_threshold (section "配置", 1.1: the fused choice must be
-- 10% faster) and its "benchmark all choices" step for kernel choices.
--
-- Differences: the timings come from fuseeng's CPU kernels (ctx:bench), not
-- a GPU; there is no register-spilling veto (the seed's author argues the
-- measurement should decide, and on a CPU there is nothing to veto); a
-- candidate that cannot be measured (an op in it has no CPU kernel) is not
-- fused; and for a final group holding a matmul or conv2d both matmul
-- choices are timed and the faster one kept (`choices = false` skips it).
-- Each distinct group and each distinct op alone is measured once (ctx:bench's
-- kernel cache, seed 000's: by exact key) and the run's --bench-budget is
-- shared among the candidates left; a candidate met after the budget is spent
-- is decided by the simulator on the run's machine (`--machine host` is the
-- CPU's), with the same threshold, as Inductor falls back to its heuristics
-- when it does not benchmark. The reason says which: measured, from the
-- kernel cache, or the simulator's.
local fe = require "fuseeng"

-- Where a measurement came from, for the reason.
local function source(m, n)
  if m.cached then return "; from the kernel cache" end
  if (m.members_cached or 0) > 0 then
    return ("; %d of %d ops alone from the kernel cache"):format(m.members_cached, n)
  end
  return ""
end

return fe.policy {
  name = "benchmark_fusion",
  description = "fuse a candidate when it measures >= threshold x faster on the CPU kernels",
  source = "seed 003, Inductor benchmark_fusion; seed 001, 1.1x threshold",
  driver = "greedy",
  memo = true,   -- answers depend on a group's structure only (docs/policy-guide.md)
  params = { threshold = 1.1, choices = true },
  decide = function(self, group, ctx)
    local t = self.params.threshold
    local m, why, kind = ctx:bench(group)
    if not m and kind == "budget" then
      local fused, apart = ctx:simulate(group), ctx:simulate_parts(group)
      local fuse = apart.time >= fused.time * t
      return fuse, ("not measured (budget spent); simulator on %s: apart %s, fused %s%s")
                   :format(ctx.machine.name, fe.fmt_time(apart.time), fe.fmt_time(fused.time),
                           fuse and "" or (" below %.2fx"):format(t))
    end
    if not m then return false, "not measured: " .. why end
    local fuse = m.separate >= m.fused * t
    return fuse, ("measured %.2fx (separate %.3f ms, fused %.3f ms, %s)%s%s")
                 :format(m.speedup, m.separate, m.fused, m.kernel,
                         fuse and "" or (" below %.2fx"):format(t), source(m, #group))
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
