-- gcu_tlf.lua: seed 004's AFE + TLF (004_fe041724c06cc446.txt, "2.2" _can_fuse_gcu
-- and "2.4 TLF 支持：插入切分逻辑", _apply_tlf_if_needed): a group that fits the
-- L2 fuses as in gcu_afe.lua; one over it is kept and run in split tiles,
-- split = ceil(memory_peak / L2), when the tiled kernel beats the two groups apart.
-- The split hook hands that split to the plan; param `split` > 0 forces it for every tiled group.
-- Differences: the seed tiles every group over the L2; here tiling is priced
-- like any fusion (tile loop and operands every tile re-reads included), and a
-- group whose untiled operands (weights, a matmul's B) fill the L2 is refused,
-- since no split makes its tile fit. Times come from the simulator; the two
-- groups apart are group.parts (ctx:simulate_parts, each part at this
-- policy's split), as in gcu_afe.lua.
local fe = require "fuseeng"

-- The split this policy runs nodes at, whether that is tiling, and (when it
-- is not) the price of the whole group. The seed's split leaves a tile over the
-- L2 when operands are read whole by every tile; then the simulator's default
-- (the smallest split that fits) is larger and wins. The simulator would not tile
-- a group without intermediates at all; the seed does, and so do we.
local function split_of(self, ctx, nodes)
  local l2, split = ctx.machine.l2_bytes, self.params.split
  if split < 0 or split > fe.max_split then
    error(("param split must be 0 (the seed's split) to %d, not %d"):format(fe.max_split, split))
  end
  local whole = ctx:simulate(nodes, { split = 1 })
  if #nodes < 2 or whole.working_set <= l2 then return 1, false, whole end
  if split == 0 then split = math.max((whole.working_set + l2 - 1) // l2, whole.split_default) end
  -- An L2 far smaller than the group needs more tiles than a plan holds:
  -- no split makes it fit, which decide reports as "no tile fits".
  return math.min(split, fe.max_split), true
end

-- A group as this policy runs it, and whether it is tiled.
local function price(self, ctx, nodes)
  local split, tiled, whole = split_of(self, ctx, nodes)
  return whole or ctx:simulate(nodes, { split = split }), tiled
end

return fe.policy {
  name = "gcu_tlf",
  description = "seed 004 AFE + TLF: fuse what fits L2, tile what does not when tiling pays",
  source = "seed 004, GCU AFE + TLF (_apply_tlf_if_needed)",
  driver = "greedy",
  tiling = "auto",   -- seed 004 tiles; groups the split hook leaves get the simulator's split
  memo = true,       -- answers depend on a group's structure only (docs/policy-guide.md)
  params = { margin_us = 0, split = 0 },
  decide = function(self, group, ctx)
    local s, tiled = price(self, ctx, group)
    local l2 = fe.fmt_bytes(ctx.machine.l2_bytes)
    local ws = ("working set %s %s L2 %s"):format(fe.fmt_bytes(s.working_set), tiled and ">" or "<=", l2)
    if not s.fits then
      local why = s.split >= fe.max_split and " (more tiles than a plan allows)"
                  or self.params.split == 0 and " (untiled operands fill the L2)" or ""
      return false, ("no tile fits: %s, tile %s > L2 at x%d%s")
                    :format(ws, fe.fmt_bytes(s.l2_peak), s.split, why)
    end
    local kind = tiled and ("tiled x%d"):format(s.split) or "fits L2"
    if tiled then ws = ("%s, tile %s"):format(ws, fe.fmt_bytes(s.l2_peak)) end
    local apart = ctx:simulate_parts(group, { split = function(p) return (split_of(self, ctx, p)) end })
    local benefit, margin = apart.time - s.time, self.params.margin_us * 1e-6
    local nums = ("%s; apart %s (%d kernels), fused %s, benefit %s")
                 :format(ws, fe.fmt_time(apart.time), apart.parts, fe.fmt_time(s.time), fe.fmt_time(benefit))
    if benefit <= margin then
      return false, ("no benefit %s: %s <= margin %s"):format(kind, nums, fe.fmt_time(margin))
    end
    return true, ("%s: %s"):format(kind, nums)
  end,
  split = function(self, group, ctx)
    local s, tiled = price(self, ctx, group)
    return tiled and s.split or nil
  end,
}
