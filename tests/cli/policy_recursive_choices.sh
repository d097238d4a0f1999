# policy_recursive_choices.sh: seed 001's recursive fused choices
# (policies/recursive_choices.lua) and the choice generator it stands on
# (ctx:choices, core/plan/choices.c). On allreduce_epilogue the plan folds
# the whole epilogue into the collective, as the seed's example expects;
# max_fusion_depth bounds the epilogue; a fused choice at exactly the
# threshold is kept and one just below it is not (the threshold is the
# simulator's own ratio, printed exactly); every choice considered is in
# the decision log with its time; custom ops anchor choices (an opaque one
# runs alone); measuring names each kernel choice; bad
# params and bad ctx:choices arguments stop the run with exit 2.
. tests/lib.sh
M=examples/models/allreduce_epilogue.json
P=recursive_choices

for m in examples/models/*.json "$SHARED"/models/*.json; do
    [ -f "$m" ] || continue
    expect_ok "$P plans $(basename "$m")" '^kernels +[0-9]+ -> [0-9]+' "$FUSEENG" run "$m" --policy "$P"
done

# The seed's example: all_reduce + relu + scale + residual add, one kernel.
expect_ok "allreduce_epilogue: the collective takes its whole epilogue" \
    '"nodes": \["all_reduce", "relu", "scale", "out"\], "class": "collective"' \
    "$FUSEENG" run "$M" --policy "$P" --json
expect_ok "... the matmul before it runs alone" '"nodes": \["matmul"\], "class": "single"' \
    "$FUSEENG" run "$M" --policy "$P" --json
expect_ok "... 5 nodes become 1 kernel beside the extern matmul" '^kernels +5 -> 1 \(\+1 extern; 1 fused group holding 4 nodes' \
    "$FUSEENG" run "$M" --policy "$P"
expect_ok "... the reason gives kind, depth, speedup and threshold" \
    '^  fuse +\[all_reduce, relu, scale, out\] +epilogue depth 3: 1\.792x >= 1\.10 around all_reduce \(unfused 4\.610 ms, fused 2\.573 ms; 4 choices\)$' \
    "$FUSEENG" run "$M" --policy "$P" --explain

# Every choice considered is logged with its time: the matmul alone (its
# epilogue would put two collectives/GEMMs in one kernel: no fused choice)
# and the all_reduce alone plus its three epilogue choices.
"$FUSEENG" run "$M" --policy "$P" --explain >"$T/explain" 2>&1
timed=$(grep -Ec '^  note +choice: [a-z_]+ #[0-9]+ [a-z]+ depth [0-9]+ \[[a-z_, ]+\]: unfused [0-9.]+ [mu]s, fused [0-9.]+ [mu]s' "$T/explain")
if [ "$timed" -eq 5 ]; then ok "5 choices considered, each logged with its times"; else
    not_ok "5 choices considered, each logged with its times" "got $timed" "$(cat "$T/explain")"; fi
for c in '#1 anchor depth 0 \[all_reduce\]' '#2 epilogue depth 1 \[all_reduce, relu\]' \
         '#3 epilogue depth 2 \[all_reduce, relu, scale\]' \
         '#4 epilogue depth 3 \[all_reduce, relu, scale, out\]' '#1 anchor depth 0 \[matmul\]'; do
    if grep -Eq "choice: [a-z_]+ $c: unfused" "$T/explain"; then ok "logged: $c"; else
        not_ok "logged: $c" "$(cat "$T/explain")"; fi
done
expect_ok "an anchor without a fused choice says so" \
    '^  note +choice: matmul: no fused choice reaches 1\.10x \(1 set illegal\); matmul runs alone$' \
    "$FUSEENG" run "$M" --policy "$P" --explain

# Depth: a 4-deep epilogue at the default depth 3 fuses 3 of its nodes;
# at depth 4 all four; at depth 1 one; at depth 0 none.
sed -e 's/"outputs": \["out"\]}$/"outputs": ["out"]},\n  {"name": "tail", "op": "neg", "inputs": ["out"], "outputs": ["tail"]}/' \
    -e 's/^ "outputs": \["out"\]$/ "outputs": ["tail"]/' "$M" >"$T/deep.json"
expect_ok "4-deep epilogue, depth 3: three of it fuse" \
    '"nodes": \["all_reduce", "relu", "scale", "out"\], "class": "collective"' \
    "$FUSEENG" run "$T/deep.json" --policy "$P" --json
expect_ok "... depth 4: all four" \
    '"nodes": \["all_reduce", "relu", "scale", "out", "tail"\], "class": "collective"' \
    "$FUSEENG" run "$T/deep.json" --policy "$P" --param max_fusion_depth=4 --json
expect_ok "... depth 1: relu only" '"nodes": \["all_reduce", "relu"\], "class": "collective"' \
    "$FUSEENG" run "$M" --policy "$P" --param max_fusion_depth=1 --json
expect_ok "... depth 0: nothing fuses" '^kernels +5 -> 4 \(\+1 extern; 0 fused groups' \
    "$FUSEENG" run "$M" --policy "$P" --param max_fusion_depth=0
if grep -q 'depth 4' "$T/explain"; then not_ok "no choice deeper than 3 is considered"; else
    ok "no choice deeper than 3 is considered"; fi

# Threshold: the best choice's exact ratio (the simulator's own numbers,
# printed with 17 digits) as the threshold keeps it; a hair above drops it
# and, its shallower choices being slower, leaves all_reduce alone.
ratio=$(sed -n 's/.*#4 epilogue depth 3 .*x (\([0-9.]*\))$/\1/p' "$T/explain")
above=$(awk -v r="$ratio" 'BEGIN { printf "%.17g", r * (1 + 1e-15) }')
expect_ok "threshold = the choice's speedup ($ratio): kept" \
    '"nodes": \["all_reduce", "relu", "scale", "out"\]' \
    "$FUSEENG" run "$M" --policy "$P" --param fusion_speedup_threshold="$ratio" --json
expect_ok "threshold just above it ($above): not kept" '^kernels +5 -> 4 \(\+1 extern; 0 fused groups' \
    "$FUSEENG" run "$M" --policy "$P" --param fusion_speedup_threshold="$above"
ratio2=$(sed -n 's/.*#3 epilogue depth 2 .*x (\([0-9.]*\))$/\1/p' "$T/explain")
expect_ok "threshold = depth 2's speedup: the deeper choice, saving more, still wins" \
    '"nodes": \["all_reduce", "relu", "scale", "out"\]' \
    "$FUSEENG" run "$M" --policy "$P" --param fusion_speedup_threshold="$ratio2" --json

# fusion_types: prologue only leaves the epilogue alone (on the LLaMA
# layer prologue choices exist; no epilogue or cross one is considered).
expect_ok "fusion_types=epilogue: no prologue choice considered" '^decisions' \
    "$FUSEENG" run examples/models/llama2_7b_layer.json --policy "$P" --param fusion_types=epilogue --explain
if grep -Eq 'prologue depth|cross depth' "$T/out"; then not_ok "... none logged" "$(grep -E 'prologue|cross' "$T/out" | head -3)"; else ok "... none logged"; fi

# Custom ops (seed 001's subject): one declaring out_fusable anchors a
# GEMM-like kernel and takes an epilogue that runs through two elementwise
# custom ops; at depth 1 the two custom ops fuse with each other (the
# seed's adjacent subgraphs); an opaque custom op runs alone.
cat >"$T/custom.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "custom-ops",
 "tensors": {
  "x": {"shape": [1024, 1024], "dtype": "f16", "kind": "input"},
  "w": {"shape": [1024, 1024], "dtype": "f16", "kind": "weight"},
  "mm": {"shape": [1024, 1024], "dtype": "f16"},
  "op1": {"shape": [1024, 1024], "dtype": "f16"},
  "op2": {"shape": [1024, 1024], "dtype": "f16"},
  "opq": {"shape": [1024, 1024], "dtype": "f16"}},
 "nodes": [
  {"name": "mm", "op": "custom", "inputs": ["x", "w"], "outputs": ["mm"],
   "attrs": {"pattern": "out_fusable", "flops": 2147483648, "bytes": 4194304}},
  {"name": "act", "op": "gelu", "inputs": ["mm"], "outputs": ["act"]},
  {"name": "op1", "op": "custom", "inputs": ["act"], "outputs": ["op1"],
   "attrs": {"pattern": "elemwise", "flops": 1048576, "bytes": 2097152}},
  {"name": "op2", "op": "custom", "inputs": ["op1"], "outputs": ["op2"],
   "attrs": {"pattern": "elemwise", "flops": 1048576, "bytes": 2097152}},
  {"name": "opq", "op": "custom", "inputs": ["op2"], "outputs": ["opq"],
   "attrs": {"pattern": "opaque", "flops": 1048576, "bytes": 2097152}},
  {"name": "tail", "op": "relu", "inputs": ["opq"], "outputs": ["tail"]}],
 "outputs": ["tail"]}
JSON
expect_ok "custom out_fusable op: its epilogue runs through two custom ops" \
    '"nodes": \["mm", "act", "op1", "op2"\], "class": "gemm"' "$FUSEENG" run "$T/custom.json" --policy "$P" --json
expect_ok "... an opaque custom op runs alone: every fused set is illegal" \
    '^  note +choice: opq: no fused choice reaches 1\.10x \(2 sets illegal\); opq runs alone$' \
    "$FUSEENG" run "$T/custom.json" --policy "$P" --explain
expect_ok "... at depth 1 the two adjacent custom ops fuse" '"nodes": \["op1", "op2"\], "class": "pointwise"' \
    "$FUSEENG" run "$T/custom.json" --policy "$P" --param max_fusion_depth=1 --json
expect_ok "... and op1's choice holding act (taken by mm) is skipped" \
    '^  note +choice: op1: 1 choice skipped: it holds nodes of earlier groups$' \
    "$FUSEENG" run "$T/custom.json" --policy "$P" --param max_fusion_depth=1 --explain

# Measuring: each kernel choice of each choice is timed on this CPU and
# logged; a group the CPU runs op by op (all_reduce + relu: nothing to fuse
# around the all_reduce) is no fused kernel and says so, while with two ops
# or more after it the group runs in fused parts and is timed as fused.
expect_ok "measure: both GEMM kernel choices of the matmul + bias choice are timed" \
    'choice: matmul #2 epilogue depth 1 \[matmul, bias_add\] matmul_blas: unfused [0-9.]+ [mu]s, fused' \
    "$FUSEENG" run examples/bench/matmul_bias_gelu.json --dim M=16 --policy "$P" --param measure=true --explain
grep -Eq 'choice: matmul #2 epilogue depth 1 \[matmul, bias_add\] matmul_blocked: unfused [0-9.]+ [mu]s, fused' "$T/out" &&
    ok "... and matmul_blocked" || not_ok "... and matmul_blocked" "$(cat "$T/out")"
expect_ok "measure: a collective + one op runs op by op on the CPU: no fused kernel" \
    'choice: all_reduce #2 epilogue depth 1 \[all_reduce, relu\] per_op runs op by op on this CPU' \
    "$FUSEENG" run "$M" --dim T=8 --policy "$P" --param measure=true --explain
grep -Eq 'choice: all_reduce #4 epilogue depth 3 \[all_reduce, relu, scale, out\] fused_rows: unfused [0-9.]+ [mu]s, fused' "$T/out" &&
    ok "... and with three ops after it, fused parts around it" ||
    not_ok "... and with three ops after it, fused parts around it" "$(grep 'choice: all_reduce' "$T/out")"


# Bad params stop the run.
for bad in max_fusion_depth=-1 max_fusion_depth=65 fusion_speedup_threshold=0 \
           fusion_speedup_threshold=-1 max_choices=0 fusion_types=epilogue,bogus; do
    expect_fail "bad param $bad: exit 2" 2 "param ${bad%%=*}" "$FUSEENG" run "$M" --policy "$P" --param "$bad"
done
expect_fail "max_fusion_depth=2.5: exit 2" 2 "max_fusion_depth" "$FUSEENG" run "$M" --policy "$P" --param max_fusion_depth=2.5

# ctx:choices from a policy: the list around relu (kind, depth, parent),
# and its flags.
cat >"$T/show.lua" <<'LUA'
local fe = require "fuseeng"
return fe.policy { name = "show", driver = "plan",
  plan = function(self, graph, ctx)
    local list = ctx:choices("relu", { depth = 3 })
    for i, c in ipairs(list) do
      local names = {}
      for _, n in ipairs(c.group.nodes) do names[#names + 1] = n.name end
      ctx:log(("c%d %s %d %s [%s]"):format(i, c.kind, c.depth, c.parent or "-", table.concat(names, " ")))
    end
    ctx:log("flags", list.truncated, list.illegal)
    local cut = ctx:choices(graph:node("all_reduce"), { max = 2, kinds = fe.set { "epilogue" } })
    ctx:log("cut", #cut, cut.truncated)
    return {}
  end }
LUA
"$FUSEENG" run "$M" --policy "$T/show.lua" --explain >"$T/show" 2>&1
got=$(sed -n 's/^  note     \(c[0-9].*\|flags.*\|cut.*\)$/\1/p' "$T/show" | tr '\n' '|')
want='c1 anchor 0 - [relu]|c2 epilogue 1 1 [relu scale]|c3 prologue 1 1 [all_reduce relu]|c4 epilogue 2 2 [relu scale out]|c5 cross 2 2 [all_reduce relu scale]|c6 cross 3 4 [all_reduce relu scale out]|flags false 2|cut 2 true|'
if [ "$got" = "$want" ]; then ok "ctx:choices around relu: every set, kind, depth and parent"; else
    not_ok "ctx:choices around relu: every set, kind, depth and parent" "got  $got" "want $want"; fi

# Bad ctx:choices arguments are the policy's fault, at its line: exit 2.
for call in 'ctx:choices("nope")|the anchor must be a node of this graph' \
            'ctx:choices("relu", 3)|options must be a table' \
            'ctx:choices("relu", {dept = 3})|unknown option .dept. (options are depth, max and kinds)' \
            'ctx:choices("relu", {depth = -1})|depth must be an integer from 0 to 64' \
            'ctx:choices("relu", {max = 0})|max must be an integer from 1 to 100000' \
            'ctx:choices("relu", {kinds = {"epilog"}})|each kind is "epilogue", "prologue" or "cross"' \
            'ctx:choices("relu", {kinds = "epilogue"})|kinds must be a list'; do
    code=${call%%|*} msg=${call#*|}
    printf 'local fe = require "fuseeng"\nreturn fe.policy { name = "bad", driver = "plan",\n  plan = function(self, graph, ctx)\n    %s\n    return {}\n  end }\n' "$code" >"$T/bad.lua"
    expect_fail "$code: exit 2" 2 "bad\.lua:4: choices: .*$(printf '%s' "$msg" | sed 's/[][()*]/\\&/g')" \
        "$FUSEENG" run "$M" --policy "$T/bad.lua"
done

finish
