# policy_xla_priority.sh: the priority driver and policies/xla_priority.lua,
# XLA's GPU priority fusion. The expectations of XLA's priority_fusion_test.cc
# in our ops (each model below names its test): a shared argument and a chain
# of elementwise ops end in one kernel, no reduce fuses into a reduce, a
# reduction takes an elementwise epilogue but not one that broadcasts it
# back, concatenate is not fused into its consumers, a matmul is left alone, a
# producer whose recomputation in each consumer would cost more than it saves
# is not fused while a cheap broadcast is (into one group with all its
# consumers: plans cannot duplicate a node). The decision log shows the best
# producer first. Bad params and bad priority hooks stop the run (exit 2).
. tests/lib.sh
P=xla_priority

# model NAME JSON-NODES JSON-TENSORS OUTPUTS: a small model file $T/NAME.json.
model() {
    printf '{"format": "fuseeng.model/1", "name": "%s", "tensors": {%s},\n "nodes": [%s],\n "outputs": [%s]}\n' \
        "$1" "$3" "$2" "$4" > "$T/$1.json"
}
# explain NAME 'regex' MODEL ARGS...: the --explain output matches.
explain() {
    name=$1 re=$2; shift 2
    expect_ok "$name" "$re" "$FUSEENG" run "$@" --explain
}
# group NAME 'node list' MODEL ARGS...: the plan has exactly that group.
group() {
    name=$1 nodes=$2; shift 2
    expect_ok "$name" "\"nodes\": \[$nodes\]," "$FUSEENG" run "$@" --json
}

# FuseWithSharedArgument: sub feeds two consumers, add shares p0 and p1;
# everything ends in one loop fusion.
model shared '{"name": "sub", "op": "sub", "inputs": ["p0", "p1"], "outputs": ["sub"]},
  {"name": "sq", "op": "mul", "inputs": ["sub", "sub"], "outputs": ["sq"]},
  {"name": "add", "op": "add", "inputs": ["p0", "p1"], "outputs": ["add"]},
  {"name": "abs", "op": "abs", "inputs": ["sub"], "outputs": ["abs"]},
  {"name": "t", "op": "add", "inputs": ["sq", "add"], "outputs": ["t"]},
  {"name": "out", "op": "maximum", "inputs": ["t", "abs"], "outputs": ["out"]}' \
  '"p0": {"shape": [1024, 1024], "dtype": "f32", "kind": "input"},
   "p1": {"shape": [1024, 1024], "dtype": "f32", "kind": "input"}' '"out"'
group "shared argument: one kernel" '"sub", "sq", "add", "abs", "t", "out"' "$T/shared.json" --policy $P
explain "shared argument: sub fuses into both its consumers at once" \
    '^  fuse +\[sub, sq, abs, t, out\] +into 1 consumer' "$T/shared.json" --policy $P

# Priority order: the large chain saves more and is fused first although the
# small one comes first in topological order; after each fusion the new
# group is re-priced and fuses on.
model chains '{"name": "s_exp", "op": "exp", "inputs": ["xs"], "outputs": ["s1"]},
  {"name": "s_neg", "op": "neg", "inputs": ["s1"], "outputs": ["s2"]},
  {"name": "s_sqrt", "op": "sqrt", "inputs": ["s2"], "outputs": ["s3"]},
  {"name": "b_exp", "op": "exp", "inputs": ["xb"], "outputs": ["b1"]},
  {"name": "b_neg", "op": "neg", "inputs": ["b1"], "outputs": ["b2"]},
  {"name": "b_sqrt", "op": "sqrt", "inputs": ["b2"], "outputs": ["b3"]}' \
  '"xs": {"shape": [64, 64], "dtype": "f32", "kind": "input"},
   "xb": {"shape": [2048, 2048], "dtype": "f32", "kind": "input"}' '"s3", "b3"'
"$FUSEENG" run "$T/chains.json" --policy $P --explain > "$T/chains.txt" 2>&1
if sed -n '/^decisions (/,$p' "$T/chains.txt" | sed -n '2,5p' | tr -s ' ' | cut -d' ' -f3- | tr '\n' '|' |
    grep -qx '\[b_neg, b_sqrt\] into 1 consumer: saves 343.5 us|\[b_exp, b_neg, b_sqrt\] into 1 consumer: saves 345.5 us|\[s_exp, s_neg\] into 1 consumer: saves 10.3 us|\[s_exp, s_neg, s_sqrt\] into 1 consumer: saves 10.3 us|'; then
    ok "priority order: the best producer first, neighbours re-priced"
else
    not_ok "priority order: the best producer first, neighbours re-priced" "$(cat "$T/chains.txt")"
fi
group "a chain of elementwise ops is one kernel" '"b_exp", "b_neg", "b_sqrt"' "$T/chains.json" --policy $P

# DoNotFuseReduceIntoReduce, EpilogueFusion: two sums stay apart; the logs
# after the second fuse into it.
model reduce2 '{"name": "r0", "op": "sum", "inputs": ["p0"], "outputs": ["r0"], "attrs": {"axes": [3]}},
  {"name": "r1", "op": "sum", "inputs": ["r0"], "outputs": ["r1"], "attrs": {"axes": [2]}},
  {"name": "l1", "op": "log", "inputs": ["r1"], "outputs": ["l1"]},
  {"name": "l2", "op": "log", "inputs": ["l1"], "outputs": ["l2"]}' \
  '"p0": {"shape": [8, 4, 128, 226], "dtype": "f32", "kind": "input"}' '"l2"'
group "reduce into reduce: the first sum alone" '"r0"' "$T/reduce2.json" --policy $P
group "... the second with its epilogue" '"r1", "l1", "l2"' "$T/reduce2.json" --policy $P
explain "... and the reason" '^  no +\[r0, r1\] +both the producer and the consumer contain a reduce \(sum, sum\)$' \
    "$T/reduce2.json" --policy $P
group "the rule is the policy's: the driver alone fuses them" '"r0", "r1", "l1", "l2"' \
    "$T/reduce2.json" --policy $P --param min_reduce=100000

# A column reduction whose consumer broadcasts it back (x - max) would
# become a loop fusion in XLA; a producer whose value is a model output
# stays.
model epilogue '{"name": "mx", "op": "amax", "inputs": ["x"], "outputs": ["m"], "attrs": {"axes": [0], "keepdim": true}},
  {"name": "shift", "op": "sub", "inputs": ["x", "m"], "outputs": ["d"]},
  {"name": "e", "op": "exp", "inputs": ["d"], "outputs": ["e"]},
  {"name": "f", "op": "neg", "inputs": ["e"], "outputs": ["f"]}' \
  '"x": {"shape": [1024, 1024], "dtype": "f32", "kind": "input"}' '"e", "f"'
explain "a reduce does not fuse into a consumer that broadcasts it back" \
    '^  no +\[mx, shift, e\] +fusion into the output of a reduce \(amax\) would make it a loop fusion$' \
    "$T/epilogue.json" --policy $P
explain "a model output is not fused into its consumers" \
    '^  no +\[shift, e, f\] +its value is a model output' "$T/epilogue.json" --policy $P

# SoftmaxRewriterTriton: over the last axis the same reduction is a
# normalization kernel with what broadcasts it back, and a second row
# reduction over the same rows joins it (a softmax: max, shift, exp, sum,
# divide); a reduction over other rows does not (reduce2 above).
sed 's/"axes": \[0\]/"axes": [1]/' "$T/epilogue.json" > "$T/rowmax.json"
group "a row max takes what broadcasts it back" '"mx", "shift", "e"' "$T/rowmax.json" --policy $P
explain "... as a normalization kernel" '^  fuse +\[mx, shift, e\] +a normalization kernel: into 1 consumer' \
    "$T/rowmax.json" --policy $P
group "... but not past a row of norm_max_row" '"mx"' "$T/rowmax.json" --policy $P --param norm_max_row=512
model softmax '{"name": "mx", "op": "amax", "inputs": ["x"], "outputs": ["m"], "attrs": {"axes": [1], "keepdim": true}},
  {"name": "shift", "op": "sub", "inputs": ["x", "m"], "outputs": ["d"]},
  {"name": "e", "op": "exp", "inputs": ["d"], "outputs": ["e"]},
  {"name": "s", "op": "sum", "inputs": ["e"], "outputs": ["s"], "attrs": {"axes": [1], "keepdim": true}},
  {"name": "p", "op": "div", "inputs": ["e", "s"], "outputs": ["p"]}' \
  '"x": {"shape": [4096, 1024], "dtype": "f32", "kind": "input"}' '"p"'
group "a softmax written out is one normalization kernel" '"mx", "shift", "e", "s", "p"' \
    "$T/softmax.json" --policy $P
# A log_softmax over columns reduces 1024 elements (not one: its output is
# as large as its input), so a column mean after it stays apart.
model colsoft '{"name": "ls", "op": "log_softmax", "inputs": ["x"], "outputs": ["l"], "attrs": {"axis": 0}},
  {"name": "cm", "op": "mean", "inputs": ["l"], "outputs": ["m"], "attrs": {"axes": [0]}}' \
  '"x": {"shape": [1024, 1024], "dtype": "f32", "kind": "input"}' '"m"'
explain "a column log_softmax and a column mean are two reductions" \
    '^  no +\[ls, cm\] +both the producer and the consumer contain a reduce \(log_softmax, mean\)$' \
    "$T/colsoft.json" --policy $P

# DontFuseConcat: the add fuses into the concat; the concat does not fuse
# into the column reduction.
model concat '{"name": "add", "op": "add", "inputs": ["a", "b"], "outputs": ["add"]},
  {"name": "concat", "op": "concat", "inputs": ["add", "c"], "outputs": ["cat"], "attrs": {"axis": 0}},
  {"name": "colmax", "op": "amax", "inputs": ["cat"], "outputs": ["m"], "attrs": {"axes": [0]}}' \
  '"a": {"shape": [1023, 512], "dtype": "f32", "kind": "input"},
   "b": {"shape": [1023, 512], "dtype": "f32", "kind": "input"},
   "c": {"shape": [401, 512], "dtype": "f32", "kind": "input"}' '"m"'
group "concat takes its producer" '"add", "concat"' "$T/concat.json" --policy $P
group "... but is not fused into its consumer" '"colmax"' "$T/concat.json" --policy $P
explain "... and says why" '^  no +\[concat, colmax\] +concatenate is not fused into its consumers$' \
    "$T/concat.json" --policy $P

# Duplication: XLA recomputes a producer in each consumer and prices it so
# (price = "duplicate"). A 64 MiB row sum read by three consumers would be
# read three times: never queued. A broadcast read by two is cheap: XLA
# recomputes it in each; here an expand is a view, free in the simulator,
# so it launches nothing and its consumers stay two kernels, as in XLA.
# price = "merge" prices the group the driver really builds.
model fanout '{"name": "rowsum", "op": "sum", "inputs": ["x"], "outputs": ["s"], "attrs": {"axes": [1], "keepdim": true}},
  {"name": "e1", "op": "exp", "inputs": ["s"], "outputs": ["e1"]},
  {"name": "e2", "op": "log", "inputs": ["s"], "outputs": ["e2"]},
  {"name": "e3", "op": "neg", "inputs": ["s"], "outputs": ["e3"]},
  {"name": "bcast", "op": "expand", "inputs": ["v"], "outputs": ["vb"], "attrs": {"shape": [4096, 4096]}},
  {"name": "c1", "op": "add", "inputs": ["vb", "a"], "outputs": ["c1"]},
  {"name": "c2", "op": "mul", "inputs": ["vb", "b"], "outputs": ["c2"]}' \
  '"x": {"shape": [4096, 4096], "dtype": "f32", "kind": "input"},
   "v": {"shape": [4096], "dtype": "f32", "kind": "input"},
   "a": {"shape": [4096, 4096], "dtype": "f32", "kind": "input"},
   "b": {"shape": [4096, 4096], "dtype": "f32", "kind": "input"}' '"e1", "e2", "e3", "c1", "c2"'
group "expensive work is not duplicated: the row sum is in no all-consumer fusion" '"rowsum"' \
    "$T/fanout.json" --policy $P --param multi_output=false
expect_ok "... it is never offered (no decision)" \
    '^decisions  0 fuse, 0 do not fuse, 0 no opinion, 0 rejected' "$FUSEENG" run "$T/fanout.json" \
    --policy $P --param multi_output=false
explain "multi-output fusion: it joins one consumer, its value written for the others" \
    '^  fuse +\[rowsum, e[123]\] +into 1 consumer: saves' "$T/fanout.json" --policy $P
expect_ok "a broadcast launches nothing; its two consumers stay two kernels" \
    '^kernels +7 -> 6 \(\+0 extern; 1 view group launches nothing; 0 fused groups' \
    "$FUSEENG" run "$T/fanout.json" --policy $P --param multi_output=false
group "price = merge fuses the row sum with its three consumers" '"rowsum", "e1", "e2", "e3"' \
    "$T/fanout.json" --policy $P --param price=merge
group "max_consumers = 2 keeps it apart even then" '"rowsum"' \
    "$T/fanout.json" --policy $P --param price=merge --param max_consumers=2

# A matmul's bias add does not distribute over split-K's partial sums, so
# XLA's Triton GEMM does not take it; with triton_gemm = false a matmul is a
# cuBLAS call that fuses nothing; fuse_gemm lets its epilogue in.
model gemm '{"name": "mm", "op": "matmul", "inputs": ["x", "w"], "outputs": ["y"]},
  {"name": "bias_add", "op": "add", "inputs": ["y", "bias"], "outputs": ["z"]},
  {"name": "act", "op": "relu", "inputs": ["z"], "outputs": ["r"]}' \
  '"x": {"shape": [512, 512], "dtype": "f32", "kind": "input"},
   "w": {"shape": [512, 512], "dtype": "f32", "kind": "weight"},
   "bias": {"shape": [512], "dtype": "f32", "kind": "weight"}' '"r"'
group "a GEMM fusion does not take a bias add: the matmul stays alone" '"mm"' \
    "$T/gemm.json" --policy $P --param split_k_cores=0
expect_ok "... never offered across the fusion's edge (no decision about it)" \
    '^decisions  1 fuse, 0 do not fuse' "$FUSEENG" run "$T/gemm.json" --policy $P --param split_k_cores=0
explain "triton_gemm = false: a matmul producer is not fused" \
    '^  no +\[mm, bias_add, act\] +the producer is not fusible \(matmul\)$' \
    "$T/gemm.json" --policy $P --param triton_gemm=false

# GemmFusion (gemm_fusion_test.cc's shapes in our ops): a matmul takes the
# cheap producers of its operand (a scale by a broadcast weight, a ReLU)
# and a multiply by a scalar after it, before any priority fusion; the
# residual add after that is not distributive and stays out. At 512^3 the
# output is 32 tiles of 64x128, fewer than the H200's 132 SMs, so XLA splits
# K: split_k_cores = 0 keeps one kernel for these checks, the split is
# checked after them.
TG='{"name": "scale", "op": "mul", "inputs": ["x", "g"], "outputs": ["xs"]},
  {"name": "act", "op": "relu", "inputs": ["xs"], "outputs": ["a"]},
  {"name": "mm", "op": "matmul", "inputs": ["a", "w"], "outputs": ["y"]},
  {"name": "sc", "op": "mul", "inputs": ["y"], "outputs": ["ys"], "attrs": {"scalar": 0.125, "scalar_index": 1}},
  {"name": "res", "op": "add", "inputs": ["ys", "r"], "outputs": ["out"]}'
TGT='"x": {"shape": [512, 512], "dtype": "f32", "kind": "input"},
   "g": {"shape": [512], "dtype": "f32", "kind": "weight"},
   "w": {"shape": [512, 512], "dtype": "f32", "kind": "weight"},
   "r": {"shape": [512, 512], "dtype": "f32", "kind": "input"}'
model tgemm "$TG" "$TGT" '"out"'
model tgemm2 "$TG"', {"name": "side", "op": "neg", "inputs": ["a"], "outputs": ["n"]}' "$TGT" '"out", "n"'
group "a Triton GEMM takes its prologue and a scalar epilogue" '"scale", "act", "mm", "sc"' \
    "$T/tgemm.json" --policy $P --param split_k_cores=0
explain "... a fixed group, first, as the pass before priority fusion" \
    '^  fuse +\[scale, act, mm, sc\] +Triton GEMM fusion of mm$' \
    "$T/tgemm.json" --policy $P --param split_k_cores=0
group "gemm_max_params = 1: the scale's weight would be a second input" '"act", "mm", "sc"' \
    "$T/tgemm.json" --policy $P --param gemm_max_params=1 --param split_k_cores=0
group "a producer read elsewhere too stays out (a plan cannot duplicate it)" '"mm", "sc"' \
    "$T/tgemm2.json" --policy $P --param split_k_cores=0
group "split K: the prologue is the partial products' kernel" '"scale", "act"' "$T/tgemm.json" --policy $P
explain "... taken first" '^  fuse +\[scale, act\] +Triton GEMM fusion of mm \(its split-K partial products\)$' \
    "$T/tgemm.json" --policy $P
group "... the matmul goes with the kernel that sums them, and its readers" '"mm", "sc", "res"' \
    "$T/tgemm.json" --policy $P
group "... the bias add and activation too" '"mm", "bias_add", "act"' "$T/gemm.json" --policy $P
group "split_k_min above K: no split" '"scale", "act", "mm", "sc"' "$T/tgemm.json" --policy $P \
    --param split_k_min=1024
group "fuse_gemm = true takes the epilogue" '"mm", "bias_add", "act"' "$T/gemm.json" --policy $P --param fuse_gemm=true
group "max_nodes = 2 keeps the group at two nodes" '"bias_add", "act"' \
    "$T/gemm.json" --policy $P --param fuse_gemm=true --param max_nodes=2

# The LLaMA-2 layer, as docs/policy-guide.md shows it.
M=examples/models/llama2_7b_layer.json
expect_ok "LLaMA-2 layer: 40 -> 10 kernels" '^kernels +40 -> 10 \(\+8 extern; 4 view groups launch nothing; 12 fused groups holding 30 nodes' \
    "$FUSEENG" run "$M" --policy $P
expect_ok "LLaMA-2 layer: 1.39x faster than unfused" '^time +47\.832 ms +34\.333 ms 1\.39x faster$' \
    "$FUSEENG" run "$M" --policy $P
explain "LLaMA-2 layer: the softmax block first" '^  fuse +\[scores_masked, probs\] +into 1 consumer: saves 5\.346 ms$' \
    "$M" --policy $P

# The driver without hooks: every legal candidate by the simulator's
# saving; the engine's rejections are logged.
cat > "$T/bare.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "bare", driver = "priority" }
EOF
explain "the bare driver fuses by the simulator's saving" '^  fuse +\[rowsum, e1, e2, e3\] +legal; the policy has no decide hook$' \
    "$T/fanout.json" --policy "$T/bare.lua"
explain "illegal candidates are rejected by the engine" \
    '^  rejected \[input_layernorm, q_proj, k_proj, v_proj\] +rejected by the engine: one kernel holds at most one matmul' \
    "$M" --policy "$T/bare.lua"

# A priority hook: a number reorders, nil is the simulator's estimate; the
# hook sees the producer and a list of consumer groups.
cat > "$T/small_first.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "small_first", driver = "priority",
  priority = function(self, producer, consumers, ctx)
    if producer[1].name:sub(1, 2) == "s_" then return 1 end   -- 1 s: before anything
    if #consumers ~= 1 then error("expected one consumer") end
    return nil
  end,
  decide = function(self, group, ctx) return true, ("priority %g"):format(ctx.priority) end }
EOF
"$FUSEENG" run "$T/chains.json" --policy "$T/small_first.lua" --explain 2>&1 | sed -n '/^decisions (/{n;p;}' > "$T/first.txt"
if grep -Eq '^  fuse +\[s_neg, s_sqrt\] +priority 1$' "$T/first.txt"; then
    ok "a priority hook reorders: the small chain first, with the hook's number in ctx.priority"
else
    not_ok "a priority hook reorders: the small chain first, with the hook's number in ctx.priority" "$(cat "$T/first.txt")"
fi

# Bad input: params out of range, a hook that returns no number or fails.
expect_fail "max_nodes = 0 is refused" 2 "params\.max_nodes must be an integer from 1 to 2147483647, got 0" \
    "$FUSEENG" run "$T/gemm.json" --policy $P --param max_nodes=0
expect_fail "max_consumers = -1 is refused" 2 "params\.max_consumers must be an integer from 1 to 1048576, got -1" \
    "$FUSEENG" run "$T/gemm.json" --policy $P --param max_consumers=-1
expect_fail "an unknown price is refused" 2 "params\.price must be \"merge\" or \"duplicate\", got 'fast'" \
    "$FUSEENG" run "$T/gemm.json" --policy $P --param price=fast
# policy NAME 'FIELDS': a one-line policy file $T/NAME.lua with those fields.
policy() {
    printf 'local fe = require "fuseeng"\nreturn fe.policy { name = "%s", %s }\n' "$1" "$2" >"$T/$1.lua"
}
policy bad_multi 'driver = "priority", params = { multi_output = "yes" }'
expect_fail "multi_output must be a boolean" 2 "params\.multi_output must be true or false, got 'yes'" \
    "$FUSEENG" run "$T/gemm.json" --policy "$T/bad_multi.lua"
policy bad_min 'driver = "priority", params = { min_priority = "soon" }'
expect_fail "min_priority must be a number" 2 "bad_min\.lua: policy 'bad_min': params\.min_priority must be a number of seconds.*got 'soon'" \
    "$FUSEENG" run "$T/gemm.json" --policy "$T/bad_min.lua"
policy bad_max 'driver = "priority", params = { max_nodes = 2.5 }'
expect_fail "max_nodes must be an integer" 2 "params\.max_nodes must be an integer from 1 to 2147483647, got 2\.5" \
    "$FUSEENG" run "$T/gemm.json" --policy "$T/bad_max.lua"
for bad in '"fast"' '0/0' 'error("boom")' '{}'; do
    cat > "$T/bad_hook.lua" <<EOF
local fe = require "fuseeng"
return fe.policy { name = "bad_hook", driver = "priority",
  priority = function(self, producer, consumers, ctx)
    return $bad
  end }
EOF
    case $bad in
    '"fast"') re="bad_hook\.lua:3: priority returned 'fast'; it must return a number .*or nil" ;;
    '0/0') re="bad_hook\.lua:3: priority returned NaN; it must return a number" ;;
    'error("boom")') re="bad_hook\.lua:4: boom \(in priority of policy 'bad_hook'\)" ;;
    *) re="bad_hook\.lua:3: priority returned a table; it must return a number" ;;
    esac
    expect_fail "a priority hook returning $bad stops the run" 2 "$re" \
        "$FUSEENG" run "$T/chains.json" --policy "$T/bad_hook.lua"
done
cat > "$T/soft.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "soft", driver = "priority", fallback_on_error = "unfused",
  priority = function(self, producer, consumers, ctx) error("boom") end }
EOF
expect_ok "with fallback_on_error = unfused a failing hook leaves the plan unfused" '^kernels +6 -> 6 ' \
    "$FUSEENG" run "$T/chains.json" --policy "$T/soft.lua"

# The driver's fixed groups and priority_ops, on their own. A fixed group is
# merged first and sealed: the chain b_exp -> b_neg -> b_sqrt would fuse
# whole, but with {b_exp, b_neg} fixed, b_sqrt stays alone.
cat > "$T/fixed.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "fixed", driver = "priority",
  fixed = function(self, graph, ctx)
    return { { "b_exp", "b_neg", reason = "a pass before" }, { "s_exp" } }
  end,
  priority_ops = { "neg" },
  priority = function(self, producer, consumers, ctx)
    local seen = false
    for i = 1, #producer do seen = seen or producer[i].op == "neg" end
    assert(seen, "asked about a producer without a neg")
    return nil
  end }
EOF
explain "a fixed group is merged first, with its reason" '^  fuse +\[b_exp, b_neg\] +a pass before$' \
    "$T/chains.json" --policy "$T/fixed.lua"
group "... and sealed: nothing joins it" '"b_sqrt"' "$T/chains.json" --policy "$T/fixed.lua"
group "a fixed group of one node is sealed alone" '"s_exp"' "$T/chains.json" --policy "$T/fixed.lua"
group "... while the nodes around it fuse on (priority_ops: the hook saw only neg producers)" \
    '"s_neg", "s_sqrt"' "$T/chains.json" --policy "$T/fixed.lua"
cat > "$T/fixed_bad.lua" <<'EOF'
local fe = require "fuseeng"
return fe.policy { name = "fixed_bad", driver = "priority",
  fixed = function(self, graph, ctx) return { { "b_exp", "b_sqrt" }, { "nowhere" } } end }
EOF
explain "an illegal fixed group is rejected and its nodes fuse on" \
    '^  rejected \[b_exp, b_sqrt\] +rejected by the engine: group 1: not convex' "$T/chains.json" --policy "$T/fixed_bad.lua"
explain "... a fixed group naming no node is rejected by name" \
    "^  rejected +rejected by the engine: group 2 item 1 \\('nowhere'\\) is not a node of this graph" "$T/chains.json" --policy "$T/fixed_bad.lua"
group "... and the chain fuses whole" '"b_exp", "b_neg", "b_sqrt"' "$T/chains.json" --policy "$T/fixed_bad.lua"
policy fixed_num 'driver = "priority", fixed = function() return 3 end'
expect_fail "fixed returning a number stops the run" 2 "fixed returned a number; it must return a list of groups" \
    "$FUSEENG" run "$T/chains.json" --policy "$T/fixed_num.lua"
policy pops 'driver = "priority", priority_ops = { "nope" }'
expect_fail "priority_ops naming no op is refused" 2 "priority_ops\[1\] is 'nope', not an op name" \
    "$FUSEENG" run "$T/chains.json" --policy "$T/pops.lua"
policy fgreedy 'driver = "greedy", fixed = function() return {} end'
expect_fail "fixed on another driver is refused" 2 "fixed is read by the priority driver only, not by greedy" \
    "$FUSEENG" run "$T/chains.json" --policy "$T/fgreedy.lua"

finish
