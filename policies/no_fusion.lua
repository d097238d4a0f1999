-- no_fusion.lua: the unfused baseline: every node is its own kernel.
-- Every A/B comparison needs it; it traces back to no seed (each seed's
-- "before" column: seed 004's baseline, seed 003's fusion off).
local fe = require "fuseeng"

return fe.policy {
  name = "no_fusion",
  description = "baseline: every node runs as its own kernel",
  source = "the unfused baseline",
  driver = "plan",
  plan = function(self, graph, ctx)
    return {}   -- nodes in no group run unfused
  end,
}
