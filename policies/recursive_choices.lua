-- recursive_choices.lua: seed 001 (001_922905087a4c719d.txt, "方案 B: Custom Op
-- MultiTemplateBuffer + 递归 Fusion"): each out-fusable, collective and custom
-- op keeps its kernel choices and defers the pick (4.1, 4.4
-- finalize_multi_template_buffers); fused choices are grown from them
-- recursively, one epilogue, prologue or adjacent-subgraph node per level up
-- to max_fusion_depth = 3 (4.3 FusionOptimizer, 5.1 recursive_fusion_optimization,
-- ctx:choices here); every choice is timed and logged (4.4 "Benchmark all
-- choices"), and a fused choice is kept only at fusion_speedup_threshold =
-- 1.1 or more (4.1 config). On seed 001's all_reduce + relu + scale (+ add)
-- the whole epilogue joins the collective (5.3).
--
-- Differences: choices cover different nodes, so they are compared by what
-- they save against the same nodes run one kernel each (the seed takes the
-- fastest choice outright); the threshold is the seed's ratio on those
-- nodes, unfused / fused. Times come from the simulator, or with
-- `--param measure=true` from the CPU kernels (ctx:bench, every applicable
-- kernel choice, as benchmark_fusion.lua times GEMM choices); the simulator
-- prices a group the same whatever its kernel choice, so without measure
-- the kernel choice is left to the engine (auto). Anchors are finalized in
-- topological order, and a choice holding a node an earlier anchor's kept
-- choice holds is skipped, as the seed finalizes one buffer at a time. An
-- opaque custom op (attrs.pattern "opaque") still runs alone: the engine's
-- legality only fuses custom ops that declare a fusable pattern, the
-- seed's subgraph choices with boundary info.
local fe = require "fuseeng"

local KINDS = { epilogue = true, prologue = true, cross = true }
local NONE = {}   -- the timings of a skipped choice

-- The params, checked once per run: a bad value stops the run (exit 2).
local function check_params(p)
  local d = p.max_fusion_depth
  if math.type(d) ~= "integer" or d < 0 or d > 64 then
    error(("param max_fusion_depth must be an integer from 0 to 64, not %s"):format(d))
  end
  local t = p.fusion_speedup_threshold
  if t ~= t or t <= 0 or t == math.huge then
    error(("param fusion_speedup_threshold must be a number > 0 (1.1: 10%% faster), not %s"):format(t))
  end
  local m = p.max_choices
  if math.type(m) ~= "integer" or m < 1 or m > 100000 then
    error(("param max_choices must be an integer from 1 to 100000, not %s"):format(m))
  end
  local kinds = {}
  for k in pairs(p.fusion_types) do
    if not KINDS[k] then
      error(("param fusion_types: '%s' is not epilogue, prologue or cross"):format(k))
    end
    kinds[#kinds + 1] = k
  end
  return kinds
end

-- The seed's MultiTemplateBuffer nodes: out-fusable ops (matmul, conv2d,
-- custom ops declaring out_fusable), collectives and custom ops.
local function is_anchor(n)
  return n.pattern == "out_fusable" or n.op == "all_reduce" or n.op == "custom"
end

-- The kernel choices worth timing for a group on the CPU: the GEMM ones
-- for a group around a matmul or conv2d, else the engine's pick.
local function kernels_for(group)
  if group.kinds.out_fusable == 0 then return { "auto" } end
  local ks = {}
  for _, c in ipairs(fe.kernel_choices) do
    if c.gemm then ks[#ks + 1] = c.name end
  end
  return ks
end

-- Every way to run a choice, priced: {unfused, fused (seconds), kernel,
-- split} or {kernel, why} when it cannot be priced. The simulator tiles
-- the group as it would by default (a fused epilogue streams through the
-- L2 tile by tile) and the plan runs it so; it prices a group the same
-- whatever its kernel choice. Measuring times every applicable choice.
local function price(self, ctx, group)
  if not self.params.measure then
    local s = ctx:simulate(group)
    return { { unfused = ctx:simulate_unfused(group).time, fused = s.time, split = s.split } }
  end
  local out = {}
  for _, k in ipairs(kernels_for(group)) do
    local m, why = ctx:bench(group, { kernel = k })
    if not m then
      out[#out + 1] = { kernel = k, why = "not measured: " .. why }
    elseif k ~= "auto" and m.kernel ~= k then
      out[#out + 1] = { kernel = k, why = "not measured: this kernel choice cannot run it" }
    elseif #group > 1 and not m.fused_kernel then
      -- Op by op, the "fused" time is the same ops again: no fused kernel.
      out[#out + 1] = { kernel = m.kernel, why = ("runs op by op on this CPU (%.3f ms): no fused kernel"):format(m.fused) }
    else
      out[#out + 1] = { unfused = m.separate * 1e-3, fused = m.fused * 1e-3, kernel = m.kernel }
    end
  end
  return out
end

-- Log one priced way to run choice c (the j-th around anchor a).
-- Timings by the group's structure (ctx:signature): a model's repeated
-- blocks ask about the same choices once per block; one answer serves all.
local function timings(self, ctx, group)
  local known = ctx.state.timings
  if not known then
    known = {}
    ctx.state.timings = known
  end
  local sig = ctx:signature(group)
  local t = known[sig]
  if not t then
    t = price(self, ctx, group)
    known[sig] = t
  end
  return t
end

-- Decimal text of the small integers a log line holds, made once each (a
-- concatenation would format the number again for every choice).
local DEC = setmetatable({}, { __index = function(t, k)
  local s = tostring(k)
  t[k] = s
  return s
end })

local function log_timing(ctx, a, j, c, t)   -- a: the anchor's name
  -- The times' text, made once per timing (timings are shared by structure).
  local tail = t.text
  if not tail then
    if t.unfused then
      local speedup = t.unfused / t.fused
      tail = (": unfused %s, fused %s%s, %.3fx (%.17g)"):format(fe.fmt_time(t.unfused),
             fe.fmt_time(t.fused), t.split and t.split > 1 and (" in %d tiles"):format(t.split) or "",
             speedup, speedup)
    else
      tail = " " .. t.why
    end
    if t.kernel then tail = " " .. t.kernel .. tail end
    t.text = tail
  end
  -- One concatenation, not string.format: this runs for every choice
  -- (group.names: the members' names in one string, made in C).
  ctx:log("choice: " .. a .. " #" .. DEC[j] .. " " .. c.kind .. " depth " .. DEC[c.depth] .. " ["
          .. c.group.names .. "]" .. tail)
end

-- The group a kept choice becomes in the plan, marking its nodes taken.
local function kept_group(p, a, best, nchoices, truncated, taken)
  local g = { kernel = best.t.kernel, split = best.t.split }
  for _, n in ipairs(best.c.group.nodes) do
    g[#g + 1] = n
    taken[n.index] = true
  end
  g.reason = ("%s depth %d: %.3fx >= %.2f around %s (unfused %s, fused %s; %d choices%s)")
             :format(best.c.kind, best.c.depth, best.t.unfused / best.t.fused,
                     p.fusion_speedup_threshold, a.name, fe.fmt_time(best.t.unfused), fe.fmt_time(best.t.fused),
                     nchoices, truncated and ", truncated at max_choices" or "")
  return g
end

return fe.policy {
  name = "recursive_choices",
  source = "seed 001, custom-op MultiTemplateBuffer + recursive fusion",
  description = "seed 001: kernel + recursively fused choices per out-fusable/collective/custom op, kept at >= 1.1x",
  driver = "plan",
  params = { max_fusion_depth = 3, fusion_speedup_threshold = 1.1, max_choices = 64,
             fusion_types = fe.set { "epilogue", "prologue", "cross" }, measure = false },
  plan = function(self, graph, ctx)
    local p = self.params
    local opts = { depth = p.max_fusion_depth, max = p.max_choices, kinds = check_params(p) }
    local taken, groups = {}, {}
    for i = 1, #graph do
      local a = graph[i]
      if is_anchor(a) and not taken[a.index] then
        local list = ctx:choices(a, opts)
        local best, alone, skipped, aname = nil, nil, 0, a.name
        for j, c in ipairs(list) do
          local free = true
          local cg = c.group
          for k = 1, #cg do free = free and not taken[cg[k].index] end
          if not free then skipped = skipped + 1 end
          for _, t in ipairs(free and timings(self, ctx, c.group) or NONE) do
            log_timing(ctx, aname, j, c, t)
            if not t.unfused then -- not priced
            elseif c.depth == 0 then
              if not alone or t.fused < alone.fused then alone = t end
            elseif t.unfused / t.fused >= p.fusion_speedup_threshold
                   and (not best or t.unfused - t.fused > best.t.unfused - best.t.fused) then
              best = { c = c, t = t }
            end
          end
        end
        if skipped > 0 then
          ctx:log(("choice: %s: %d %s skipped: %s nodes of earlier groups"):format(a.name, skipped,
                  skipped == 1 and "choice" or "choices", skipped == 1 and "it holds" or "they hold"))
        end
        if best then
          groups[#groups + 1] = kept_group(p, a, best, #list, list.truncated, taken)
        else
          ctx:log(("choice: %s: no fused choice reaches %.2fx (%d %s illegal); %s runs alone")
                  :format(a.name, p.fusion_speedup_threshold, list.illegal,
                          list.illegal == 1 and "set" or "sets", a.name))
          if alone and alone.kernel then   -- measured: keep its fastest kernel choice
            groups[#groups + 1] = { a, kernel = alone.kernel, reason = "its fastest kernel choice, alone" }
            taken[a.index] = true
          end
        end
      end
    end
    return groups
  end,
}
