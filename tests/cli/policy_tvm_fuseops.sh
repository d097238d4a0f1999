# policy_tvm_fuseops.sh: policies/tvm_fuseops.lua gives the groupings TVM's own
# tests expect (tests/python/relay/test_pass_fuse_ops.py in apache/tvm, Relay's
# FuseOps). Each case below rebuilds one of those graphs with our ops and
# checks the fused groups exactly (groups of one node are left out).
#
# Cases of that file with no counterpart here, and why:
#   test_stop_fusion            no stop_fusion annotation op in our IR
#   test_fuse_myia_regression   control flow (if/else) is not in our IR
#   test_immutable, test_split  properties of Relay's IR objects (the pass does
#                               not mutate its input; TupleGetItem well-formed)
#   test_fuse_dynamic_squeeze_slice_take, the dynamic shapes of
#   test_fuse_max_num_args      our shapes are static (dims resolve at load)
# Substitutions: squeeze -> reshape to the same shape; upsampling -> pad to
# the same shape (both injective); left_shift -> add; less -> sub; split +
# TupleGetItem -> slice; dense -> matmul; Relay's Tuple feeding concatenate
# -> concat reading its inputs directly (our IR has no tuple nodes).
. tests/lib.sh

# groups MODEL ARGS...: the fused groups of the plan, one per line, in plan
# order, node names separated by spaces.
groups() {
    m=$1; shift
    "$FUSEENG" run "$m" --policy tvm_fuseops --json "$@" |
        sed -n 's/.*"nodes": \[\([^]]*\)\].*/\1/p' | grep , | tr -d '"' | sed 's/, / /g'
}
# expect_groups NAME MODEL 'GROUP LINES' ARGS...
expect_groups() {
    name=$1 m=$2 want=$3; shift 3
    got=$(groups "$T/$m.json" "$@" 2>"$T/gerr")
    if [ "$got" = "$want" ]; then
        ok "$name"
    else
        not_ok "$name" "got:" "$got" "want:" "$want" "stderr: $(head -c 400 "$T/gerr")"
    fi
}
# model NAME 'TENSORS' 'NODES' 'OUTPUTS': write $T/NAME.json
model() {
    printf '{"format": "fuseeng.model/1", "name": "%s", "tensors": {%s}, "nodes": [%s], "outputs": [%s]}\n' \
        "$1" "$2" "$3" "$4" >"$T/$1.json"
}
X='"x": {"shape": [10, 20], "dtype": "f32", "kind": "input"}'
IMG='"x": {"shape": [1, 16, 64, 64], "dtype": "f32", "kind": "input"}'

# test_fuse_simple: add -> exp -> squeeze, one group.
model simple "$X" '
 {"name": "y", "op": "add", "inputs": ["x"], "outputs": ["y"], "attrs": {"scalar": 1}},
 {"name": "z", "op": "exp", "inputs": ["y"], "outputs": ["z"]},
 {"name": "w", "op": "reshape", "inputs": ["z"], "outputs": ["w"], "attrs": {"shape": [10, 20]}}' '"w"'
expect_groups "fuse_simple: add, exp and squeeze in one group" simple "y z w"

# test_conv2d_fuse: the add before conv2d stays alone (prologues are not
# fused); conv2d + the diamond after it (add(1, y), add(y, y1)) fuse through
# the post-dominator; of the two convs feeding the last add, the first in
# post-DFS order (the 1x1) takes it, the other runs alone.
W3='"w1": {"shape": [16, 16, 3, 3], "dtype": "f32", "kind": "weight"},
 "w2": {"shape": [16, 16, 1, 1], "dtype": "f32", "kind": "weight"},
 "w3": {"shape": [16, 16, 3, 3], "dtype": "f32", "kind": "weight"}'
model conv "$IMG, $W3" '
 {"name": "pre", "op": "add", "inputs": ["x"], "outputs": ["pre"], "attrs": {"scalar": 1}},
 {"name": "c1", "op": "conv2d", "inputs": ["pre", "w1"], "outputs": ["c1"], "attrs": {"padding": 1}},
 {"name": "y1", "op": "add", "inputs": ["c1"], "outputs": ["y1"], "attrs": {"scalar": 1, "scalar_index": 0}},
 {"name": "y", "op": "add", "inputs": ["c1", "y1"], "outputs": ["y"]},
 {"name": "z2", "op": "conv2d", "inputs": ["y", "w2"], "outputs": ["z2"]},
 {"name": "z3", "op": "conv2d", "inputs": ["y", "w3"], "outputs": ["z3"], "attrs": {"padding": 1}},
 {"name": "z", "op": "add", "inputs": ["z2", "z3"], "outputs": ["z"]}' '"z"'
expect_groups "conv2d_fuse: conv2d + diamond epilogue; the 1x1 conv takes the add" conv "c1 y1 y
z2 z"

# test_concatenate: max_pool2d alone (an injective op follows it);
# upsampling, concatenate and add in one group.
model concat "$IMG" '
 {"name": "pool", "op": "max_pool2d", "inputs": ["x"], "outputs": ["pool"], "attrs": {"kernel": 2, "stride": 2}},
 {"name": "up", "op": "pad", "inputs": ["pool"], "outputs": ["up"], "attrs": {"pads": [16, 16, 16, 16]}},
 {"name": "cat", "op": "concat", "inputs": ["up", "x"], "outputs": ["cat"], "attrs": {"axis": 1}},
 {"name": "out", "op": "add", "inputs": ["cat"], "outputs": ["out"], "attrs": {"scalar": 1}}' '"out"'
expect_groups "concatenate: pool alone; upsampling + concat + add" concat "up cat out"

# test_tuple_root: the tuple is the function's result, so upsampling (an
# output here) fuses with nothing, and pool with nothing either.
model tuple_root "$IMG" '
 {"name": "pool", "op": "max_pool2d", "inputs": ["x"], "outputs": ["pool"], "attrs": {"kernel": 2, "stride": 2}},
 {"name": "up", "op": "pad", "inputs": ["pool"], "outputs": ["up"], "attrs": {"pads": [16, 16, 16, 16]}}' '"up"'
expect_groups "tuple_root: nothing fuses into an output" tuple_root ""

# test_fuse_tuple_get_elemwise: dense alone; split, sigmoid, tanh, exp, mul
# and add in one group.
model split_elem '"X": {"shape": [1, 10], "dtype": "f32", "kind": "input"},
 "W": {"shape": [30, 10], "dtype": "f32", "kind": "weight"}' '
 {"name": "mm", "op": "matmul", "inputs": ["X", "W"], "outputs": ["mm"], "attrs": {"transpose_b": true}},
 {"name": "s0", "op": "slice", "inputs": ["mm"], "outputs": ["s0"], "attrs": {"axis": 1, "start": 0, "end": 10}},
 {"name": "s1", "op": "slice", "inputs": ["mm"], "outputs": ["s1"], "attrs": {"axis": 1, "start": 10, "end": 20}},
 {"name": "s2", "op": "slice", "inputs": ["mm"], "outputs": ["s2"], "attrs": {"axis": 1, "start": 20, "end": 30}},
 {"name": "sg", "op": "sigmoid", "inputs": ["s0"], "outputs": ["sg"]},
 {"name": "th", "op": "tanh", "inputs": ["s1"], "outputs": ["th"]},
 {"name": "ex", "op": "exp", "inputs": ["s2"], "outputs": ["ex"]},
 {"name": "prod", "op": "mul", "inputs": ["th", "ex"], "outputs": ["prod"]},
 {"name": "out", "op": "add", "inputs": ["sg", "prod"], "outputs": ["out"]}' '"out"'
expect_groups "fuse_tuple_get_elemwise: dense alone, split and the elementwise tail fused" split_elem \
    "s0 s1 s2 sg th ex prod out"

# test_tuple_get_root: split then dense: the split does not fuse into dense.
model split_root '"X": {"shape": [1, 30], "dtype": "f32", "kind": "input"},
 "W": {"shape": [10, 10], "dtype": "f32", "kind": "weight"}' '
 {"name": "s0", "op": "slice", "inputs": ["X"], "outputs": ["s0"], "attrs": {"axis": 1, "start": 0, "end": 10}},
 {"name": "mm", "op": "matmul", "inputs": ["s0", "W"], "outputs": ["mm"], "attrs": {"transpose_b": true}}' '"mm"'
expect_groups "tuple_get_root: split and dense apart" split_root ""

# test_tuple_intermediate: squeezes, adds and a concatenate in between: all
# one group.
model tuple_mid "$IMG" '
 {"name": "inj", "op": "reshape", "inputs": ["x"], "outputs": ["inj"], "attrs": {"shape": [1, 16, 64, 64]}},
 {"name": "y1", "op": "add", "inputs": ["inj"], "outputs": ["y1"], "attrs": {"scalar": 1}},
 {"name": "sq", "op": "reshape", "inputs": ["inj"], "outputs": ["sq"], "attrs": {"shape": [1, 16, 64, 64]}},
 {"name": "t1", "op": "add", "inputs": ["sq"], "outputs": ["t1"], "attrs": {"scalar": 1}},
 {"name": "y2", "op": "add", "inputs": ["t1"], "outputs": ["y2"], "attrs": {"scalar": 1}},
 {"name": "y3", "op": "add", "inputs": ["inj"], "outputs": ["y3"], "attrs": {"scalar": 1}},
 {"name": "cat", "op": "concat", "inputs": ["y1", "y2", "y3"], "outputs": ["cat"], "attrs": {"axis": 1}},
 {"name": "oinj", "op": "reshape", "inputs": ["cat"], "outputs": ["oinj"], "attrs": {"shape": [1, 48, 64, 64]}},
 {"name": "out", "op": "add", "inputs": ["oinj"], "outputs": ["out"], "attrs": {"scalar": 1}}' '"out"'
expect_groups "tuple_intermediate: one group" tuple_mid "inj y1 sq t1 y2 y3 cat oinj out"

# test_tuple_consecutive: three (3 adds -> concatenate -> add) blocks and
# the concatenate of them in one group; max_pool2d + add (the first output)
# in one group, TVM's pool + elementwise epilogue; the second add alone.
nodes='' cats=''
for b in 0 1 2; do
    for i in 1 2 3; do
        nodes="$nodes{\"name\": \"b${b}y$i\", \"op\": \"add\", \"inputs\": [\"x\"], \"outputs\": [\"b${b}y$i\"], \"attrs\": {\"scalar\": 1}},"
    done
    nodes="$nodes{\"name\": \"b${b}cat\", \"op\": \"concat\", \"inputs\": [\"b${b}y1\", \"b${b}y2\", \"b${b}y3\"], \"outputs\": [\"b${b}cat\"], \"attrs\": {\"axis\": 1}},"
    nodes="$nodes{\"name\": \"b${b}out\", \"op\": \"add\", \"inputs\": [\"b${b}cat\"], \"outputs\": [\"b${b}out\"], \"attrs\": {\"scalar\": 1}},"
    cats="$cats${cats:+, }\"b${b}out\""
done
model tuple_seq "$IMG" "$nodes"'
 {"name": "cat", "op": "concat", "inputs": ['"$cats"'], "outputs": ["cat"], "attrs": {"axis": 1}},
 {"name": "pool", "op": "max_pool2d", "inputs": ["cat"], "outputs": ["pool"], "attrs": {"kernel": 2, "stride": 2}},
 {"name": "out", "op": "add", "inputs": ["pool"], "outputs": ["out"], "attrs": {"scalar": 1}},
 {"name": "out2", "op": "add", "inputs": ["out"], "outputs": ["out2"], "attrs": {"scalar": 1}}' '"out", "out2"'
expect_groups "tuple_consecutive: the concat blocks; max_pool2d + add; the last add alone" tuple_seq \
    "b0y1 b0y2 b0y3 b0cat b0out b1y1 b1y2 b1y3 b1cat b1out b2y1 b2y2 b2y3 b2cat b2out cat
pool out"

# test_inception_like: conv2d + relu fuse, the concatenates run alone.
W4='"w1": {"shape": [16, 16, 3, 3], "dtype": "f32", "kind": "weight"},
 "w2": {"shape": [16, 16, 3, 3], "dtype": "f32", "kind": "weight"},
 "w3": {"shape": [16, 32, 3, 3], "dtype": "f32", "kind": "weight"},
 "w4": {"shape": [16, 32, 3, 3], "dtype": "f32", "kind": "weight"}'
model inception "$IMG, $W4" '
 {"name": "c1", "op": "conv2d", "inputs": ["x", "w1"], "outputs": ["c1"], "attrs": {"padding": 1}},
 {"name": "r1", "op": "relu", "inputs": ["c1"], "outputs": ["r1"]},
 {"name": "c2", "op": "conv2d", "inputs": ["x", "w2"], "outputs": ["c2"], "attrs": {"padding": 1}},
 {"name": "r2", "op": "relu", "inputs": ["c2"], "outputs": ["r2"]},
 {"name": "cat1", "op": "concat", "inputs": ["r1", "r2"], "outputs": ["cat1"], "attrs": {"axis": 1}},
 {"name": "c3", "op": "conv2d", "inputs": ["cat1", "w3"], "outputs": ["c3"], "attrs": {"padding": 1}},
 {"name": "r3", "op": "relu", "inputs": ["c3"], "outputs": ["r3"]},
 {"name": "c4", "op": "conv2d", "inputs": ["cat1", "w4"], "outputs": ["c4"], "attrs": {"padding": 1}},
 {"name": "r4", "op": "relu", "inputs": ["c4"], "outputs": ["r4"]},
 {"name": "cat2", "op": "concat", "inputs": ["r3", "r4"], "outputs": ["cat2"], "attrs": {"axis": 1}}' '"cat2"'
expect_groups "inception_like: conv2d + relu four times, concats alone" inception "c1 r1
c2 r2
c3 r3
c4 r4"

# test_fuse_parallel_injective: add -> {squeeze, transpose} -> left_shift,
# one group (injective ops on parallel branches join the elementwise anchor).
model parallel "$X" '
 {"name": "y", "op": "add", "inputs": ["x"], "outputs": ["y"], "attrs": {"scalar": 1}},
 {"name": "z", "op": "reshape", "inputs": ["y"], "outputs": ["z"], "attrs": {"shape": [10, 20]}},
 {"name": "u", "op": "transpose", "inputs": ["y"], "outputs": ["u"], "attrs": {"perm": [0, 1]}},
 {"name": "w", "op": "add", "inputs": ["z", "u"], "outputs": ["w"]}' '"w"'
expect_groups "fuse_parallel_injective: one group" parallel "y z u w"

# test_fuse_max: a chain of exps is cut after max_depth ops (256 by default).
chain() {   # chain NAME N: x -> e1 -> ... -> eN
    nodes='' prev=x
    i=1
    while [ "$i" -le "$2" ]; do
        nodes="$nodes${nodes:+,}{\"name\": \"e$i\", \"op\": \"exp\", \"inputs\": [\"$prev\"], \"outputs\": [\"e$i\"]}"
        prev=e$i
        i=$((i + 1))
    done
    model "$1" "$X" "$nodes" "\"e$2\""
}
seq_names() { i=$1 s=''; while [ "$i" -le "$2" ]; do s="$s${s:+ }e$i"; i=$((i + 1)); done; echo "$s"; }
chain chain300 300
expect_groups "fuse_max: 300 exps make groups of 256 and 44" chain300 "$(seq_names 1 256)
$(seq_names 257 300)"
chain chain20 20
expect_groups "fuse_max: max_depth=10 cuts 20 exps in two" chain20 "$(seq_names 1 10)
$(seq_names 11 20)" --param max_depth=10

# An injective chain (phase 1): reshape -> transpose -> slice -> reshape and
# the exp after it, one group.
model inj_chain "$X" '
 {"name": "r1", "op": "reshape", "inputs": ["x"], "outputs": ["r1"], "attrs": {"shape": [20, 10]}},
 {"name": "tr", "op": "transpose", "inputs": ["r1"], "outputs": ["tr"], "attrs": {"perm": [1, 0]}},
 {"name": "sl", "op": "slice", "inputs": ["tr"], "outputs": ["sl"], "attrs": {"axis": 0, "start": 0, "end": 5}},
 {"name": "r2", "op": "reshape", "inputs": ["sl"], "outputs": ["r2"], "attrs": {"shape": [100]}},
 {"name": "ex", "op": "exp", "inputs": ["r2"], "outputs": ["ex"]}' '"ex"'
expect_groups "an injective chain and the exp after it in one group" inj_chain "r1 tr sl r2 ex"

# test_fuse_take / test_fuse_gather_nd: concatenate + take fuse.
model take '"x": {"shape": [10, 1], "dtype": "f32", "kind": "input"},
 "idx": {"shape": [1], "dtype": "i64", "kind": "weight"}' '
 {"name": "cat", "op": "concat", "inputs": ["x", "x"], "outputs": ["cat"], "attrs": {"axis": -1}},
 {"name": "take", "op": "gather", "inputs": ["cat", "idx"], "outputs": ["take"], "attrs": {"axis": 0}}' '"take"'
expect_groups "fuse_take: concatenate + take" take "cat take"

# test_fuse_bcast_reduce_scalar: a broadcast op fuses into the reduction
# after it.
model bcast_reduce '"x": {"shape": [4], "dtype": "f32", "kind": "input"}' '
 {"name": "less", "op": "sub", "inputs": ["x"], "outputs": ["less"], "attrs": {"scalar": 10}},
 {"name": "min", "op": "amin", "inputs": ["less"], "outputs": ["min"], "attrs": {"axes": [0]}}' '"min"'
expect_groups "fuse_bcast_reduce_scalar: broadcast + reduction" bcast_reduce "less min"

# A reduction ends its group: the exp after the sum is not fused into it.
model reduce_ends "$X" '
 {"name": "a", "op": "add", "inputs": ["x"], "outputs": ["a"], "attrs": {"scalar": 1}},
 {"name": "s", "op": "sum", "inputs": ["a"], "outputs": ["s"], "attrs": {"axes": [1]}},
 {"name": "e", "op": "exp", "inputs": ["s"], "outputs": ["e"]},
 {"name": "n", "op": "neg", "inputs": ["e"], "outputs": ["n"]}' '"n"'
expect_groups "a reduction ends its group" reduce_ends "a s
e n"

# test_fuse_max_diamond: three diamonds of two 5-exp branches and an add,
# max_depth 11 (one diamond): one group per diamond.
nodes='' prev=x
for d in 1 2 3; do
    for br in a b; do
        p=$prev
        for i in 1 2 3 4 5; do
            nodes="$nodes{\"name\": \"d$d$br$i\", \"op\": \"exp\", \"inputs\": [\"$p\"], \"outputs\": [\"d$d$br$i\"]},"
            p=d$d$br$i
        done
    done
    nodes="$nodes{\"name\": \"d${d}add\", \"op\": \"add\", \"inputs\": [\"d${d}a5\", \"d${d}b5\"], \"outputs\": [\"d${d}add\"]},"
    prev=d${d}add
done
model diamond "$X" "${nodes%,}" '"d3add"'
expect_groups "fuse_max_diamond: one group per diamond at max_depth 11" diamond \
"d1a1 d1a2 d1a3 d1a4 d1a5 d1b1 d1b2 d1b3 d1b4 d1b5 d1add
d2a1 d2a2 d2a3 d2a4 d2a5 d2b1 d2b2 d2b3 d2b4 d2b5 d2add
d3a1 d3a2 d3a3 d3a4 d3a5 d3b1 d3b2 d3b3 d3b4 d3b5 d3add" --param max_depth=11

# test_fuse_softmax: softmax + cast.
model softmax '"x": {"shape": [16, 16], "dtype": "f32", "kind": "input"}' '
 {"name": "sm", "op": "softmax", "inputs": ["x"], "outputs": ["sm"], "attrs": {"axis": -1}},
 {"name": "half", "op": "cast", "inputs": ["sm"], "outputs": ["half"], "attrs": {"dtype": "f16"}}' '"half"'
expect_groups "fuse_softmax: softmax + cast" softmax "sm half"

# test_fuse_max_num_args: branches x_i + 1 -> exp summed by a chain of adds.
# TVM (max_function_args 6, one argument for the output) fuses the first
# five branches and their adds into one function, then every later branch
# runs as its own function and every later add alone; here too, counting
# arguments as TVM counts them, which gives the same cut.
ins='' nodes=''
for i in 0 1 2 3 4 5 6 7; do
    ins="$ins${ins:+, }\"x$i\": {\"shape\": [10, 20], \"dtype\": \"f32\", \"kind\": \"input\"}"
    nodes="$nodes{\"name\": \"a$i\", \"op\": \"add\", \"inputs\": [\"x$i\"], \"outputs\": [\"a$i\"], \"attrs\": {\"scalar\": 1}},"
    nodes="$nodes{\"name\": \"e$i\", \"op\": \"exp\", \"inputs\": [\"a$i\"], \"outputs\": [\"e$i\"]},"
    if [ "$i" -gt 0 ]; then
        prev=$([ "$i" -eq 1 ] && echo e0 || echo s$((i - 1)))
        nodes="$nodes{\"name\": \"s$i\", \"op\": \"add\", \"inputs\": [\"$prev\", \"e$i\"], \"outputs\": [\"s$i\"]},"
    fi
done
model num_args "$ins" "${nodes%,}" '"s7"'
expect_groups "fuse_max_num_args: no limit by default: one group" num_args \
    "a0 e0 a1 e1 s1 a2 e2 s2 a3 e3 s3 a4 e4 s4 a5 e5 s5 a6 e6 s6 a7 e7 s7"
expect_groups "fuse_max_num_args: max_function_args=6: five branches, then apart" num_args \
"a0 e0 a1 e1 s1 a2 e2 s2 a3 e3 s3 a4 e4 s4
a5 e5
a6 e6
a7 e7" --param max_function_args=6

# max_pool2d + add: TVM marks pooling kOutEWiseFusable; the engine takes the
# epilogue (legality's pool class) and the CPU runs it as one kernel whose
# result equals the unfused reference.
model pool_add '"x": {"shape": [1, 8, 16, 16], "dtype": "f32", "kind": "input"},
 "b": {"shape": [1, 8, 1, 1], "dtype": "f32", "kind": "weight"}' '
 {"name": "pool", "op": "max_pool2d", "inputs": ["x"], "outputs": ["pool"], "attrs": {"kernel": 3, "stride": 2, "padding": 1}},
 {"name": "bias", "op": "add", "inputs": ["pool", "b"], "outputs": ["bias"]},
 {"name": "act", "op": "relu", "inputs": ["bias"], "outputs": ["act"]}' '"act"'
expect_groups "max_pool2d + add + relu in one group" pool_add "pool bias act"
expect_ok "max_pool2d + add runs fused and matches the reference" \
    'fused_rows: max_pool2d plane by plane; epilogue \(2 ops: add, relu\)' \
    "$FUSEENG" run "$T/pool_add.json" --policy tvm_fuseops --execute
expect_ok "... and its outputs agree" 'act +[0-9.e+-]+ +[0-9.e+-]+ +[0-9.e+-]+ +0  ok' \
    "$FUSEENG" run "$T/pool_add.json" --policy tvm_fuseops --execute

# The shipped models: groups and kernel counts.
expect_ok "resnet50 bottleneck: conv + bn + relu, and the residual add with conv3" \
    '^kernels +10 -> 3 ' "$FUSEENG" run examples/models/resnet50_bottleneck.json --policy tvm_fuseops
expect_ok "opu_convnet: 57 -> 27 kernels, pools with their activation" \
    'fuse +\[conv1_pool, conv1_max\]' "$FUSEENG" run examples/models/opu_convnet.json --policy tvm_fuseops --explain

# Bad params stop the run with the fix named.
expect_fail "max_depth=0 is refused" 2 'max_depth must be an integer >= 1' \
    "$FUSEENG" run "$T/simple.json" --policy tvm_fuseops --param max_depth=0
expect_fail "max_function_args=-1 is refused" 2 'max_function_args must be an integer >= 0' \
    "$FUSEENG" run "$T/simple.json" --policy tvm_fuseops --param max_function_args=-1
expect_fail "max_depth=1.5 is refused" 2 "param 'max_depth' of policy 'tvm_fuseops' is an integer" \
    "$FUSEENG" run "$T/simple.json" --policy tvm_fuseops --param max_depth=1.5

finish
