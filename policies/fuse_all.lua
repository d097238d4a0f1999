-- fuse_all.lua: the other baseline: every fusion the engine's legality allows,
-- found by the greedy driver, Inductor's fuse_nodes loop from seed 003
-- (003_1ebe7ff3cf0b46d9.txt, "fuse_nodes 融合流程"), with its default score
-- (bytes the pair shares, i.e. memory saved) and no decide hook: every legal
-- candidate fuses, as Inductor does with benchmark_fusion off and no backend
-- limits. Differences: no Inductor backend gates beyond the engine's kernel
-- classes.
local fe = require "fuseeng"

return fe.policy {
  name = "fuse_all",
  description = "baseline: every legal fusion (greedy, Inductor's loop, no veto)",
  source = "seed 003, Inductor fuse_nodes without a veto",
  driver = "greedy",
  params = fe.driver_params("greedy"),   -- window and max_rounds, at the driver's defaults
}
