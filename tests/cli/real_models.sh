# real_models.sh: issue 15 end to end on real models. ResNet-50,
# MobileNetV3-small, ViT-B/16, ConvNeXt-tiny, EfficientNet-B0, RegNetY-400MF
# (torchvision,
# random weights, batch 1, 224x224) and the LLaMA-style block of
# tests/e2e/llama_block.py are made in a temp dir by tests/e2e/make_models.py
# (one Python process), then each goes two ways into fuseeng:
#   fx    scripts/export_torch.py (torch.fx)      -> fx.json + fx.safetensors
#   onnx  torch.onnx.export -> fuseeng import     -> onnx.json + onnx.safetensors
# Each is checked, planned under every shipped policy, and executed with its
# real weights under fuse_all and gcu_tlf, the outputs compared with
# PyTorch's (in.safetensors / out.safetensors serve both paths: the ONNX
# inputs and outputs carry the FX names). Tolerance: every element within
# |got - ref| <= 1e-4 * (|ref| + rms(ref)) (--expect-rtol 1e-4, ten times
# tighter than --expect's f32 default); the largest error measured is
# 3.5e-6 of that scale (ViT-B/16), so there is a margin of 25x. Each check
# names the largest errors and its wall time. No group may fall back to its
# ops one by one at run time (a fused kernel that failed: RegNet's grouped
# conv with a whole-row epilogue did, issue 37).
# Without torch and torchvision in /usr/bin/python3, every check is skipped.
. tests/lib.sh
PY=/usr/bin/python3
MODELS="resnet50 mobilenet_v3_small vit_b_16 convnext_tiny efficientnet_b0 regnet_y_400mf llama_block"
EXEC_POLICIES="fuse_all gcu_tlf"
POLICIES=$("$FUSEENG" policies | awk '{print $1}')
npol=$(echo "$POLICIES" | wc -w)

checks() {   # checks MODEL PATH: the names of one model's checks on one path
    [ "$2" = onnx ] && echo "$1 onnx: fuseeng import"
    echo "$1 $2: fuseeng check"
    echo "$1 $2: planned under all $npol shipped policies"
    for p in $EXEC_POLICIES; do echo "$1 $2: run --execute --policy $p matches PyTorch"; done
}

if ! "$PY" -c 'import torch, torchvision' 2>/dev/null; then
    skip "make_models.py exports the seven models" "no torch"
    skip_model_checks "no torch" $MODELS
    finish
    exit $?
fi

t_all=$(now)

t0=$(now)
if "$PY" tests/e2e/make_models.py "$T" $MODELS >"$T/make.out" 2>"$T/make.err"; then
    ok "make_models.py exports the seven models ($(since "$t0") s)"
    echo "# model  fx-nodes  custom  trace+map-s  write-s  onnx-export-s"
    sed 's/^/# /' "$T/models.tsv"
else
    not_ok "make_models.py exports the seven models" "$(tail -n 5 "$T/make.err")"
fi

# The plan's largest errors against the expected outputs (abs rel), from
# run --execute's "expected" table (plan and unfused rows per output).
for m in $MODELS; do
    d="$T/$m"
    for path in fx onnx; do
        M="$d/$path.json" W="$d/$path.safetensors"
        if [ "$path" = onnx ]; then
            t0=$(now)
            if "$FUSEENG" import "$d/model.onnx" -o "$M" --weights-out "$W" >"$T/out" 2>"$T/err"; then
                ok "$m onnx: fuseeng import ($(since "$t0") s)"
            else
                not_ok "$m onnx: fuseeng import" "$(head -c 600 "$T/err")"
            fi
        fi
        t0=$(now)
        if "$FUSEENG" check "$M" >"$T/check" 2>"$T/err"; then
            nodes=$(awk '$1 == "nodes" { print $2; exit }' "$T/check")
            ok "$m $path: fuseeng check ($nodes nodes, $(since "$t0") s)"
        else
            not_ok "$m $path: fuseeng check" "$(head -c 600 "$T/err")"
        fi
        # Planning is cheap; benchmark_fusion measures candidates, kept to 1 s.
        t0=$(now) bad=
        for p in $POLICIES; do
            "$FUSEENG" run "$M" --policy "$p" --bench-budget 1 >"$T/out" 2>"$T/err" ||
                bad="$bad $p: $(head -c 300 "$T/err")"
        done
        if [ -z "$bad" ]; then
            ok "$m $path: planned under all $npol shipped policies ($(since "$t0") s)"
        else
            not_ok "$m $path: planned under all $npol shipped policies" "$bad"
        fi
        for p in $EXEC_POLICIES; do
            t0=$(now)
            if "$FUSEENG" run "$M" --policy "$p" --execute --no-timing --weights "$W" \
                --inputs "$d/in.safetensors" --expect "$d/out.safetensors" --expect-rtol 1e-4 \
                >"$T/exec" 2>"$T/err" && ! grep -q "fell back at run time" "$T/exec"; then
                ok "$m $path: run --execute --policy $p matches PyTorch (max err $(max_err "$T/exec"), $(since "$t0") s)"
            else
                not_ok "$m $path: run --execute --policy $p matches PyTorch" \
                    "$(head -c 600 "$T/err")" "$(sed -n '/^outputs/,/^groups/p' "$T/exec" | head -c 800)" \
                    "$(grep -m1 "fell back at run time" "$T/exec" | head -c 600)"
            fi
        done
    done
done
echo "# real_models.sh: $(since "$t_all") s in all"
finish
