-- gcu_afe.lua: seed 004's AFE (004_fe041724c06cc446.txt, "2.2 修改 Scheduler
-- 融合逻辑", _can_fuse_gcu, and "2.3" compute_fusion_memory_peak and
-- compute_fusion_benefit): two groups fuse when the fused group's memory peak
-- fits the L2 and the benefit, their time apart - the fused time, is positive
-- (more than margin_us); a group over the L2 is left for TLF (gcu_tlf.lua).
-- Differences: times come from the simulator (ctx:simulate), not the seed's
-- per-op-name constants (3 ms per matmul...), so they follow bytes, FLOPs and
-- the machine file. "Apart" is the two groups the driver merges (group.parts),
-- each priced as its own kernel (ctx:simulate_parts), as the seed prices self
-- and other. AFE does not tile: a group runs whole (the policy's default
-- tiling, "none").
local fe = require "fuseeng"

return fe.policy {
  name = "gcu_afe",
  description = "seed 004 AFE: fuse when the working set fits L2 and fusing saves time",
  source = "seed 004, GCU AFE (_can_fuse_gcu)",
  driver = "greedy",
  memo = true,   -- answers depend on a group's structure only (docs/policy-guide.md)
  params = { margin_us = 0 },
  decide = function(self, group, ctx)
    local l2, fused = ctx.machine.l2_bytes, ctx:simulate(group)
    local ws = ("working set %s %s L2 %s"):format(fe.fmt_bytes(fused.working_set),
                                                 fused.working_set > l2 and ">" or "<=", fe.fmt_bytes(l2))
    if fused.working_set > l2 then return false, "waiting for TLF: " .. ws end
    local apart = ctx:simulate_parts(group)
    local benefit, margin = apart.time - fused.time, self.params.margin_us * 1e-6
    local nums = ("%s; apart %s (%d kernels), fused %s, benefit %s"):format(ws, fe.fmt_time(apart.time),
                 apart.parts, fe.fmt_time(fused.time), fe.fmt_time(benefit))
    if benefit <= margin then
      return false, ("no benefit: %s <= margin %s"):format(nums, fe.fmt_time(margin))
    end
    return true, "fits L2: " .. nums
  end,
}
