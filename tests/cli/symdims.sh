# symdims.sh: symbolic dims stay symbolic through the ops that compute with
# them (issue 37). The registry's arange, trilu and compare and slice bounds
# named by a dim follow --dim; a LLaMA-style block whose positions and causal
# mask are built from its sequence length (tests/e2e/llama_causal.py: arange
# and triu, or a comparison of positions; llama_block.py: tables sliced to
# the length) is exported with a free S on both paths (export_torch.py --dim,
# torch.onnx.export's dynamic_axes then fuseeng import) at S=16, and must
# check and execute at S=24, matching PyTorch run at 24, and plan per-shape
# versions under gcu_dafe. A size that changes with S but is not S is folded
# with a warning naming the node; bad dim attributes stop with exit 2.
. tests/lib.sh
PY=/usr/bin/python3
X=scripts/export_torch.py
E=tests/e2e

# ---- the registry: dim-named attributes, without PyTorch ----
cat >"$T/m.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "symdims", "dims": {"S": 8},
 "tensors": {"x": {"shape": [1, "S", 16], "dtype": "f32", "kind": "input"},
             "tab": {"shape": [32, 16], "dtype": "f32", "kind": "weight"},
             "pos": {"shape": ["S"], "dtype": "i64"},
             "rows": {"shape": ["S", 16], "dtype": "f32"},
             "mask": {"shape": ["S", "S"], "dtype": "bool"}},
 "nodes": [
  {"name": "pos", "op": "arange", "inputs": [], "outputs": ["pos"], "attrs": {"end": "S"}},
  {"name": "posf", "op": "cast", "inputs": ["pos"], "outputs": ["posf"], "attrs": {"dtype": "f32"}},
  {"name": "grid", "op": "expand", "inputs": ["posf"], "outputs": ["grid"], "attrs": {"shape": ["S", "S"]}},
  {"name": "tri", "op": "trilu", "inputs": ["grid"], "outputs": ["tri"], "attrs": {"diagonal": 1}},
  {"name": "cmp", "op": "compare", "inputs": ["tri"], "outputs": ["mask"], "attrs": {"cmp": "gt", "scalar": 0}},
  {"name": "rows", "op": "slice", "inputs": ["tab"], "outputs": ["rows"], "attrs": {"end": "S"}},
  {"name": "xr", "op": "add", "inputs": ["x", "rows"], "outputs": ["xr"]},
  {"name": "s", "op": "matmul", "inputs": ["xr", "xr"], "outputs": ["s"], "attrs": {"transpose_b": true}},
  {"name": "m", "op": "where", "inputs": ["mask", "s"], "outputs": ["out"],
   "attrs": {"scalar": -3.4028235e38, "scalar_index": 1}}
 ],
 "outputs": ["out"]}
JSON
expect_ok "registry: arange, trilu, compare and slice end S check at the file's S" 'dims +S=8' \
    "$FUSEENG" check "$T/m.json"
expect_ok "registry: ... and follow --dim S=20 (declared [S] shapes included)" 'dims +S=20' \
    "$FUSEENG" check "$T/m.json" --dim S=20
expect_ok "registry: they execute at --dim S=20, the plan as the unfused graph" '^ +out +0 +0 .* ok$' \
    "$FUSEENG" run "$T/m.json" --policy fuse_all --execute --budget 0.01 --dim S=20
expect_fail "registry: a slice bound S=40 beyond the table stops with the shapes" 2 \
    "node 'rows' \\(slice\\) output 'rows' is declared \\[40,16\\] f32 but the op produces \\[32,16\\] f32" \
    "$FUSEENG" check "$T/m.json" --dim S=40
bad() {   # bad NAME REGEX SED: the model edited by SED is refused, exit 2
    name=$1 re=$2; sed "$3" "$T/m.json" >"$T/bad.json"
    expect_fail "bad input: $name" 2 "$re" "$FUSEENG" check "$T/bad.json"
}
bad "a dim attribute naming no dim" \
    "node 'pos' \\(arange\\): attrs.end is \"T\", which \"dims\" does not declare; expected an integer or a dim name" \
    's/"attrs": {"end": "S"}}/"attrs": {"end": "T"}}/'
bad "arange without end" "node 'pos' \\(arange\\): attrs.end is missing" \
    's/"outputs": \["pos"\], "attrs": {"end": "S"}/"outputs": ["pos"], "attrs": {"step": 2}/'
bad "an empty arange" "node 'pos' \\(arange\\): is empty: start 9, end 8" \
    's/"attrs": {"end": "S"}}/"attrs": {"start": 9, "end": "S"}}/'
bad "compare without cmp" "node 'cmp' \\(compare\\): attrs.cmp is missing" \
    's/"cmp": "gt", //'
bad "compare with an unknown cmp" "attrs.cmp is \"gte\"; expected one of eq\\|ne\\|lt\\|le\\|gt\\|ge" \
    's/"cmp": "gt"/"cmp": "gte"/'
bad "trilu of a vector" "node 'tri' \\(trilu\\): input \\[8\\] has rank 1" \
    's/"inputs": \["grid"\]/"inputs": ["posf"]/'

# ---- export_torch.py --dim and torch.onnx.export's dynamic_axes ----
if ! "$PY" -c 'import torch, onnx' 2>/dev/null; then
    skip "symbolic dims through both import paths" "no torch/onnx for $PY"
    finish
    exit $?
fi
cat >"$T/onnx_export.py" <<'EOF2'
import sys
import torch
sys.path.insert(0, "tests/e2e")
import llama_block, llama_causal
cls, dim, out = {"causal": (llama_causal.LlamaCausal, 64), "compare": (llama_causal.LlamaCausalCompare, 64),
                 "block": (llama_block.LlamaBlock, 256), "half": (llama_causal.HalfLength, 8)}[sys.argv[1]] + (sys.argv[2],)
torch.manual_seed(0)   # as export_torch.py seeds (--seed 0): the same weights
m = cls().eval()
torch.onnx.export(m, (torch.randn(1, 16, dim),), out, input_names=["x"], output_names=["output"],
                  opset_version=14, dynamic_axes={"x": {1: "S"}, "output": {1: "S"}})
EOF2
for case in causal:LlamaCausal:64:llama_causal compare:LlamaCausalCompare:64:llama_causal block:LlamaBlock:256:llama_block; do
    IFS=: read -r k cls d file <<EOF2
$case
EOF2
    M="$T/$k"
    # PyTorch at S=24: the reference (same seed, so the same weights)
    "$PY" $X $E/$file.py:$cls -o "${M}24.json" --input "x=1xSx$d" --dim S=24 \
        --inputs-out "${M}_in24.safetensors" --expect-out "${M}_out24.safetensors" >/dev/null 2>&1
    check "$k: FX export with --input x=1xSx$d --dim S=16" \
        "$PY" $X $E/$file.py:$cls -o "$M.json" --input "x=1xSx$d" --dim S=16
    if grep -q '"S"' "$M.json" && ! grep -q '"op": "custom"' "$M.json"; then
        ok "$k: FX model keeps S (no custom node)"
    else
        not_ok "$k: FX model keeps S (no custom node)" "$(grep -c '"S"' "$M.json") lines name S"
    fi
    expect_ok "$k: FX model checks at S=24" 'dims +S=24' "$FUSEENG" check "$M.json" --dim S=24
    expect_ok "$k: FX model at S=24 matches PyTorch at S=24 (gcu_tlf)" 'plan +output .* ok$' \
        "$FUSEENG" run "$M.json" --dim S=24 --policy gcu_tlf --execute --budget 0.01 \
        --weights "$M.safetensors" --inputs "${M}_in24.safetensors" --expect "${M}_out24.safetensors"
    check "$k: torch.onnx.export with dynamic_axes S" "$PY" "$T/onnx_export.py" "$k" "$M.onnx"
    check "$k: fuseeng import of it" "$FUSEENG" import "$M.onnx" -o "${M}_onnx.json" --dim S=16
    if grep -q '"end": "S"\|"op": "arange"' "${M}_onnx.json" && ! grep -q '"op": "custom"' "${M}_onnx.json" \
        && ! grep -q 'computes with symbolic dim' "$T/err"; then
        ok "$k: ONNX model keeps S (no custom node, no folded dim)"
    else
        not_ok "$k: ONNX model keeps S (no custom node, no folded dim)" "$(cat "$T/err")"
    fi
    expect_ok "$k: ONNX model at S=24 matches PyTorch at S=24 (fuse_all)" 'plan +output .* ok$' \
        "$FUSEENG" run "${M}_onnx.json" --dim S=24 --policy fuse_all --execute --budget 0.01 \
        --weights "${M}_onnx.safetensors" --inputs "${M}_in24.safetensors" --expect "${M}_out24.safetensors"
done

# Per-shape plan versions (seed 004's DAFE) on the imported LLM, and the
# table's plan for S=24 run against PyTorch.
M="$T/causal"
expect_ok "gcu_dafe: a plan per S bucket of the imported block" '3 buckets of S' \
    "$FUSEENG" run "${M}_onnx.json" --policy gcu_dafe --param dim=S --dim S=8,32,512 --plan-out "$T/table.json"
expect_ok "gcu_dafe: the table's plan for S=24 matches PyTorch" 'plan +output .* ok$' \
    "$FUSEENG" run "${M}_onnx.json" --plan "$T/table.json" --dim S=24 --execute --budget 0.01 \
    --weights "${M}_onnx.safetensors" --inputs "${M}_in24.safetensors" --expect "${M}_out24.safetensors"

# ---- sizes that change with S but are not S: folded, with a warning ----
"$PY" $X $E/llama_causal.py:DataDependentLength -o "$T/dd.json" --input x=1xSx8 --dim S=16 >/dev/null 2>"$T/err"
if grep -q "warning: node getitem_1.s1 (slice): attrs.end changes with S but is not a dim: .* folded to the export's value" "$T/err"; then
    ok "FX: a length computed from the data is folded with a warning naming the node"
else
    not_ok "FX: a length computed from the data is folded with a warning naming the node" "$(cat "$T/err")"
fi
"$PY" $X $E/llama_causal.py:HalfLength -o "$T/half.json" --input x=1xSx8 --dim S=16 >/dev/null 2>"$T/err"
if grep -q "warning: node getitem.s1 (slice): attrs.end changes with S but is not a dim: it is 7 at S=15 (it is 8 at S=16)" "$T/err"; then
    ok "FX: S // 2 is folded with a warning naming the node and both values"
else
    not_ok "FX: S // 2 is folded with a warning naming the node and both values" "$(cat "$T/err")"
fi
"$PY" "$T/onnx_export.py" half "$T/half.onnx" >/dev/null 2>&1
"$FUSEENG" import "$T/half.onnx" -o "$T/half_onnx.json" --dim S=16 >/dev/null 2>"$T/err"
if grep -q "warning: node '/Div' (Div) computes with symbolic dim 'S' in a way no dim name can say: folded to S=16 there" "$T/err"; then
    ok "ONNX: S // 2 is folded with a warning naming the node"
else
    not_ok "ONNX: S // 2 is folded with a warning naming the node" "$(cat "$T/err")"
fi
cat >"$T/pairs.py" <<'EOF2'
import torch.nn as nn


class Pairs(nn.Module):
    """Refuses an odd S; s // 2 has no dim name but is a reshape's one -1."""

    def forward(self, x):
        b, s, d = x.shape
        return x.view(b, s // 2, 2 * d).relu().view(b, s, d)
EOF2
"$PY" $X "$T/pairs.py:Pairs" -o "$T/pairs.json" --input x=1xSx8 --dim S=16 >/dev/null 2>"$T/err"
if grep -q '"shape": \[1, -1, 16\]' "$T/pairs.json" && grep -q '"shape": \[1, "S", 8\]' "$T/pairs.json" &&
    [ ! -s "$T/err" ]; then
    ok "FX: a module refusing S - 1 is traced at another S; s // 2 in a reshape becomes its -1"
else
    not_ok "FX: a module refusing S - 1 is traced at another S; s // 2 in a reshape becomes its -1" \
        "$(cat "$T/err" "$T/pairs.json" 2>&1 | head -c 600)"
fi
expect_ok "FX: ... and the model checks at another even S" 'dims +S=24' "$FUSEENG" check "$T/pairs.json" --dim S=24
nofile() {   # nofile NAME REGEX ARGS...: export_torch.py refuses, writes nothing
    name=$1 re=$2; shift 2
    expect_fail "$name" 2 "$re" "$PY" $X "$@" -o "$T/no.json"
    [ -e "$T/no.json" ] && not_ok "$name: no file written" || ok "$name: no file written"
}
nofile "--dim that no --input names" "--dim T: no --input names it" \
    $E/llama_causal.py:LlamaCausal --input x=1xSx64 --dim S=16 --dim T=4
nofile "a dim name in --input without --dim" "the shape must be positive integers or dims given with --dim; S is neither \\(give its value with --dim S=N\\)" \
    $E/llama_causal.py:LlamaCausal --input x=1xSx64
nofile "--dim with a value that is not positive" "--dim S=0: expected NAME=VALUE with a positive integer" \
    $E/llama_causal.py:LlamaCausal --input x=1xSx64 --dim S=0
finish
