# import.sh: `fuseeng import` of ONNX models (docs/import.md): tiny models of
# every mapped operator family import and check clean (and, where the
# executor takes weights and inputs, compute what numpy and torch compute);
# every class of bad input is one error naming the file and the node or
# tensor, exit 2, nothing on stdout and no output file left behind. The
# models are made by tests/tools/onnx_cases.py with Debian's python3-onnx.
. tests/lib.sh

onnx_cases "ONNX import"

# Execution against the reference needs run --execute --weights/--inputs/--expect.
if "$FUSEENG" help run 2>&1 | grep -q -- '--expect'; then EXEC=1; else EXEC=0; fi

while read -r cs args; do
    # shellcheck disable=SC2086
    if ! "$FUSEENG" import "$C/$cs.onnx" -o "$C/$cs.json" $args >"$T/out" 2>"$T/err"; then
        not_ok "import $cs" "$(head -c 600 "$T/err")"
        continue
    fi
    if [ -s "$T/out" ] || ! grep -q "^imported .*$cs.onnx" "$T/err" || [ ! -f "$C/$cs.safetensors" ]; then
        not_ok "import $cs: summary on stderr, model and weights written" "$(head -c 600 "$T/err")"
        continue
    fi
    check "import $cs: the model checks" "$FUSEENG" check "$C/$cs.json"
    [ "$cs" = custom ] && continue   # the CPU kernels cannot run a custom Softplus
    if [ "$EXEC" = 1 ]; then
        # shellcheck disable=SC2086
        check "import $cs: fuse_all computes what numpy/torch compute" \
            "$FUSEENG" run "$C/$cs.json" $args --policy fuse_all --execute \
            --weights "$C/$cs.safetensors" --inputs "$C/$cs.in.safetensors" \
            --expect "$C/$cs.out.safetensors"
    else
        skip "import $cs: executed against the reference" "run has no --expect yet"
    fi
done <"$C/cases.txt"

# What the import made of the ops (one op each way, not the whole table).
grep -q '"op": "hardsigmoid"' "$C/activations.json" && grep -q '"scalar": 0.2' "$C/activations.json" &&
    ok "HardSigmoid: PyTorch's alpha and beta give hardsigmoid, others mul/add/clip" ||
    not_ok "HardSigmoid: PyTorch's alpha and beta give hardsigmoid, others mul/add/clip"
grep -q '"pads": \[1, 1, 0, 2\]' "$C/conv.json" &&
    ok "Conv: asymmetric pads become a pad node in torch order" ||
    not_ok "Conv: asymmetric pads become a pad node in torch order" "$(grep -n pads "$C/conv.json")"
tr -d ' \n' <"$C/fold.json" >"$T/fold.flat"
grep -q '"dims":{"N":2}' "$T/fold.flat" && grep -q '"shape":\["N",24\]' "$T/fold.flat" &&
    ! grep -q '"op": "gather"' "$C/fold.json" &&
    ok "Shape -> Gather -> Concat -> Reshape folds; the symbolic dim stays a dim name" ||
    not_ok "Shape -> Gather -> Concat -> Reshape folds; the symbolic dim stays a dim name" "$(cat "$C/fold.json")"
grep -q '"op": "where"' "$C/tables.json" && ! grep -Eq '"op": "(cos|custom)"' "$C/tables.json" &&
    ok "Range, Einsum, Cos and Trilu on constants fold into one weight" ||
    not_ok "Range, Einsum, Cos and Trilu on constants fold into one weight" "$(grep '"op"' "$C/tables.json")"
expect_fail "a node computing with a symbolic dim fixes it there, with a warning naming it" 0 \
    "warning: node '.*' \(Cast\) computes with symbolic dim 'S' in a way no dim name can say: folded to S=3 there" \
    "$FUSEENG" import "$C/dyn.onnx" -o "$T/dyn.json" --dim S=3
expect_fail "an op without a mapping is a custom node with a warning naming it" 0 \
    "warning: .*custom\.onnx: node 'Softplus_0' \(Softplus\): no mapping .* custom node" \
    "$FUSEENG" import "$C/custom.onnx" -o "$T/custom2.json"
grep -q '"op": "custom"' "$T/custom2.json" && ok "the custom node is in the model" ||
    not_ok "the custom node is in the model"
"$FUSEENG" import "$C/fold.onnx" -o "$T/fold1.json" 2>"$T/err"
grep -q "note: symbolic dim 'N' is a model dim, default 1 (set it with --dim NAME=V)" "$T/err" &&
    tr -d ' \n' <"$T/fold1.json" | grep -q '"dims":{"N":1}' &&
    ok "a symbolic dim defaults to 1, with a note" || not_ok "a symbolic dim defaults to 1, with a note" "$(cat "$T/err")"
"$FUSEENG" import "$C/conv.onnx" -o "$T/conv.json" --weights-out "$T/w.safetensors" 2>/dev/null
[ -f "$T/w.safetensors" ] && [ ! -f "$T/conv.safetensors" ] && ok "--weights-out names the weight file" ||
    not_ok "--weights-out names the weight file"

# ---- bad input: one error naming the file and place, exit 2, no files ----
bad() {   # bad NAME FILE 'regex'
    rm -f "$T/bad.json" "$T/bad.safetensors"
    expect_fail "$1" 2 "$3" "$FUSEENG" import "$2" -o "$T/bad.json"
    if [ -e "$T/bad.json" ] || [ -e "$T/bad.safetensors" ]; then
        not_ok "$1: no output file left behind" "$(ls "$T")"
    fi
}
head -c 300 "$C/conv.onnx" >"$T/truncated.onnx"
bad "a truncated file" "$T/truncated.onnx" 'truncated\.onnx: not a readable ONNX model: .*truncated'
bad "not ONNX (a model JSON)" "$C/conv.json" 'conv\.json: not a readable ONNX model'
: >"$T/empty.onnx"
bad "an empty file" "$T/empty.onnx" 'empty\.onnx: not a readable ONNX model: the file is empty'
bad "a missing file" "$T/nothere.onnx" 'nothere\.onnx: cannot read the ONNX model'
bad "an opset we do not map" "$C/bad_opset.onnx" 'bad_opset\.onnx: opset 7 is not supported'
# an operator of another domain is a custom node named DOMAIN.Op, which a
# registered kernel can run (user_kernels.sh), never mapped by its bare name
if "$FUSEENG" import "$C/bad_domain.onnx" -o "$T/domain.json" >"$T/out" 2>"$T/err" &&
        grep -q "node 'fused' (com.microsoft.FusedGemm): no mapping .*registered for 'com.microsoft.FusedGemm'" "$T/err" &&
        grep -q '"onnx_op": *"com.microsoft.FusedGemm"' "$T/domain.json"; then
    ok "an operator of another domain becomes the custom node com.microsoft.FusedGemm"
else
    not_ok "an operator of another domain becomes the custom node com.microsoft.FusedGemm" \
        "$(head -c 400 "$T/err")"
fi
bad "control flow (If)" "$C/bad_if.onnx" "bad_if\.onnx: node 'branch' \(If, #0\): control flow"
bad "a dtype we do not have" "$C/bad_dtype.onnx" \
    "bad_dtype\.onnx: initializer 'u8_weight' has type UINT8, which is not supported"
bad "weights in an external file" "$C/bad_external.onnx" \
    "bad_external\.onnx: initializer 'w_ext' keeps its data in an external file"
bad "a declared shape our inference disagrees with" "$C/bad_shape.onnx" \
    "bad_shape\.onnx: node 'act' \(relu\) output 'y' is declared \[2,4\] f32 but the op produces \[2,3\]"
bad "an unmapped op whose output shape is unknown" "$C/bad_noshape.onnx" \
    "bad_noshape\.onnx: node 'nz' \(NonZero, #0\): no mapping .* run ONNX shape inference"
bad "a reshape that does not fit" "$C/bad_reshape.onnx" \
    "bad_reshape\.onnx: node 'rs' \(Reshape, #0\): cannot reshape 6 elements"
bad "Resize with a mode ONNX does not define" "$C/bad_resize_area.onnx" \
    "bad_resize_area\.onnx: node 'rz' \(Resize, #0\): mode 'area' is not one ONNX defines"
bad "a 3-D AveragePool with asymmetric pads not counted" "$C/bad_pool3d_asym.onnx" \
    "bad_pool3d_asym\.onnx: node 'ap3' \(AveragePool, #0\): asymmetric pads that are not counted"
bad "a 3-D MaxPool padded over half its kernel" "$C/bad_pool3d_pads.onnx" \
    "bad_pool3d_pads\.onnx: node 'mp3' \(MaxPool, #0\): pads 2 exceed half the kernel"
bad "TopK with k over the axis" "$C/bad_topk_k.onnx" \
    "bad_topk_k\.onnx: node 'tk' \(TopK, #0\): k is 4; it must be 1 to 3"
bad "TopK with k computed at run time" "$C/bad_topk_dyn.onnx" \
    "bad_topk_dyn\.onnx: node 'tk' \(TopK, #0\): k must be a constant"
bad "Resize with tf_crop_and_resize" "$C/bad_resize_crop.onnx" \
    "bad_resize_crop\.onnx: node 'rz' \(Resize, #0\): coordinate_transformation_mode 'tf_crop_and_resize' is not supported"
bad "Resize of the channel axis" "$C/bad_resize_channels.onnx" \
    "bad_resize_channels\.onnx: node 'rz' \(Resize, #0\): resizes axis 1 of a rank-4 input"
bad "Resize of an integer tensor" "$C/bad_resize_int.onnx" \
    "bad_resize_int\.onnx: node 'rz' \(Resize, #0\): resizes a i64 tensor; only floating-point"
bad "ScatterND with an index out of range" "$C/bad_scatternd_range.onnx" \
    "bad_scatternd_range\.onnx: node 'sc' \(ScatterND, #0\): index 5 is out of range for dim 0 of size 2"
bad "a 3-D Conv with pads of the wrong length" "$C/bad_conv3d_pads.onnx" \
    "bad_conv3d_pads\.onnx: node 'c3' \(Conv, #0\): strides, dilations and pads have .* a 3-D window"
grep -q '"transpose_b": true' "$C/resize.json" && ! grep -q '"op": "custom"' "$C/resize.json" &&
    ok "Resize: matmuls by resampling matrices, no custom node" ||
    not_ok "Resize: matmuls by resampling matrices, no custom node" "$(grep '"op"' "$C/resize.json")"
! grep -q '"op": "custom"' "$C/logical.json" "$C/pool3d.json" "$C/resize_cubic.json" &&
    ok "Not/And/Or/Xor, 3-D pools and cubic Resize map to registry ops, no custom node" ||
    not_ok "Not/And/Or/Xor, 3-D pools and cubic Resize map to registry ops, no custom node" \
        "$(grep -h '"op": "custom"' "$C/logical.json" "$C/pool3d.json" "$C/resize_cubic.json")"
[ "$(grep -c '"aten": "argsort.stable"' "$C/topk.json")" -eq 3 ] &&
    [ "$(grep -c '"aten": "gather.default"' "$C/topk.json")" -eq 3 ] &&
    ok "TopK: argsort, slice and torch.gather, run by the aten kernels" ||
    not_ok "TopK: argsort, slice and torch.gather, run by the aten kernels" "$(grep '"op"' "$C/topk.json")"
! grep -Eq '"op": "(custom|scatter)' "$C/scatternd.json" &&
    ok "ScatterND on constants folds into a weight" ||
    not_ok "ScatterND on constants folds into a weight" "$(grep '"op"' "$C/scatternd.json")"
expect_fail "--dim of a dim the model does not have" 2 "conv\.onnx.*'NOPE'" \
    "$FUSEENG" import "$C/conv.onnx" -o "$T/bad.json" --dim NOPE=3
expect_fail "no -o" 2 "missing -o" "$FUSEENG" import "$C/conv.onnx"
expect_fail "-o over the model read" 2 "import:" "$FUSEENG" import "$C/conv.onnx" -o "$C/conv.onnx"
finish
