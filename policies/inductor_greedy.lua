-- inductor_greedy.lua: Inductor's fuse_nodes (seed 003, 003_1ebe7ff3cf0b46d9.txt,
-- "Deep Dive into fuse_nodes": candidates through shared buffers within +-64,
-- can_fuse's gates, score_fusion, greedy in score order, up to 10 rounds)
-- and, with benchmark = true, "speedup_by_fusion": each pair is fused only
-- when the fused kernel beats its two parts apart, logged like Inductor's
-- "can fuse (benchmark): fusing ... cause 2.462x speedup" line.
-- The gates and the score are lua/fuseeng/inductor.lua's; the loop is the
-- greedy driver's.
-- As Inductor's can_fuse: a reduction's epilogue is matched by size (the
-- rows' numel), so keepdim=False reductions take theirs too; horizontal
-- pairs must read a tensor both read with the same indexing (equal
-- MemoryDeps), not merely share its name (lua/fuseeng/inductor.lua).
-- Differences: Inductor schedules loop nests after lowering, we fuse graph
-- ops: views are free index math (a view group launches nothing), a small
-- pointwise producer is inlined into one reader only (Inductor recomputes
-- it in each); matmul, conv2d and sdpa stay extern with nothing fused into
-- them (no max-autotune templates); pools and opaque custom ops run alone
-- (the engine's legality), where Inductor generates pooling code it can
-- fuse a prologue into. Benchmarks run on the simulator (measure = true:
-- the CPU kernels through ctx:bench, where nothing spills, so nothing is
-- vetoed). Against Inductor 2.11 on an H200 (docs/policy-guide.md, "Against
-- Inductor"): llama2-7b-2l-sdpa 13 kernels (+18 extern) vs 12 (+18): the
-- converter's opaque aten.diff runs alone with its 1-element sub; gpt2 13
-- (+13) vs 13 (+13); resnet50 70 (+54) vs 68 (+54). Both hold the same 18
-- channels_last copies of the input and the >1x1 conv weights: with
-- layout_optimization (Inductor's config.layout_optimization, default on)
-- the copies hook asks for them (fuseeng.inductor.layout_copies). Of the
-- other 52, two are kernels Inductor folds: avg_pool2d alone (Inductor: a
-- mean reduction taking the last block as prologue) and the fc bias add
-- (Inductor: addmm's bias).
local fe = require "fuseeng"
local inductor = require "fuseeng.inductor"

return fe.policy {
  name = "inductor_greedy",
  source = "seed 003, Inductor fuse_nodes (can_fuse, score_fusion, benchmark_fusion)",
  description = "Inductor fuse_nodes: can_fuse gates, score_fusion order, optional benchmark mode",
  driver = "greedy",
  memo = true,   -- answers depend on a candidate's structure only; reasons name the parts as {part1}, {part2}
  solo_ops = inductor.EXTERN_OPS,   -- extern kernels: nothing fuses into or out of them
  params = fe.driver_params("greedy", { benchmark = false, measure = false,   -- window, max_rounds
                                        layout_optimization = true }),
  score = inductor.score_hook,
  decide = function(self, group, ctx)
    return inductor.decide(group, ctx, self.params.benchmark and "veto", self.params.measure)
  end,
  copies = function(self, graph, ctx)
    if self.params.layout_optimization then return inductor.layout_copies(graph) end
  end,
}
