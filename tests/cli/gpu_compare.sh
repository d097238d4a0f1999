# gpu_compare.sh: tests/bench/gpu_compare.py, the driver that sets fuseeng's
# plans against PyTorch eager and torch.compile on the card, tried here on
# the CPU (--device cpu) with PyTorch eager: a small model every step runs,
# one whose custom op fuseeng has no kernel for (its fuseeng cells fail,
# PyTorch's do not, the run goes on), the JSON it writes and --merge of it,
# the time limit, and bad options. The GPU run itself is in docs/cuda.md.
. tests/lib.sh
PY=/usr/bin/python3
GC="$PY tests/bench/gpu_compare.py"
NAMES="table of a small model|a failing model is a row and a note|targets printed|compile modes skipped with a note|JSON written|--merge prints the same table|time limit|bad options"

if ! $PY -c 'import torch' 2>/dev/null; then
    echo "$NAMES" | tr '|' '\n' | while read -r c; do
        skip "gpu_compare: $c" "no torch for $PY (Debian: python3-torch)"
    done
    finish
    exit $?
fi

# x -> matmul -> +b -> gelu -> matmul -> +x: fusable, and quick at every step
cat >"$T/mlp.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "mlp",
 "tensors": {"x": {"shape": [16, 64], "dtype": "f32", "kind": "input"},
             "w1": {"shape": [64, 128], "dtype": "f32", "kind": "weight"},
             "b1": {"shape": [128], "dtype": "f32", "kind": "weight"},
             "w2": {"shape": [128, 64], "dtype": "f32", "kind": "weight"}},
 "nodes": [{"name": "fc1", "op": "matmul", "inputs": ["x", "w1"], "outputs": ["h"]},
           {"name": "bias", "op": "add", "inputs": ["h", "b1"], "outputs": ["hb"]},
           {"name": "act", "op": "gelu", "inputs": ["hb"], "outputs": ["a"]},
           {"name": "fc2", "op": "matmul", "inputs": ["a", "w2"], "outputs": ["o"]},
           {"name": "res", "op": "add", "inputs": ["o", "x"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
no_kernel_model "$T/mystery.json"

$GC "$T/mlp.json" "$T/mystery.json" --device cpu --policy no_fusion --policy fuse_all \
    --budget 0.001 --torch-budget 0.05 --modes none,cudagraphs --max-seconds 120 \
    --json "$T/gc.json" >"$T/gc.out" 2>"$T/gc.err"
rc=$?
num='[0-9]+\.[0-9]+'
if [ "$rc" -eq 0 ] && grep -Eq "^mlp +(no_fusion|fuse_all) +$num +$num +${num}x +${num}x +- +$num +- +- +- +$num +- +[0-9]+ +[0-9]+" "$T/gc.out" &&
    grep -Eq "^geomean: speedup over unfused ${num}x \(as CUDA graphs -; ceiling ${num}x\)" "$T/gc.out" &&
    $PY -c 'import json, sys; r = json.load(open(sys.argv[1]))["models"][0]; c = [p["ceiling"] for p in r["policies"].values()]; sys.exit(0 if c and all(x > 1 for x in c) else 1)' "$T/gc.json"; then
    ok "gpu_compare: table of a small model"
else
    not_ok "gpu_compare: table of a small model" "exit $rc" "$(head -c 1500 "$T/gc.out")" \
        "$(head -c 600 "$T/gc.err")"
fi
if grep -Eq "^mystery +failed +- +- +- +- +- +$num " "$T/gc.out" &&
    grep -Eq "^note: mystery: fuseeng fuse_all: exit 2: .*'odd'" "$T/gc.out"; then
    ok "gpu_compare: a failing model is a row and a note"
else
    not_ok "gpu_compare: a failing model is a row and a note" "$(head -c 1500 "$T/gc.out")"
fi
if [ "$(grep -c '^target: ' "$T/gc.out")" -eq 4 ] && grep -q '^geomean: ' "$T/gc.out" &&
    grep -Eq '^target: faster than PyTorch eager on every model +(met|missed) ' "$T/gc.out"; then
    ok "gpu_compare: targets printed"
else
    not_ok "gpu_compare: targets printed" "$(grep -E '^(target|geomean)' "$T/gc.out")"
fi
check "gpu_compare: compile modes skipped with a note" \
    grep -Eq '^note: PyTorch --compile cudagraphs skipped: (CUDA graphs need --device cuda|torch.compile is missing)' \
    "$T/gc.out"
check "gpu_compare: JSON written" $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "fuseeng.gpu_compare/1" and d["device"] == "cpu", d["format"]
m = {r["model"]: r for r in d["models"]}
assert m["mlp"]["policies"]["fuse_all"]["plan_ms"] > 0, m["mlp"]
assert m["mlp"]["torch"]["none"]["ms"] > 0 and m["mlp"]["torch"]["none"]["kernels"] > 0
assert "error" in m["mystery"]["policies"]["fuse_all"]
assert len(d["summary"]["targets"]) == 4' "$T/gc.json"
$GC --merge "$T/gc.json" >"$T/merged.out" 2>&1
sed -n '/^model /,$p' "$T/gc.out" >"$T/table.out"
check "gpu_compare: --merge prints the same table" cmp "$T/table.out" "$T/merged.out"

start=$(date +%s)
$GC "$T/mlp.json" "$T/mlp.json" --device cpu --max-seconds 4 >"$T/late.out" 2>&1
if [ $(($(date +%s) - start)) -le 15 ] &&
    [ "$(grep -c '^note: mlp: not run: the time limit was reached' "$T/late.out")" -ge 1 ]; then
    ok "gpu_compare: time limit"
else
    not_ok "gpu_compare: time limit" "$(tail -5 "$T/late.out")"
fi

bad=0
for args in "--device tpu" "--modes none,fast" "--budget soon" "$T/nosuch.json" "--frobnicate"; do
    # shellcheck disable=SC2086
    $GC $args >"$T/bad.out" 2>"$T/bad.err"
    if [ $? -ne 2 ] || [ -s "$T/bad.out" ] || ! grep -q '^gpu_compare: ' "$T/bad.err"; then
        bad=1
        echo "# $args: $(cat "$T/bad.err")"
    fi
done
if [ "$bad" -eq 0 ]; then ok "gpu_compare: bad options"; else not_ok "gpu_compare: bad options"; fi
finish
