-- optimal.lua: the optimal plan under the cost model. Seed 004
-- (004_fe041724c06cc446.txt, "2.3 实现 GCU 融合分析器": compute_fusion_benefit,
-- launches and L2 / L3 traffic, which the GCU simulator prices) judges one
-- fusion at a time and merges greedily, as seed 003's fuse_nodes does; here
-- the same cost is minimised over whole plans, as Korch (Hu et al., ASPLOS
-- '24, "Optimal Kernel Orchestration for Tensor Programs with Korch") casts
-- fusion as binary linear programming over candidate kernels.
-- Differences from Korch: no recomputation (every node in exactly one group,
-- the engine's legality rules), candidates priced by the simulator of the
-- machine at hand rather than measured, cycles between groups cut lazily,
-- and graphs too large to solve whole are solved in windows of the
-- topological order, each exactly, and stitched. Mechanism is ctx:optimal
-- (docs/policy-guide.md, "The optimal plan"); the choices are here: the
-- group size (lowered when a window has more candidates than max_candidates),
-- the rounds of growing, the windows, the time per solve, and on small
-- windows groups of nodes that share nothing (a launch saved, as seed 002's
-- CollectInputs pulls such nodes in).
local fe = require "fuseeng"

-- One window solved, with the largest group size whose candidates fit.
local function solve(self, ctx, nodes)
  local p = self.params
  local k = p.max_group
  while true do
    local r, why = ctx:optimal {
      nodes = nodes, max_group = k, grow = p.grow, time_limit = p.time_limit,
      max_candidates = p.max_candidates, horizontal = #nodes <= p.horizontal,
    }
    if r then return r end
    if k <= p.min_group then error(why, 0) end
    ctx:log(("%s; trying groups of up to %d nodes"):format(why, k - 2))
    k = math.max(k - 2, p.min_group)
  end
end

return fe.policy {
  name = "optimal",
  description = "the optimal plan under the cost model (exact cover by MILP; windows on large graphs)",
  source = "seed 004's cost model minimised over whole plans (Korch, ASPLOS '24)",
  driver = "plan",
  params = {
    max_group = 12,          -- most nodes in an enumerated candidate group
    min_group = 4,           -- the least it is lowered to
    max_candidates = 100000, -- more in a window lowers the group size by 2
    grow = 8,                -- rounds of growing: unions of chosen groups that pay
    horizontal = 16,         -- windows of up to this many nodes: groups need not be connected
    whole = 512,             -- graphs of up to this many nodes are solved whole
    window = 64,             -- else windows of this many nodes
    time_limit = 10,         -- seconds per solve, then the best found and its gap
  },
  plan = function(self, graph, ctx)
    local p, n = self.params, #graph
    if p.window < 1 or p.whole < 1 or p.min_group < 1 or p.min_group > p.max_group then
      error("params: window and whole must be >= 1 and 1 <= min_group <= max_group")
    end
    local groups, size = {}, n <= p.whole and n or p.window
    for first = 1, n, size do
      local nodes = {}
      for i = first, math.min(first + size - 1, n) do nodes[#nodes + 1] = i end
      for _, g in ipairs(solve(self, ctx, nodes).groups) do
        if #g > 1 then groups[#groups + 1] = g end   -- nodes alone run unfused anyway
      end
    end
    return groups
  end,
}
