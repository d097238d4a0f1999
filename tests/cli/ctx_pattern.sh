# ctx_pattern.sh: ctx.pattern, the patterns driver telling decide which of
# the policy's patterns found the candidate (core/script/driver_patterns.c):
# a chain and an expression pattern each name their own groups; other
# drivers leave it 0.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json

cat >"$T/which.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "which", driver = "patterns",
  patterns = { "silu(g) * u", "add -> rms_norm" },
  decide = function(self, group, ctx)
    return true, ("pattern %d: %s"):format(ctx.pattern, group.key)
  end }
LUA
expect_ok "the expression pattern (first in the list) names its group" \
    '^  fuse +\[gate_silu, swiglu\] +pattern 1: silu\+mul$' \
    "$FUSEENG" run $M --policy "$T/which.lua" --explain
expect_ok "the chain pattern (second) names its group" \
    '^  fuse +\[attn_residual, post_attention_layernorm\] +pattern 2: add\+rms_norm$' \
    "$FUSEENG" run $M --policy "$T/which.lua" --explain

cat >"$T/greedy.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "greedy_pattern", driver = "greedy",
  decide = function(self, group, ctx)
    if ctx.pattern ~= 0 then error("ctx.pattern is " .. tostring(ctx.pattern)) end
    return false, "checked"
  end }
LUA
expect_ok "other drivers leave ctx.pattern 0" '^kernels ' "$FUSEENG" run $M --policy "$T/greedy.lua"

finish
