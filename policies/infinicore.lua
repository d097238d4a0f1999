-- infinicore.lua: InfiniCore's whole FusionHeuristics.should_fuse and the
-- dispatch's fallback_on_error, from seed 000 (000_e62ba87cba59958c.txt,
-- "判断流程（共两阶段）" and "调度器完整执行路径").
--
-- Stage 1 is policies/static_rules.lua, stage 2 policies/profile_lookup.lua,
-- put together with fe.chain: a rule that fails ends the decision at once
-- ("任一不满足则立即返回 False"), and only a group that passes every rule is
-- looked up in the profile. To let the chain go on, stage 1's "passed"
-- becomes no opinion here; its "no" is final.
-- fallback_on_error = "unfused": the seed's dispatch falls back to the
-- per-op path when fusing fails (fallback_on_error=True); a decide that
-- raises (a bad profile_fallback, say) runs the model unfused with a warning
-- instead of stopping. Differences: the seed falls back for the one subgraph
-- whose kernel failed to compile; the engine drops every fusion of the run
-- (compile failures have no analogue: the engine's legality check keeps
-- groups no kernel takes out of the plan).
local fe = require "fuseeng"
local static_rules = require "policies.static_rules"
local profile_lookup = require "policies.profile_lookup"

local stage1 = fe.with(static_rules, {})
stage1.decide = function(self, group, ctx)
  local verdict, why = static_rules.decide(self, group, ctx)
  if verdict then return nil, why end
  return verdict, why
end

local should_fuse = fe.chain { stage1, profile_lookup }
should_fuse.name = "infinicore"
should_fuse.description = "InfiniCore should_fuse: static rules, then the profile; errors fall back to unfused"
should_fuse.source = "seed 000, InfiniCore should_fuse (both stages) and dispatch fallback_on_error"
should_fuse.fallback_on_error = "unfused"
return should_fuse
