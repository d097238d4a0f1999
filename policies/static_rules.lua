-- static_rules.lua: InfiniCore's FusionHeuristics.should_fuse, stage 1 (static
-- rules), from seed 000 (000_e62ba87cba59958c.txt, "阶段一：静态规则过滤").
--
-- The five rules in the seed's order, each failure naming its rule:
--   rule0 enable_fusion switch, rule1 min_nodes (2), rule2 max_graph_size (10),
--   rule3 min_tensor_elements (1024) for every input tensor, rule4 supported ops
--   (V1: silu gelu relu sigmoid add mul sub div rms_norm layer_norm).
-- Differences: InfiniCore applies the rules to subgraphs its scheduler hands
-- it; here the patterns driver proposes them, from the seed's LLM patterns
-- (SwiGLU, Add+RMSNorm, GELU) and, so that rules 2 and 4 have something to
-- judge, any longer chain of elementwise/broadcast/reduction ops. Stage 2
-- (profile lookup) is policies/profile_lookup.lua.
local fe = require "fuseeng"

return fe.policy {
  name = "static_rules",
  description = "InfiniCore stage 1: enable switch, 2..10 nodes, inputs >= 1024 elements, V1 op set",
  source = "seed 000, InfiniCore should_fuse stage 1 (static rules)",
  driver = "patterns",
  memo = true,   -- answers depend on a group's structure only (docs/policy-guide.md)
  patterns = {
    "silu -> mul",                                  -- SwiGLU: silu(gate) * up
    "add -> rms_norm",                              -- Add+RMSNorm
    "gelu",                                         -- GELU (a single op: rule1 says no)
    "(@elemwise|@broadcast|@reduction)+",           -- anything else along a chain
  },
  params = {
    enable_fusion = true,
    min_nodes = 2,
    max_graph_size = 10,
    min_tensor_elements = 1024,
    supported = fe.set { "silu", "gelu", "relu", "sigmoid", "add", "mul", "sub", "div",
                         "rms_norm", "layer_norm" },
  },
  decide = function(self, group, ctx)
    local p = self.params
    if not p.enable_fusion then
      return false, "rule0: fusion is disabled (enable_fusion = false)"
    end
    if #group < p.min_nodes then
      return false, ("rule1: %d node%s < min_nodes %d"):format(#group, #group == 1 and "" or "s", p.min_nodes)
    end
    if #group > p.max_graph_size then
      return false, ("rule2: %d nodes > max_graph_size %d"):format(#group, p.max_graph_size)
    end
    for i, t in ipairs(group.inputs) do
      if t.numel < p.min_tensor_elements then
        return false, ("rule3: input %d (%s[%s]) has %d elements < min_tensor_elements %d")
                      :format(i, t.dtype, table.concat(t.shape, ","), t.numel, p.min_tensor_elements)
      end
    end
    for i = 1, #group do
      local op = group[i].op
      if not p.supported[op] then
        return false, ("rule4: op '%s' is not in the supported set"):format(op)
      end
    end
    return true, "static rules passed (rules 0-4)"
  end,
}
