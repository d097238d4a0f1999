-- spill_tolerant.lua: the article's proposal for Inductor's benchmark_fusion
-- (seed 003, 003_1ebe7ff3cf0b46d9.txt, "speedup_by_fusion" section 6: "let
-- the benchmark run even when spilling is detected, and let the actual
-- timing data determine whether the fusion is worthwhile"). As
-- spill_veto.lua, but a fused kernel that spills is still timed, its spill
-- traffic (local memory, machine field local_bandwidth) included, and
-- fused when it beats its two parts apart.
-- Differences: the benchmark is the GCU simulator, not a GPU run (with
-- --param measure=true and `run --device cuda`, ctx:bench on the card); the
-- article measured hub_conflict's fusions on an RTX 5090, we price them.
local fe = require "fuseeng"
local inductor = require "fuseeng.inductor"

return fe.policy {
  name = "spill_tolerant",
  source = "seed 003, benchmark_fusion timing spilling kernels (the article's proposal)",
  description = "benchmark_fusion without the spill veto: fuse when faster, spill cost included",
  driver = "greedy",
  memo = true,   -- answers depend on a candidate's structure only; reasons name the parts as {part1}, {part2}
  solo_ops = inductor.EXTERN_OPS,   -- extern kernels: nothing fuses into or out of them
  -- window and max_rounds at the driver's defaults; measure = true times
  -- candidates with ctx:bench on the run's device instead of the simulator
  params = fe.driver_params("greedy", { measure = false }),
  score = inductor.score_hook,
  decide = function(self, group, ctx)
    return inductor.decide(group, ctx, "price", self.params.measure)
  end,
}
