# aten_customs.sh: what real exports leave as custom nodes runs on the CPU:
# contiguous / clone, torch.gather and hardswish / hardsigmoid (and their
# in-place forms) beside the first-class hardswish and hardsigmoid ops,
# which also fuse (a register pass; a conv2d's and a pool's epilogue).
# run --execute under fuse_all and no_fusion equals the unfused reference;
# bench and profile draw gather indices in range (the dims gathered along
# are narrower than the default index range of 16); an index out of range,
# or a gather the kernel refuses, is a clear error naming the node (exit 2).
. tests/lib.sh
Q="--budget 0.01"

cat >"$T/customs.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "aten-customs",
 "tensors": {"x": {"shape": [4, 5], "dtype": "f32", "kind": "input"},
             "w": {"shape": [5], "dtype": "f32", "kind": "weight"},
             "cols": {"shape": [4, 64], "dtype": "i64", "kind": "input"},
             "rows": {"shape": [16, 5], "dtype": "i32", "kind": "input"},
             "xc": {"shape": [4, 5], "dtype": "f32"},
             "hs": {"shape": [4, 5], "dtype": "f32"},
             "hg": {"shape": [4, 5], "dtype": "f32"},
             "cl": {"shape": [4, 5], "dtype": "f32"},
             "g1": {"shape": [4, 64], "dtype": "f32"},
             "g0": {"shape": [16, 5], "dtype": "f32"}},
 "nodes": [
  {"name": "scale", "op": "mul", "inputs": ["x", "w"], "outputs": ["xw"]},
  {"name": "act", "op": "hardswish", "inputs": ["xw"], "outputs": ["a"]},
  {"name": "gate", "op": "hardsigmoid", "inputs": ["a"], "outputs": ["b"]},
  {"name": "prod", "op": "mul", "inputs": ["a", "b"], "outputs": ["ab"]},
  {"name": "contig", "op": "custom", "inputs": ["ab"], "outputs": ["xc"],
   "attrs": {"aten": "contiguous.default", "pattern": "injective",
             "args": {"memory_format": "torch.contiguous_format"}}},
  {"name": "hsw", "op": "custom", "inputs": ["xc"], "outputs": ["hs"],
   "attrs": {"aten": "hardswish.default", "pattern": "elemwise"}},
  {"name": "hsg", "op": "custom", "inputs": ["hs"], "outputs": ["hg"],
   "attrs": {"aten": "hardsigmoid_.default", "pattern": "elemwise"}},
  {"name": "cln", "op": "custom", "inputs": ["hg"], "outputs": ["cl"],
   "attrs": {"aten": "clone.default", "pattern": "injective", "args": {"memory_format": null}}},
  {"name": "pick_cols", "op": "custom", "inputs": ["cl", "cols"], "outputs": ["g1"],
   "attrs": {"aten": "gather.default", "pattern": "injective", "args": {"dim": 1, "sparse_grad": false}}},
  {"name": "pick_rows", "op": "custom", "inputs": ["cl", "rows"], "outputs": ["g0"],
   "attrs": {"aten": "gather.default", "pattern": "injective", "args": {"dim": -2}}}
 ],
 "outputs": ["g1", "g0", "ab"]}
JSON

# the executor's own check: every output within tolerance of the reference
for p in fuse_all no_fusion; do
    expect_ok "customs under $p: --execute equals the reference" '^ +g0 +.* ok$' \
        "$FUSEENG" run "$T/customs.json" --policy $p --execute $Q
    if grep -Eq '^ +g1 +.* ok$' "$T/out" && grep -Eq '^ +ab +.* ok$' "$T/out" &&
        ! grep -q MISMATCH "$T/out"; then
        ok "customs under $p: every output ok"
    else
        not_ok "customs under $p: every output ok" "$(cat "$T/out")"
    fi
done
expect_ok "bench runs the customs" 'speedup +[0-9.]+x' \
    "$FUSEENG" bench "$T/customs.json" --policy fuse_all $Q
expect_ok "profile runs the customs" 'wrote .*p\.json' \
    "$FUSEENG" profile "$T/customs.json" --policy fuse_all -o "$T/p.json" $Q

# The first-class ops fuse: one fused_rows group, in registers where the
# build has vector programs, equal to the reference.
cat >"$T/hard.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "hard-ops",
 "tensors": {"x": {"shape": [64, 96], "dtype": "f32", "kind": "input"},
             "w": {"shape": [96], "dtype": "f32", "kind": "weight"}},
 "nodes": [
  {"name": "act", "op": "hardswish", "inputs": ["x"], "outputs": ["a"]},
  {"name": "scale", "op": "mul", "inputs": ["a", "w"], "outputs": ["s"]},
  {"name": "gate", "op": "hardsigmoid", "inputs": ["s"], "outputs": ["g"]},
  {"name": "out", "op": "mul", "inputs": ["g", "x"], "outputs": ["y"]}
 ],
 "outputs": ["y"]}
JSON
expect_ok "hardswish and hardsigmoid fuse into one group" \
    '^ +0 +hardswish\+mul\+hardsigmoid\+mul +4 +[0-9.]+ +fused_rows' \
    "$FUSEENG" run "$T/hard.json" --policy fuse_all --execute $Q
grep -Eq '^ +y +.* ok$' "$T/out" && ok "... and equal the reference" ||
    not_ok "... and equal the reference" "$(cat "$T/out")"
# MobileNetV3's pattern: conv2d + batch_norm + hardswish, a squeeze-excite
# hardsigmoid after a pool; the activations run as epilogues.
cat >"$T/mnv3.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "mnv3-block",
 "tensors": {"x": {"shape": [2, 8, 12, 12], "dtype": "f32", "kind": "input"},
             "w": {"shape": [16, 8, 3, 3], "dtype": "f32", "kind": "weight"},
             "g": {"shape": [16], "dtype": "f32", "kind": "weight"},
             "b": {"shape": [16], "dtype": "f32", "kind": "weight"},
             "m": {"shape": [16], "dtype": "f32", "kind": "weight"},
             "v": {"shape": [16], "dtype": "f32", "kind": "weight"}},
 "nodes": [
  {"name": "conv", "op": "conv2d", "inputs": ["x", "w"], "outputs": ["c"], "attrs": {"padding": 1}},
  {"name": "bn", "op": "batch_norm", "inputs": ["c", "g", "b", "m", "v"], "outputs": ["n"]},
  {"name": "act", "op": "hardswish", "inputs": ["n"], "outputs": ["a"]},
  {"name": "pool", "op": "avg_pool2d", "inputs": ["a"], "outputs": ["p"], "attrs": {"kernel": 2}},
  {"name": "se", "op": "hardsigmoid", "inputs": ["p"], "outputs": ["y"]}
 ],
 "outputs": ["y"]}
JSON
expect_ok "conv2d + batch_norm + hardswish: hardswish in the conv's epilogue" \
    'matmul_blocked: .*epilogue \(2 ops: batch_norm, hardswish\)' \
    "$FUSEENG" run "$T/mnv3.json" --policy fuse_all --execute $Q
grep -q 'epilogue (1 ops: hardsigmoid) on each pooled plane' "$T/out" && grep -Eq '^ +y +.* ok$' "$T/out" &&
    ok "... hardsigmoid in the pool's, and equal to the reference" ||
    not_ok "... hardsigmoid in the pool's, and equal to the reference" "$(cat "$T/out")"
expect_ok "fuseeng ops lists hardswish" \
    '^hardswish +elemwise +1 +5 +2 +- +x \* hardsigmoid\(x\)$' "$FUSEENG" ops hardswish
expect_ok "fuseeng ops lists hardsigmoid" \
    '^hardsigmoid +elemwise +1 +4 +1 +- +min\(max\(x \+ 3, 0\), 6\) / 6$' "$FUSEENG" ops hardsigmoid

# Bad input: an index made out of range (a full() of 8 gathering along a
# dim of size 8) stops the run naming the node and the index; nothing is
# printed on stdout.
cat >"$T/oob.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "gather-oob",
 "tensors": {"x": {"shape": [4, 8], "dtype": "f32", "kind": "input"},
             "idx": {"shape": [4, 3], "dtype": "i64"},
             "g": {"shape": [4, 3], "dtype": "f32"}},
 "nodes": [
  {"name": "fill", "op": "custom", "inputs": [], "outputs": ["idx"],
   "attrs": {"aten": "full.default", "pattern": "opaque",
             "args": {"size": [4, 3], "fill_value": 8, "dtype": "i64"}}},
  {"name": "pick", "op": "custom", "inputs": ["x", "idx"], "outputs": ["g"],
   "attrs": {"aten": "gather.default", "pattern": "injective", "args": {"dim": -1}}}
 ],
 "outputs": ["g"]}
JSON
re="oob\.json: .*node 'pick' \(aten 'gather\.default'\): index 8 \(element 0 of the index\) is out of range for dim 1 of size 8"
expect_fail "gather: an index out of range (run --execute)" 2 "$re" \
    "$FUSEENG" run "$T/oob.json" --policy fuse_all --execute $Q
expect_fail "gather: an index out of range (bench)" 2 "$re" \
    "$FUSEENG" bench "$T/oob.json" --policy no_fusion $Q

# A gather the kernel refuses is named before anything runs.
sed 's/"shape": \[4, 3\], "dtype": "i64"}/"shape": [12], "dtype": "i64"}/; s/"size": \[4, 3\]/"size": [12]/' \
    "$T/oob.json" >"$T/rank.json"
sed -i 's/"g": {"shape": \[4, 3\]/"g": {"shape": [12]/' "$T/rank.json"
expect_fail "gather: an index of another rank" 2 \
    "rank\.json: cannot execute: node 'pick' \(aten 'gather\.default'\): the index \[12\] must have the input \[4,8\]'s rank" \
    "$FUSEENG" run "$T/rank.json" --policy fuse_all --execute $Q

finish
