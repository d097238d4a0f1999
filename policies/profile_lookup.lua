-- profile_lookup.lua: InfiniCore's FusionHeuristics.should_fuse, stage 2
-- (profile-driven decision), from seed 000 (000_e62ba87cba59958c.txt,
-- "阶段二：基于 Profile 数据的性能决策").
--
-- separate_time = the sum of the members' single times; fused_time by the
-- exact key (SHA-256 of the group's canonical text) then the compat key
-- ("silu+mul"); fuse when separate_time > fused_time * (1 + margin); missing
-- data follows profile_fallback ("fuse", the seed's default, or "no_fuse").
-- Differences: single times are looked up by the op's exact key (op, dtypes,
-- shapes) before its name, and a run without --profile falls back the same
-- way as missing data. InfiniCore runs this after the static rules: combine
-- them with `--policy static_rules --policy profile_lookup --combine all`.
local fe = require "fuseeng"

local function fallback(self, why)
  local fuse = self.params.profile_fallback == "fuse"
  return fuse, ("%s; profile_fallback = %s"):format(why, self.params.profile_fallback)
end

return fe.policy {
  name = "profile_lookup",
  description = "InfiniCore stage 2: fuse if separate > fused x (1 + margin) in a measured profile",
  source = "seed 000, InfiniCore should_fuse stage 2 (profile)",
  driver = "patterns",
  memo = true,   -- answers depend on a group's structure only (docs/policy-guide.md)
  patterns = { "silu -> mul", "add -> rms_norm", "(@elemwise|@broadcast|@reduction)+" },
  params = { margin = 0.0, profile_fallback = "fuse" },
  decide = function(self, group, ctx)
    local p = self.params
    if p.profile_fallback ~= "fuse" and p.profile_fallback ~= "no_fuse" then
      error("param profile_fallback must be \"fuse\" or \"no_fuse\", not \"" .. p.profile_fallback .. "\"")
    end
    if not ctx.profile then return fallback(self, "no profile loaded (run with --profile FILE)") end
    local t = ctx.profile:lookup(group)
    if not t.separate then
      return fallback(self, ("no single time for op '%s'"):format(t.missing))
    end
    if not t.fused then
      return fallback(self, ("no fused time for %s (exact key %s)"):format(group.key, group.exact_key))
    end
    local fuse = t.separate > t.fused * (1 + p.margin)
    return fuse, ("separate %.4f ms %s fused %.4f ms x (1 + %.2f) (%s key)")
                 :format(t.separate, fuse and ">" or "<=", t.fused, p.margin, t.key)
  end,
}
