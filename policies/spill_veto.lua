-- spill_veto.lua: Inductor's benchmark_fusion with its register-spill veto
-- (seed 003, 003_1ebe7ff3cf0b46d9.txt, "speedup_by_fusion" 4.2 "Register
-- Spilling Causes Premature Rejection": "cannot fuse ... register spilling
-- of the fused kernel"). Candidates, gates and order are inductor_greedy's
-- (lua/fuseeng/inductor.lua); each candidate that passes can_fuse is
-- rejected outright when the simulator's register estimate of the fused
-- kernel exceeds the machine's registers, and otherwise fused when it
-- beats its two parts apart. spill_tolerant.lua is the article's proposal.
-- Differences: the benchmark is the GCU simulator, not a GPU run, and the
-- register estimate is its (pessimistic) sum of live values over members,
-- not ptxas's count; with --param measure=true and `run --device cuda` it is
-- the card: candidates are timed by ctx:bench and vetoed on the spill bytes
-- NVRTC reports for the fused kernel, as Inductor does. The article's
-- workload is examples/models/hub_conflict.json.
local fe = require "fuseeng"
local inductor = require "fuseeng.inductor"

return fe.policy {
  name = "spill_veto",
  source = "seed 003, Inductor benchmark_fusion with its register-spill veto",
  description = "Inductor benchmark_fusion: reject any fusion whose registers spill, else fuse when faster",
  driver = "greedy",
  memo = true,   -- answers depend on a candidate's structure only; reasons name the parts as {part1}, {part2}
  solo_ops = inductor.EXTERN_OPS,   -- extern kernels: nothing fuses into or out of them
  -- window and max_rounds at the driver's defaults; measure = true times
  -- candidates with ctx:bench on the run's device instead of the simulator
  params = fe.driver_params("greedy", { measure = false }),
  score = inductor.score_hook,
  decide = function(self, group, ctx)
    return inductor.decide(group, ctx, "veto", self.params.measure)
  end,
}
