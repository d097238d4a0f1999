-- llm_patterns.lua: InfiniCore's predefined LLM fusion patterns and their
-- sliding-window matching, from seed 000 (000_e62ba87cba59958c.txt, "预定义的
-- LLM 融合模式" and "模式匹配机制"): SwiGLU (silu(gate) * up), Add+RMSNorm
-- (add(x, residual) -> rms_norm) and GELU, found by the patterns driver
-- (find_fusable_subgraphs); every group found fuses.
--
-- Differences: InfiniCore compares op-type sequences, so it finds these
-- patterns only where the graph has the fused ops (silu, rms_norm, gelu).
-- Real exports decompose them, so each pattern is also written in the forms
-- PyTorch code produces, as expression patterns (commuted operands match):
--   RMSNorm   w * cast?(x * rsqrt(mean(x^2) + eps)), x^2 as pow(x, 2) or x * x,
--             x possibly a cast of the input, with the residual add when the
--             input is one (HF LLaMA's LlamaRMSNorm);
--   SwiGLU    silu(g) * u, and g * sigmoid(g) * u;
--   GELU      0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) (GPT-2's
--             gelu_new) and 0.5 * x * (1 + erf(x / sqrt 2)), in both common
--             groupings. A lone gelu op is one node: nothing to fuse, as in
--             the seed ("单算子（测试用）").
-- The group's reason names the pattern that matched it.
local fe = require "fuseeng"

local SQRT_2_OVER_PI = "0.7978845608028654"
local rms = {}
for _, square in ipairs { "pow(x, 2)", "x * x" } do
  local norm = "w * cast?(%s * rsqrt(mean(" .. square .. ") + #eps))"
  rms[#rms + 1] = norm:format("(x := cast?(a + r))")   -- Add+RMSNorm
  rms[#rms + 1] = norm:format("(x := cast?(h))")       -- RMSNorm alone
end

local gelu_inner = {
  "tanh(" .. SQRT_2_OVER_PI .. " * (x + 0.044715 * pow(x, 3)))",
  "tanh(" .. SQRT_2_OVER_PI .. " * (x + 0.044715 * (x * x * x)))",
  "erf(x / 1.4142135623730951)",
  "erf(x * 0.7071067811865476)",
}

-- name -> pattern sources, in the order the driver is given them.
local PATTERNS = {
  { "Add+RMSNorm", { "rms_norm(a + r, w)", rms[1], rms[3] } },
  { "RMSNorm", { rms[2], rms[4] } },
  { "SwiGLU", { "silu(g) * u", "g * sigmoid(g) * u" } },
  { "GELU", { "gelu" } },
}
local gelu = PATTERNS[4][2]
for _, inner in ipairs(gelu_inner) do
  gelu[#gelu + 1] = "x * 0.5 * (1 + " .. inner .. ")"
  gelu[#gelu + 1] = "x * (1 + " .. inner .. ") * 0.5"
end

local sources, compiled = {}, {}
for _, entry in ipairs(PATTERNS) do
  for _, src in ipairs(entry[2]) do
    sources[#sources + 1] = src
    compiled[#compiled + 1] = { name = entry[1], pattern = fe.pattern(src) }
  end
end

return fe.policy {
  name = "llm_patterns",
  description = "seed 000's LLM patterns (SwiGLU, Add+RMSNorm, GELU), decomposed forms included",
  source = "seed 000, InfiniCore llm_patterns.py and find_fusable_subgraphs",
  driver = "patterns",
  memo = true,   -- answers depend on a group's structure only (docs/policy-guide.md)
  patterns = sources,
  decide = function(self, group, ctx)
    -- ctx.pattern: the index in `patterns` of the one that found the group.
    local c = compiled[ctx.pattern]
    return true, ("%s: %s"):format(c.name, group.key)
  end,
}
