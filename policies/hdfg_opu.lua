-- hdfg_opu.lua: seed 002 (002_8240b3741dea70d1.txt, TVM-OPU's fuse_op_hw pass,
-- "Partition function细节分析"): the OPU's hardware data flow (HDFG::Create's
-- LinkFromTo edges, in their order) walked by the dataflow driver, which is
-- GraphMatchFuser::Partition: nodes in post-DFS order extend the current group
-- while FindMatch finds their op further along the flow, and open a new group
-- from the flow's root when it does not. The flow has one pad -> ipa (conv2d)
-- path, so a group holds at most one input pad and one conv. Producers whose
-- ops no step accepts (constants, reshapes: the seed's CollectInputs) join the
-- group of the op they feed; weights are tensors here, read by their
-- consumer's kernel, so they are in its group by construction.
--
-- Differences: `upsample` (and the three edges into it) is left out, since our
-- op registry has no upsampling op and nothing leaves that step. The engine's
-- legality still applies: a conv2d or pool kernel takes no data-movement
-- prologue, so where the OPU runs pad -> conv2d -> ... -> pool_pad -> pool
-- as one group, the walk is cut before conv2d and before the pool and restarts
-- at the root (the cuts are in the decision log as restarts of the flow).
-- The seed fuses every group it finds; so does this policy (decide says yes
-- and names the weights the group's kernel reads).
local fe = require "fuseeng"

return fe.policy {
  name = "hdfg_opu",
  description = "seed 002: the OPU hardware data flow (TVM-OPU fuse_op_hw HDFG) on the dataflow driver",
  source = "seed 002, TVM-OPU fuse_op_hw (HDFG, GraphMatchFuser)",
  driver = "dataflow",
  dataflow = [[
    root = concat
    concat -> add_pre -> mul_pre -> pad -> ipa -> mul -> add
    add -> {compare, pool_pad, res_add}
    pool_pad -> pool
    compare -> {pool, res_add}
    pool -> {compare, res_add}
    res_add -> {compare, pool}
    add_pre = add; mul_pre = mul; ipa = conv2d; pool_pad = pad; pool = max_pool2d
    compare = maximum | relu; res_add = add
  ]],
  decide = function(self, group, ctx)
    local weights = {}
    for _, t in ipairs(group.inputs) do
      if t.kind == "weight" then weights[#weights + 1] = t.name end
    end
    return true, ("%d ops along the OPU flow (%s); weights read: %s"):format(#group, group.key,
      #weights > 0 and table.concat(weights, ", ") or "none")
  end,
}
