# sim.sh: the simulator from the command line: `run` reports, --machine,
# --trace, `fuseeng sim` on saved plans, and bad machines and plans.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json

expect_ok "run reports plan vs unfused" '^speedup [0-9.]+x' "$FUSEENG" run "$M" --policy fuse_all
expect_ok "run --verbose adds a line per group" 'tiled x[0-9]+' "$FUSEENG" run "$M" --policy fuse_all --verbose
expect_ok "--machine gcu_big" 'machine gcu_big: 50.0 MiB L2' "$FUSEENG" run "$M" --policy fuse_all --machine gcu_big
check "run --plan-out --trace" "$FUSEENG" run "$M" --policy fuse_all --plan-out "$T/plan.json" --trace "$T/trace.json"
if grep -q '"traceEvents"' "$T/trace.json" && grep -q '"ph": *"X"' "$T/trace.json" &&
   grep -q '"ph": *"C"' "$T/trace.json"; then
    ok "the trace has kernel slices and counters"
else
    not_ok "the trace has kernel slices and counters" "$(head -c 300 "$T/trace.json")"
fi
if grep -q '"simulated"' "$T/plan.json" && grep -q '"sim_us"' "$T/plan.json"; then
    ok "the plan file's summary has the simulated figures"
else
    not_ok "the plan file's summary has the simulated figures"
fi
expect_ok "sim reads the plan back" '^kernels +40 +12 ' "$FUSEENG" sim "$M" --plan "$T/plan.json"
expect_ok "sim --json" '"versus_unfused"' "$FUSEENG" sim "$M" --plan "$T/plan.json" --json
expect_ok "sim on another machine" 'machine gcu_big' "$FUSEENG" sim "$M" --plan "$T/plan.json" --machine gcu_big
expect_ok "sim with --dim rescales the plan" 'L3 traffic' "$FUSEENG" sim "$M" --plan "$T/plan.json" --dim S=512

expect_fail "sim without --plan" 2 "missing --plan" "$FUSEENG" sim "$M"
expect_fail "sim of a plan for another model" 2 "names node .* which model 'gpt2-block' does not have" \
    "$FUSEENG" sim examples/models/gpt2_block.json --plan "$T/plan.json"
sed 's/"nodes": \["out"\]/"nodes": []/' "$T/plan.json" >"$T/empty.json"
printf '{"format": "fuseeng.plan/1", "groups": [{"nodes": ["attn_residual", "out"]}]}' >"$T/illegal.json"
expect_fail "sim of an incomplete plan" 2 "is in no group; a plan covers every node" \
    "$FUSEENG" sim "$M" --plan "$T/illegal.json"
nonconvex_plan() {  # a plan with one non-convex group and every other node alone
    printf '{"format": "fuseeng.plan/1", "groups": [{"nodes": ["attn_residual", "out"]}'
    "$FUSEENG" run "$M" --policy no_fusion --json | grep -o '"nodes": \["[^"]*"\]' |
        grep -v '"attn_residual"\|"out"' | sed 's/^/, {/; s/$/}/'
    printf ']}\n'
}
nonconvex_plan >"$T/nonconvex.json"
expect_fail "sim of a non-convex plan" 2 "not convex" "$FUSEENG" sim "$M" --plan "$T/nonconvex.json"
printf '{"format": "fuseeng.plan/1", "groups": 3' >"$T/broken.json"
expect_fail "sim of malformed JSON" 2 "broken\.json:1:[0-9]+:" "$FUSEENG" sim "$M" --plan "$T/broken.json"

cat >"$T/typo.lua" <<'LUA'
return { name = "typo", l2_bytes = 1024, memory_bytes = 4096, l2_bandwidth = 1e12,
  l3_bandwidth = 1e11, local_bandwith = 2e11 }
LUA
expect_fail "a machine file with a typo" 2 "typo\.lua: .*local_bandwith.*local_bandwidth" \
    "$FUSEENG" run "$M" --policy fuse_all --machine "$T/typo.lua"
printf 'while true do end\n' >"$T/spin.lua"
expect_fail "a machine file that loops" 2 "spin\.lua:1: instruction budget" \
    "$FUSEENG" run "$M" --policy fuse_all --machine "$T/spin.lua"
expect_fail "an unknown machine" 2 "nosuch" "$FUSEENG" run "$M" --policy fuse_all --machine nosuch
finish
