-- memory_aware.lua: seed 004's cost model without its L2 gate
-- (004_fe041724c06cc446.txt, "2.3 实现 GCU 融合分析器", compute_fusion_benefit):
-- two groups fuse when their time apart - the fused time > margin_us, whatever
-- the working set. Compare gcu_afe.lua (L2 gate) and gcu_tlf.lua (gate, tiles).
-- Differences: the seed asks this only after _can_fuse_gcu's memory-peak check;
-- here the simulator prices the fused group at its default split (tiled when it
-- outgrows the L2, its intermediates spilled to L3 when no tile fits), so an
-- oversized group fuses whenever it still saves time. Times come from the
-- simulator, not the seed's per-op constants; the two groups apart are
-- group.parts (ctx:simulate_parts). Its plans tile as it priced them: every
-- group at the simulator's default split (tiling = "auto").
local fe = require "fuseeng"

return fe.policy {
  name = "memory_aware",
  description = "seed 004's benefit model alone: fuse when it saves more than margin_us",
  source = "seed 004, compute_fusion_benefit",
  driver = "greedy",
  memo = true,   -- answers depend on a group's structure only (docs/policy-guide.md)
  tiling = "auto",
  params = { margin_us = 0 },
  decide = function(self, group, ctx)
    local f, apart = ctx:simulate(group), ctx:simulate_parts(group)
    local benefit, margin = apart.time - f.time, self.params.margin_us * 1e-6
    local nums = ("L3 %s saved; apart %s (%d kernels), fused %s%s, benefit %s")
                 :format(fe.fmt_bytes(apart.l3_bytes - f.l3_bytes), fe.fmt_time(apart.time), apart.parts,
                         fe.fmt_time(f.time),
                         f.fits and (f.split > 1 and (" tiled x%d"):format(f.split) or "")
                           or (" over L2 (tile %s)"):format(fe.fmt_bytes(f.l2_peak)),
                         fe.fmt_time(benefit))
    if benefit <= margin then
      return false, ("no benefit: %s <= margin %s"):format(nums, fe.fmt_time(margin))
    end
    return true, "saves time: " .. nums
  end,
}
