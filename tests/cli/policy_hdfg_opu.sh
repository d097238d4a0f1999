# policy_hdfg_opu.sh: policies/hdfg_opu.lua, seed 002's OPU hardware data flow
# (TVM-OPU fuse_op_hw): on opu_convnet every group holds at most one pad and
# one conv2d, each conv block starts a new group at the flow's root, and each
# group's kernel reads the weights of its ops; on small graphs, the walk
# restarts from the root when an op is not further along the flow, and a
# producer no step accepts (a weight cast) joins its consumer's group, as the
# seed's CollectInputs does.
. tests/lib.sh
M=examples/models/opu_convnet.json

# groups MODEL: the fused groups, one per line, node names separated by spaces.
groups() {
    "$FUSEENG" run "$1" --policy hdfg_opu --json |
        sed -n 's/.*"nodes": \[\([^]]*\)\].*/\1/p' | grep , | tr -d '"' | sed 's/, / /g'
}
expect_groups() {
    name=$1 m=$2 want=$3
    got=$(groups "$m" 2>"$T/gerr")
    if [ "$got" = "$want" ]; then
        ok "$name"
    else
        not_ok "$name" "got:" "$got" "want:" "$want" "stderr: $(head -c 400 "$T/gerr")"
    fi
}

# The groups on opu_convnet. The flow's pad -> ipa -> mul -> add -> compare
# makes each conv block one group, with the pad before it (it folds into the
# convolution's padding) and the ReLU/maximum after it; the pool's pad,
# the pool and its activation are the next group: the engine's kernels take
# one conv2d or pool each, so the walk restarts at the root there. The
# residual block: concat -> pad is the flow's root and next step, and conv7
# cannot take the concat, so it restarts once more.
expect_groups "opu_convnet: the exact groups" "$M" \
"add_pre mul_pre conv1_pad conv1 conv1_scale conv1_shift
conv1_pool_pad conv1_pool conv1_max
conv2_pad conv2 conv2_scale conv2_shift
conv2_pool_pad conv2_pool conv2_relu
conv3_pad conv3 conv3_scale conv3_shift
conv3_pool_pad conv3_pool conv3_max
conv4_pad conv4 conv4_scale conv4_shift conv4_relu
conv5_pad conv5 conv5_scale conv5_shift conv5_max
conv6_pad conv6 conv6_scale conv6_shift conv6_relu
branch_concat conv7_pad
conv7 conv7_scale conv7_shift conv7_residual
conv7_pool conv7_max
conv8_pad conv8 conv8_scale conv8_shift
conv8_pool_pad conv8_pool conv8_relu
conv9_pad conv9 conv9_scale conv9_shift"

# At most one pad and one conv2d per group (the flow has one pad -> ipa path).
bad=$(groups "$M" | awk '{ p = 0; c = 0; for (i = 1; i <= NF; i++) { p += $i ~ /_pad$/; c += $i ~ /^conv[0-9]$/ } if (p > 1 || c > 1) print }')
if [ -z "$bad" ]; then ok "opu_convnet: at most one pad and one conv per group"; else not_ok "pads/convs" "$bad"; fi

# Each new conv block restarts at the root: its pad opens the group.
expect_ok "opu_convnet: 57 nodes in 15 kernels" '^kernels +57 -> 15 \(\+0 extern; 15 fused groups holding 57 nodes' \
    "$FUSEENG" run "$M" --policy hdfg_opu
# The weights of a group's ops are read by its kernel (weights are tensors,
# not nodes: they are in their consumer's group by construction).
expect_ok "opu_convnet: conv2's group reads conv2's weight, scale and shift" \
    'fuse +\[conv2_pad, conv2, conv2_scale, conv2_shift\] +4 ops along the OPU flow \(pad\+conv2d\+mul\+add\); weights read: conv2.weight, conv2.scale, conv2.shift' \
    "$FUSEENG" run "$M" --policy hdfg_opu --explain
expect_ok "opu_convnet: the plan runs on the CPU and matches the reference" \
    'conv9_shift +[0-9.e+-]+ +[0-9.e+-]+ +[0-9.e+-]+ +0  ok' \
    "$FUSEENG" run "$M" --policy hdfg_opu --execute

# Restart: add -> mul -> add follows the flow (add_pre, mul_pre, then add
# after ipa -> mul); the next mul is not reachable from add, so the walk
# restarts at the root, where it is mul_pre, and a new group opens.
cat >"$T/restart.json" <<'EOF'
{"format": "fuseeng.model/1", "name": "restart",
 "tensors": {"x": {"shape": [1, 4, 8, 8], "dtype": "f32", "kind": "input"},
             "w16": {"shape": [4, 4, 3, 3], "dtype": "f16", "kind": "weight"}},
 "nodes": [
  {"name": "wcast", "op": "cast", "inputs": ["w16"], "outputs": ["w"], "attrs": {"dtype": "f32"}},
  {"name": "a1", "op": "add", "inputs": ["x"], "outputs": ["a1"], "attrs": {"scalar": 1}},
  {"name": "m1", "op": "mul", "inputs": ["a1"], "outputs": ["m1"], "attrs": {"scalar": 2}},
  {"name": "a2", "op": "add", "inputs": ["m1"], "outputs": ["a2"], "attrs": {"scalar": 3}},
  {"name": "m2", "op": "mul", "inputs": ["a2"], "outputs": ["m2"], "attrs": {"scalar": 4}},
  {"name": "p", "op": "pad", "inputs": ["m2"], "outputs": ["p"], "attrs": {"pads": [1, 1, 1, 1]}},
  {"name": "conv", "op": "conv2d", "inputs": ["p", "w"], "outputs": ["conv"]}],
 "outputs": ["conv"]}
EOF
# ... and the cast of the conv's weight, an op no step accepts, joins the
# conv's group (CollectInputs).
expect_groups "restart at the root; the weight cast joins its conv" "$T/restart.json" "a1 m1 a2
wcast m2 p conv"
expect_ok "the restart is the flow's: a new group from mul_pre" \
    'fuse +\[a1, m1, a2\] +3 ops along the OPU flow' "$FUSEENG" run "$T/restart.json" --policy hdfg_opu --explain

finish
