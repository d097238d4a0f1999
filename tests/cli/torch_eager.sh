# torch_eager.sh: fuseeng's kernels against PyTorch, an implementation
# written independently of ours. For every example model and real export
# (symbolic dims lowered to at most 32, models with more than 512 MiB of
# weights skipped: they would dominate the suite's time),
# scripts/torch_eager.py runs the model in PyTorch eager mode and saves its
# random weights, inputs and outputs; `run --execute` with those files and
# --expect must then agree under fuse_all and gcu_tlf, plan and unfused
# reference alike. Then the script's own bad input: exit 2, one line naming
# the file and what is wrong, nothing on stdout.
. tests/lib.sh
PY=/usr/bin/python3
EAGER="$PY scripts/torch_eager.py"

if ! $PY -c 'import torch' 2>/dev/null; then
    skip "PyTorch cross-check" "no torch for $PY (Debian: python3-torch)"
    finish
    exit
fi

# "--dim NAME=V ..." with every dim of model $1 lowered to at most 32
small_dims() {
    $PY -c '
import json, sys
dims = json.load(open(sys.argv[1])).get("dims") or {}
print(" ".join("--dim %s=%d" % (k, min(v, 32)) for k, v in dims.items()))' "$1"
}

for m in examples/models/*.json "$SHARED"/models/*.json; do
    [ -f "$m" ] || continue
    mn=$(basename "$m" .json)
    dims=$(small_dims "$m")
    # shellcheck disable=SC2086
    wb=$("$FUSEENG" check "$m" $dims --json | sed -n 's/.*"weight_bytes": \([0-9]*\).*/\1/p')
    if [ "${wb:-0}" -gt $((512 * 1024 * 1024)) ]; then
        skip "$mn: fuseeng agrees with PyTorch" "$((wb >> 20)) MiB of weights: too slow for the suite"
        continue
    fi
    # shellcheck disable=SC2086
    if ! $EAGER "$m" $dims --save-weights "$T/w" --save-inputs "$T/i" \
            --save-outputs "$T/o" >"$T/eager.out" 2>"$T/eager.err"; then
        not_ok "$mn: PyTorch runs it" "$(head -c 600 "$T/eager.err")"
        continue
    fi
    for p in fuse_all gcu_tlf; do
        # shellcheck disable=SC2086
        "$FUSEENG" run "$m" $dims --policy $p --execute --no-timing --weights "$T/w" \
            --inputs "$T/i" --expect "$T/o" >"$T/out" 2>"$T/err"
        rc=$?
        agree=$(grep -cE '^ +(plan|unfused) .* ok$' "$T/out")
        outs=$(grep -cE '^ +plan ' "$T/out")
        if [ "$rc" -eq 0 ] && [ "$outs" -gt 0 ] && [ "$agree" -eq $((2 * outs)) ]; then
            ok "$mn: $p plan and unfused reference agree with PyTorch ($outs outputs)"
        else
            not_ok "$mn: $p agrees with PyTorch" "exit $rc" "$(grep -A8 '^expected' "$T/out")" \
                "$(head -c 600 "$T/err")"
        fi
    done
done

# The script's bad input.
M=examples/models/resnet50_bottleneck.json
expect_fail "eager: a missing model" 2 'torch_eager: .*nosuch\.json' $EAGER "$T/nosuch.json"
printf '{"format": "fuseeng.model/1", "nodes": [' >"$T/broken.json"
expect_fail "eager: a model that is not JSON" 2 'broken\.json: not JSON' $EAGER "$T/broken.json"
expect_fail "eager: an unknown option" 2 'unknown option --frobnicate' $EAGER $M --frobnicate
expect_fail "eager: a dim the model lacks" 2 'has no dim Q' $EAGER $M --dim Q=4
expect_fail "eager: a malformed dim" 2 '--dim N=x: write NAME=V' $EAGER $M --dim N=x
$EAGER examples/models/gpt2_block.json --dim S=4 --save-weights "$T/gw" >/dev/null 2>&1
expect_fail "eager: weights of another model" 2 "gw: tensor '.*' is not a weight of" \
    $EAGER $M --weights "$T/gw"
head -c 100 "$T/gw" >"$T/short"
expect_fail "eager: a truncated weights file" 2 'short: header length [0-9]+ runs past the end' \
    $EAGER $M --weights "$T/short"
cat >"$T/lost.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "lost",
 "tensors": {"x": {"shape": [4], "dtype": "f32", "kind": "input"}},
 "nodes": [{"name": "r", "op": "relu", "inputs": ["ghost"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
expect_fail "eager: a node whose input nobody produces" 2 "node 'r' waits for inputs nobody produces" \
    $EAGER "$T/lost.json"

# The GPU and torch.compile options: what this PyTorch or machine lacks is
# exit 2 naming it (the runs themselves are tests/bench/gpu_compare.py's,
# on a GPU machine).
expect_fail "eager: an unknown device" 2 '--device tpu: write cpu or cuda' $EAGER $M --device tpu
expect_fail "eager: an unknown compile mode" 2 '--compile fast: write none, default or cudagraphs' \
    $EAGER $M --compile none,fast
if $PY -c 'import sys, torch; sys.exit(hasattr(torch, "compile"))'; then
    expect_fail "eager: --compile without torch.compile" 2 \
        '--compile default: torch.compile is missing in PyTorch 1\.' $EAGER $M --compile default
else
    skip "eager: --compile without torch.compile" "this PyTorch has torch.compile"
fi
if $PY -c 'import sys, torch; sys.exit(torch.cuda.is_available())'; then
    expect_fail "eager: --device cuda without CUDA" 2 \
        '--device cuda: PyTorch .* (was built without CUDA|sees no CUDA device)' $EAGER $M --device cuda
else
    skip "eager: --device cuda without CUDA" "a GPU answers"
fi
expect_ok "eager: --kernels counts a run's ops" '"compile": "none", "kernels": [1-9]' \
    $EAGER $M --kernels --json
finish
