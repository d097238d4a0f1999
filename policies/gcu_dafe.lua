-- gcu_dafe.lua: seed 004's DAFE (004_fe041724c06cc446.txt, "1.3 融合策略层级":
-- "DAFE | 动态 batch size | 多版本 kernel | 运行时 dispatch", and "8.1 DAFE 完整
-- 实现 ... 动态 shape 的运行时调度"): a kernel version per shape bucket, picked
-- at run time. The versions come from the engine: `fuseeng run --dim B=1,8,32`
-- plans once per bucket and writes the dispatch table (bucket -> plan) that
-- `fuseeng sim` and `run --plan` pick from by the model's B. This policy is
-- what decides each bucket: AFE + TLF (gcu_tlf.lua) at the bucket's shapes,
-- which are the largest the bucket serves, so a tile that fits there fits
-- every value the bucket serves.
-- Differences: the seed leaves DAFE unimplemented ("当前只有 AFE 和 TLF"), so
-- how buckets are chosen is ours: the caller lists them, and bucket v serves
-- the values above the bucket before it, up to v. Every reason names the
-- bucket (param `dim`, the bucketed dim; B, the seed's batch, by default);
-- a model without that dim has one shape and gets gcu_tlf's plan.
local fe = require "fuseeng"
local tlf = require "policies.gcu_tlf"

local dafe = fe.with(tlf, {})
dafe.name = "gcu_dafe"
dafe.description = "seed 004 DAFE: per shape bucket (--dim B=1,8,32), AFE + TLF at the bucket's shapes"
dafe.source = "seed 004, GCU DAFE (per-shape kernel versions, run-time dispatch)"
dafe.params.dim = "B"

-- "B=8: " for the run's value of the bucketed dim; "" for a model without
-- that dim, which has one shape and is planned as gcu_tlf plans it.
local function bucket(self, ctx)
  local v = ctx.graph.dims[self.params.dim]
  return v and ("%s=%d: "):format(self.params.dim, v) or ""
end

dafe.decide = function(self, group, ctx)
  local verdict, why = tlf.decide(self, group, ctx)
  return verdict, bucket(self, ctx) .. why
end

return dafe
