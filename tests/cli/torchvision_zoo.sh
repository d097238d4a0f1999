# torchvision_zoo.sh: issue 37's "imports that don't stop", end to end on the
# torchvision models real_models.sh does not use: Swin-T (torch.fx.wrap'ed
# window attention, a rolled and padded window, a mask built by item
# assignment), DenseNet-121, ShuffleNetV2-x0.5, SqueezeNet 1.0, MNASNet 0.5,
# GoogLeNet, Inception v3, ResNeXt-50, Wide ResNet-50, MobileNetV2,
# RegNetX-400MF, EfficientNetV2-S, MobileNetV3-large, ResNet-18 and the
# segmentation models LR-ASPP and DeepLabV3 on MobileNetV3-large (bilinear
# upsampling: F.interpolate and ONNX Resize as matmuls) and the video models
# R3D-18 and R(2+1)D-18 (Conv3d as 2-D convolutions per kernel frame), random
# weights, batch 1, at the small inputs tests/e2e/make_models.py's ZOO gives
# (64x64; Inception 75x75; video 4 frames of 32x32) so that the whole script stays within minutes.
# make_models.py makes each in a temp dir (one Python process), then each
# goes two ways into fuseeng:
#   fx    scripts/export_torch.py (torch.fx)      -> fx.json + fx.safetensors
#   onnx  torch.onnx.export -> fuseeng import     -> onnx.json + onnx.safetensors
# Each is checked with no custom node left, planned under $PLAN_POLICIES,
# and executed with its real weights under fuse_all and gcu_tlf, the outputs
# compared with PyTorch's to |got - ref| <= 1e-4 * (|ref| + rms(ref)) (as
# real_models.sh does). Without torch and torchvision in /usr/bin/python3,
# every check is skipped by name.
. tests/lib.sh
PY=/usr/bin/python3
MODELS="swin_t densenet121 shufflenet_v2_x0_5 squeezenet1_0 mnasnet0_5 googlenet inception_v3
resnext50_32x4d wide_resnet50_2 mobilenet_v2 regnet_x_400mf efficientnet_v2_s mobilenet_v3_large
resnet18 lraspp_mobilenet_v3_large deeplabv3_mobilenet_v3_large r3d_18 r2plus1d_18"
PLAN_POLICIES="tvm_fuseops xla_priority gcu_afe"
EXEC_POLICIES="fuse_all gcu_tlf"
nmod=$(echo $MODELS | wc -w)

checks() {   # checks MODEL PATH: the names of one model's checks on one path
    [ "$2" = onnx ] && echo "$1 onnx: fuseeng import"
    echo "$1 $2: fuseeng check, no custom node"
    echo "$1 $2: planned under $PLAN_POLICIES"
    for p in $EXEC_POLICIES; do echo "$1 $2: run --execute --policy $p matches PyTorch"; done
}

if ! "$PY" -c 'import torch, torchvision, onnx' 2>/dev/null; then
    skip "make_models.py exports the $nmod models" "no torch, torchvision or onnx"
    skip_model_checks "no torch, torchvision or onnx" $MODELS
    skip "swin_t at 224 onnx: imports with no custom node and matches PyTorch under fuse_all" "no torch, torchvision or onnx"
    finish
    exit $?
fi

t_all=$(now)

t0=$(now)
if "$PY" tests/e2e/make_models.py "$T" $MODELS >"$T/make.out" 2>"$T/make.err"; then
    ok "make_models.py exports the $nmod models ($(since "$t0") s)"
    echo "# model  fx-nodes  custom  trace+map-s  write-s  onnx-export-s"
    sed 's/^/# /' "$T/models.tsv"
else
    not_ok "make_models.py exports the $nmod models" "$(tail -n 5 "$T/make.err")"
fi

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
        # check's ops line counts every op, custom ones included
        if "$FUSEENG" check "$M" >"$T/check" 2>"$T/err" && ! grep -q '^  ops .*custom' "$T/check"; then
            nodes=$(awk '$1 == "nodes" { print $2; exit }' "$T/check")
            ok "$m $path: fuseeng check, no custom node ($nodes nodes)"
        else
            not_ok "$m $path: fuseeng check, no custom node" "$(head -c 600 "$T/err")" \
                "$(grep '^  ops' "$T/check")"
        fi
        t0=$(now) bad=
        for p in $PLAN_POLICIES; do
            "$FUSEENG" run "$M" --policy "$p" >"$T/out" 2>"$T/err" ||
                bad="$bad $p: $(head -c 300 "$T/err")"
        done
        if [ -z "$bad" ]; then
            ok "$m $path: planned under $PLAN_POLICIES ($(since "$t0") s)"
        else
            not_ok "$m $path: planned under $PLAN_POLICIES" "$bad"
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
# Swin-T at 224 on the ONNX path: its attention mask (64 windows of 49 x 49)
# is past the importer's fold limit, so the mask's comparison and logical
# not are nodes (compare), computed when the model runs.
name="swin_t at 224 onnx: imports with no custom node and matches PyTorch under fuse_all"
t0=$(now)
if "$PY" tests/e2e/make_models.py "$T" swin_t_224 >"$T/out" 2>"$T/err" &&
    "$FUSEENG" import "$T/swin_t_224/model.onnx" -o "$T/s224.json" --weights-out "$T/s224.safetensors"         >"$T/out" 2>"$T/err" && ! grep -q '"op": *"custom"' "$T/s224.json" &&
    "$FUSEENG" run "$T/s224.json" --policy fuse_all --execute --no-timing --weights "$T/s224.safetensors"         --inputs "$T/swin_t_224/in.safetensors" --expect "$T/swin_t_224/out.safetensors"         --expect-rtol 1e-4 >"$T/exec" 2>>"$T/err"; then
    ok "$name (max err $(max_err "$T/exec"), $(since "$t0") s)"
else
    not_ok "$name" "$(head -c 600 "$T/err")" "$(sed -n '/^outputs/,/^groups/p' "$T/exec" 2>/dev/null | head -c 600)"
fi
echo "# torchvision_zoo.sh: $(since "$t_all") s in all"
finish
