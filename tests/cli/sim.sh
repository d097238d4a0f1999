# sim.sh: the simulator from the command line: `run` reports, --machine,
# --trace, plan files (DESIGN's summary keys, per-group figures with
# --verbose), `fuseeng sim` on saved plans (the plan's dims, machine and
# model, and overriding them), output files that cannot be written,
# ctx:simulate's arguments, and bad machines and plans.
. tests/lib.sh
M=examples/models/llama2_7b_layer.json

expect_ok "run reports plan vs unfused" '^speedup [0-9.]+x' "$FUSEENG" run "$M" --policy fuse_all
expect_ok "run --verbose adds a line per group" 'tiled x[0-9]+' "$FUSEENG" run "$M" --policy gcu_tlf --verbose
expect_ok "--machine gcu_big" 'machine gcu_big: 50.0 MiB L2' "$FUSEENG" run "$M" --policy fuse_all --machine gcu_big
check "run --plan-out --trace" "$FUSEENG" run "$M" --policy fuse_all --plan-out "$T/plan.json" --trace "$T/trace.json"
if grep -q '"traceEvents"' "$T/trace.json" && grep -q '"ph": *"X"' "$T/trace.json" &&
   grep -q '"ph": *"C"' "$T/trace.json"; then
    ok "the trace has kernel slices and counters"
else
    not_ok "the trace has kernel slices and counters" "$(head -c 300 "$T/trace.json")"
fi
# DESIGN.md's plan file: the simulated figures sit directly in "summary"
# (members of the summary object are indented by two spaces).
for key in kernels extern views sim_us l3_bytes l2_peak mem_peak spill_bytes; do
    if grep -Eq "^  \"$key\": [0-9.]+,?\$" "$T/plan.json"; then
        ok "the plan file's summary has $key"
    else
        not_ok "the plan file's summary has $key" "$(sed -n '/"summary"/,$p' "$T/plan.json")"
    fi
done
expect_ok "sim reads the plan back" '^kernels +19 +7 ' "$FUSEENG" sim "$M" --plan "$T/plan.json"
expect_ok "sim --json" '"versus_unfused"' "$FUSEENG" sim "$M" --plan "$T/plan.json" --json
expect_ok "sim on another machine" 'machine gcu_big' "$FUSEENG" sim "$M" --plan "$T/plan.json" --machine gcu_big
expect_ok "sim with --dim rescales the plan" 'L3 traffic' "$FUSEENG" sim "$M" --plan "$T/plan.json" --dim S=512

expect_fail "sim without --plan" 2 "missing --plan" "$FUSEENG" sim "$M"
expect_fail "sim of a plan for another model" 2 \
    "plan\.json: the plan is for model 'llama2-7b-layer', not 'gpt2-block' \(examples/models/gpt2_block\.json\); give --ignore-model-name" \
    "$FUSEENG" sim examples/models/gpt2_block.json --plan "$T/plan.json"
expect_fail "... forced, its nodes still must be the model's" 2 "names node .* which model 'gpt2-block' does not have" \
    "$FUSEENG" sim examples/models/gpt2_block.json --plan "$T/plan.json" --ignore-model-name
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
# A plan is simulated as it was made: its dims and its machine, unless
# --dim / --machine override them, which the report says.
check "plan at S=8192 on gcu_big" "$FUSEENG" run "$M" --policy gcu_tlf --dim S=8192 --machine gcu_big \
    --plan-out "$T/p8k.json"
expect_ok "sim takes the plan's dims" '^dims +B=1, S=8192, as the plan records$' \
    "$FUSEENG" sim "$M" --plan "$T/p8k.json"
expect_ok "... and its machine" '^machine +gcu_big, as the plan records$' "$FUSEENG" sim "$M" --plan "$T/p8k.json"
run_time=$("$FUSEENG" run "$M" --policy gcu_tlf --dim S=8192 --machine gcu_big | grep '^time ')
sim_time=$("$FUSEENG" sim "$M" --plan "$T/p8k.json" | grep '^time ')
if [ -n "$run_time" ] && [ "$run_time" = "$sim_time" ]; then
    ok "... so sim prints the times run printed ($sim_time)"
else
    not_ok "... so sim prints the times run printed" "run: $run_time" "sim: $sim_time"
fi
expect_ok "--dim overrides the plan's dim, and says so" '^dims +B=1 \(plan\), S=2048 \(--dim overrides the plan.s 8192\)$' \
    "$FUSEENG" sim "$M" --plan "$T/p8k.json" --dim S=2048
expect_ok "--machine overrides the plan's machine, and says so" '^machine +gcu \(--machine overrides the plan.s gcu_big\)$' \
    "$FUSEENG" sim "$M" --plan "$T/p8k.json" --machine gcu
over_time=$("$FUSEENG" sim "$M" --plan "$T/p8k.json" --dim S=2048 | grep '^time ')
if [ -n "$over_time" ] && [ "$over_time" != "$sim_time" ]; then
    ok "... and the figures change with them"
else
    not_ok "... and the figures change with them" "$over_time"
fi
expect_ok "sim --json says where each value came from" '"dims_from": \{"B": "plan", "S": "option"\}' \
    "$FUSEENG" sim "$M" --plan "$T/p8k.json" --dim S=2048 --json
expect_ok "... and what the plan recorded" '"plan_machine": "gcu_big"' \
    "$FUSEENG" sim "$M" --plan "$T/p8k.json" --machine gcu --json
sed 's/"name": "llama2-7b-layer"/"name": "llama2-renamed"/' "$M" >"$T/renamed.json"
expect_fail "a plan for a model of another name is refused" 2 \
    "p8k\.json: the plan is for model 'llama2-7b-layer', not 'llama2-renamed'" \
    "$FUSEENG" sim "$T/renamed.json" --plan "$T/p8k.json"
expect_ok "... unless --ignore-model-name, which the report notes" \
    "^note: the plan was made for model 'llama2-7b-layer' \(--ignore-model-name\)$" \
    "$FUSEENG" sim "$T/renamed.json" --plan "$T/p8k.json" --ignore-model-name
sed 's/"machine": "gcu_big"/"machine": "mygcu"/' "$T/p8k.json" >"$T/pmachine.json"
expect_fail "a plan made on an unshipped machine needs --machine" 2 \
    "pmachine\.json: \"machine\": no machine named 'mygcu' in .* \(known machines: gcu, gcu_big, h200, host\)( \(did you mean 'gcu'\?\))?; if the plan was made on a machine file, give it with --machine FILE" \
    "$FUSEENG" sim "$M" --plan "$T/pmachine.json"
expect_ok "... which then wins" '^machine +gcu_big \(--machine overrides the plan.s mygcu\)$' \
    "$FUSEENG" sim "$M" --plan "$T/pmachine.json" --machine gcu_big
sed 's/"machine": "gcu_big"/"machine": "..\/..\/etc\/x"/' "$T/p8k.json" >"$T/ppath.json"
expect_fail "a plan's machine is a name, never a path" 2 "ppath\.json: \"machine\": '\.\./\.\./etc/x' is not a machine name" \
    "$FUSEENG" sim "$M" --plan "$T/ppath.json"
sed 's/"S": 8192/"Q": 8192/' "$T/p8k.json" >"$T/pdim.json"
expect_fail "a plan's dim the model lacks" 2 "pdim\.json: \"dims\": the plan sets Q=8192 but model 'llama2-7b-layer' has no dim 'Q' \(its dims: B, S\)" \
    "$FUSEENG" sim "$M" --plan "$T/pdim.json"
sed 's/"S": 8192/"S": "big"/' "$T/p8k.json" >"$T/pdim2.json"
expect_fail "a plan's dim that is not a positive integer" 2 "pdim2\.json: \"dims\": \"S\" must be a positive integer" \
    "$FUSEENG" sim "$M" --plan "$T/pdim2.json"
expect_fail "a missing plan file" 2 "nonexist\.json: cannot open the plan: No such file or directory$" \
    "$FUSEENG" sim "$M" --plan "$T/nonexist.json"

# --verbose puts each group's simulated figures in the plan JSON.
"$FUSEENG" run "$M" --policy gcu_tlf --verbose --json >"$T/v.json"
# Every group has figures: the generated kernels, the extern calls and the
# view groups (which launch nothing) together.
kernels=$(sed -n 's/^  "kernels": \([0-9]*\),$/\1/p' "$T/v.json")
ext=$(sed -n 's/^  "extern": \([0-9]*\),$/\1/p' "$T/v.json")
views=$(sed -n 's/^  "views": \([0-9]*\),$/\1/p' "$T/v.json")
[ -n "$kernels" ] && [ -n "$ext" ] && [ -n "$views" ] && kernels=$((kernels + ext + views))
nsim=$(grep -c '"sim": {"start_us": [0-9.]*, "mem_bytes": [0-9]*, "nodes": [0-9]*, "split": [0-9]*, .*"time_us": [0-9.]*, .*"l3_bytes": [0-9]*, .*"working_set": [0-9]*, "l2_peak": [0-9]*, .*"regs": [0-9]*, .*"spill_bytes": [0-9]*' "$T/v.json")
if [ -n "$kernels" ] && [ "$nsim" = "$kernels" ]; then
    ok "run --verbose --json: every group has its figures ($nsim of $kernels)"
else
    not_ok "run --verbose --json: every group has its figures" "$nsim of $kernels"
fi
check "run --verbose --plan-out" "$FUSEENG" run "$M" --policy gcu_tlf --verbose --plan-out "$T/pv.json"
if [ "$(grep -c '"sim": {"start_us"' "$T/pv.json")" = "$kernels" ]; then
    ok "... and so does the plan file"
else
    not_ok "... and so does the plan file"
fi
expect_ok "sim reads a plan file with per-group figures" '^kernels +19 +7 ' "$FUSEENG" sim "$M" --plan "$T/pv.json"
if "$FUSEENG" run "$M" --policy gcu_tlf --json | grep -q '"sim": {'; then
    not_ok "without --verbose the groups stay short"
else
    ok "without --verbose the groups stay short"
fi

# The summary's L2 peak is what the L2 holds: at most its 16 MiB, as the
# trace's counter plots it.
expect_ok "the L2 occupancy peak is at most the L2" '^L2 occupancy peak +16\.0 MiB +16\.0 MiB ' \
    "$FUSEENG" run "$M" --policy gcu_tlf

# Output files: exit 2 with the system's reason, and never a partial file.
for opt in --trace --plan-out --dot; do
    expect_fail "run $opt into a missing directory" 2 "/nonexistent/out: cannot write the .*: No such file or directory$" \
        "$FUSEENG" run "$M" --policy gcu_tlf $opt /nonexistent/out
done
expect_fail "sim --trace into a missing directory" 2 "/nonexistent/out: cannot write the trace: No such file or directory$" \
    "$FUSEENG" sim "$M" --plan "$T/plan.json" --trace /nonexistent/out
for opt in --trace --plan-out; do
    echo old >"$T/out.json"
    # A file size limit makes the write fail part way (SIGXFSZ ignored: EFBIG).
    expect_fail "run $opt that fails part way" 2 "out\.json: cannot write the .*: File too large$" \
        sh -c 'trap "" XFSZ; ulimit -f 8; exec "$@"' sh "$FUSEENG" run "$M" --policy gcu_tlf $opt "$T/out.json"
    if [ "$(cat "$T/out.json")" = old ] && ! ls "$T" | grep -q '\.tmp'; then
        ok "... leaves the old file as it was and no temporary file"
    else
        not_ok "... leaves the old file as it was and no temporary file" "$(ls "$T")"
    fi
done

# ctx:simulate's arguments.
cat >"$T/simargs.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy {
  name = "simargs", driver = "plan", params = { case = "" },
  plan = function(self, graph, ctx)
    local pair = { "gate_silu", "swiglu" }
    if self.params.case == "string" then ctx:simulate(pair, "x")
    elseif self.params.case == "typo" then ctx:simulate(pair, { splt = 4 })
    elseif self.params.case == "big" then ctx:simulate(pair, { split = 16777217 })
    elseif self.params.case == "unfused" then ctx:simulate_unfused(pair, { split = 2 })
    elseif self.params.case == "planbig" then return { { "gate_silu", "swiglu", split = 16777217 } }
    end
    ctx:simulate(pair, { split = 16777216 })
    return {}
  end,
}
LUA
expect_ok "ctx:simulate takes a split up to 2^24" '^kernels' "$FUSEENG" run "$M" --policy "$T/simargs.lua"
expect_fail "ctx:simulate with options that are not a table" 2 "simargs\.lua:6: simulate: options must be a table such as \{split = 4\}, got 'x'" \
    "$FUSEENG" run "$M" --policy "$T/simargs.lua" --param case=string
expect_fail "ctx:simulate with an unknown option" 2 "simargs\.lua:7: simulate: unknown option 'splt' \(the only option is split\)" \
    "$FUSEENG" run "$M" --policy "$T/simargs.lua" --param case=typo
expect_fail "ctx:simulate with a split above 2^24 names the limit" 2 "simargs\.lua:8: simulate: split must be an integer from 1 to 16777216 \(2\^24\)" \
    "$FUSEENG" run "$M" --policy "$T/simargs.lua" --param case=big
expect_fail "ctx:simulate_unfused takes no options" 2 "simargs\.lua:9: simulate_unfused takes no options" \
    "$FUSEENG" run "$M" --policy "$T/simargs.lua" --param case=unfused
expect_ok "a plan() group with a split above 2^24 is rejected, naming the limit" \
    'rejected .*split must be an integer from 1 to 16777216 \(2\^24\)' \
    "$FUSEENG" run "$M" --policy "$T/simargs.lua" --param case=planbig --explain
sed '0,/"split": [0-9]*/s//"split": 16777217/' "$T/plan.json" >"$T/hugesplit.json"
expect_fail "a plan file's split above 2^24 names the limit" 2 "hugesplit\.json: group [0-9]+: \"split\" must be an integer from 1 to 16777216 \(2\^24\)" \
    "$FUSEENG" sim "$M" --plan "$T/hugesplit.json"

# Machine values that would overflow a time, and text with control bytes.
machine() {  # machine FILE 'extra fields': a valid machine plus the extras
    printf 'return { %s name = "m", l2_bytes = 16777216, memory_bytes = 34359738368,
      l2_bandwidth = 1e12, l3_bandwidth = 1e11, local_bandwidth = 2e11, launch_us = 10,
      tile_us = 1, matrix_flops = { f32 = 3e13 }, vector_flops = { f32 = 8e12 },
      registers = 255, reserved_registers = 24, elements_per_thread = 8,
      link_bandwidth = 5e10, link_latency_us = 5, overlap = false }\n' "$2" >"$1"
}
machine "$T/good.lua" ""
expect_ok "a machine file written here is fine" '^machine m: 16\.0 MiB L2' "$FUSEENG" run "$M" --policy gcu_tlf --machine "$T/good.lua"
machine "$T/tile.lua" "" && sed -i 's/tile_us = 1,/tile_us = 1e308,/' "$T/tile.lua"
expect_fail "a tile_us of 1e308" 2 "tile\.lua: field 'tile_us' is 1e\+308, outside the range 0 to 1e6 us" \
    "$FUSEENG" run "$M" --policy gcu_tlf --machine "$T/tile.lua"
machine "$T/bw.lua" "" && sed -i 's/l3_bandwidth = 1e11,/l3_bandwidth = 1e-300,/' "$T/bw.lua"
expect_fail "a bandwidth of 1e-300" 2 "bw\.lua: field 'l3_bandwidth' is 1e-300, outside the range 1e3 to 1e16 bytes/s" \
    "$FUSEENG" run "$M" --policy gcu_tlf --machine "$T/bw.lua"
machine "$T/ctl.lua" 'description = "red \27[31m",'
expect_fail "a description with an escape sequence" 2 "ctl\.lua: field 'description' holds a control character \(byte 5 is 0x1b\)" \
    "$FUSEENG" run "$M" --policy gcu_tlf --machine "$T/ctl.lua"

# On a machine with executor = "cuda" a generated kernel's registers are the
# values its thread holds (arrays of K), not one element's live values: at
# M=8192, N=1024 hub_conflict's rows kernels hold 16 columns of each array a
# thread, and the largest group spill_tolerant keeps spills past h200.lua's
# 255 registers, as NVRTC's did on the card (docs/simulator.md), so
# spill_veto vetoes it in simulation; h200.lua without its executor counts
# live values and sees no spill at all.
HUB="examples/models/hub_conflict.json --dim M=8192 --dim N=1024"
sed '/^ *executor = /d; /^ *saturating_threads = /d' lua/machines/h200.lua >"$T/h200_plain.lua"
if "$FUSEENG" ab $HUB --policy spill_veto --policy spill_tolerant --machine h200 --json >"$T/hold.json" 2>"$T/err" &&
    "$FUSEENG" run $HUB --policy spill_tolerant --machine "$T/h200_plain.lua" --json >"$T/plain.json" 2>>"$T/err" &&
    /usr/bin/python3 - "$T/hold.json" "$T/plain.json" 2>>"$T/err" <<'PY'
import json, sys
ab, plain = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cells = {c["policy"]: c for c in ab["rows"][0]["policies"]}
assert cells["spill_veto"]["spill_bytes"] == 0, cells["spill_veto"]
assert cells["spill_tolerant"]["spill_bytes"] > 0, cells["spill_tolerant"]
assert cells["spill_veto"]["kernels"] != cells["spill_tolerant"]["kernels"]
assert plain["summary"]["spill_bytes"] == 0, plain["summary"]
PY
then
    ok "executor cuda: a rows kernel's registers are its arrays of K values, so spill_veto and spill_tolerant part"
else
    not_ok "executor cuda: a rows kernel's registers are its arrays of K values, so spill_veto and spill_tolerant part" \
        "$(cat "$T/err")"
fi
finish
