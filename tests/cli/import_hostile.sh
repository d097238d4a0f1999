# import_hostile.sh: `fuseeng import` of hostile ONNX files (docs/import.md,
# "What is refused"): one class of bad input each, from the fuzz campaign
# and issue 34 (attributes out of range, dims out of range, missing inputs
# and outputs, names that are not valid UTF-8, hold control characters or
# are too long, an empty graph, an output listed twice, int64 overflow in
# constant folding, an Einsum subscript that is not a letter). Each must
# give one error naming the file, the node and the fix, exit status 2,
# nothing on stdout, and leave no file behind: not the model, not the
# weights, not a temporary file. The models are made by
# tests/tools/onnx_cases.py (hostile.txt: name and the error's regex).
. tests/lib.sh
PY=/usr/bin/python3

onnx_cases "ONNX import of hostile files"
mkdir -p "$T/o"

tab=$(printf '\t')
while IFS="$tab" read -r name re; do
    rm -rf "$T/o" && mkdir "$T/o"
    expect_fail "refused: $name" 2 "h_$name\.onnx: $re" \
        "$FUSEENG" import "$C/h_$name.onnx" -o "$T/o/m.json"
    left=$(ls -A "$T/o")
    [ -z "$left" ] || not_ok "refused: $name: nothing left behind" "left: $left"
done <"$C/hostile.txt"

# The error is one line: a control character in a name is shown escaped.
"$FUSEENG" import "$C/h_ctrl_name.onnx" -o "$T/o/m.json" 2>"$T/err"
[ "$(wc -l <"$T/err")" -eq 1 ] && ! grep -q "$(printf '\033')" "$T/err" &&
    ok "a control character in a name is escaped in the one-line error" ||
    not_ok "a control character in a name is escaped in the one-line error" "$(cat -v "$T/err")"

# A producer and a file name that are not text become '_' in the model's
# source and name: the model file stays valid UTF-8, and check reads it.
$PY - "$C" <<'EOF'
import sys, onnx
from onnx import helper, TensorProto
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "gQQ", [x], [y]),
                      opset_imports=[helper.make_opsetid("", 14)])
m.ir_version = 8
m.producer_name = "pQQ"
data = m.SerializeToString().replace(b"pQQ", b"p\xff\x1b").replace(b"gQQ", b"g\xc3\x28")
open(sys.argv[1] + "/producer.onnx", "wb").write(data)
open(sys.argv[1].encode() + b"/n\xff\x01.onnx", "wb").write(data)
EOF
check "a producer name that is not UTF-8 does not leak into the model" \
    "$FUSEENG" import "$C/producer.onnx" -o "$T/producer.json"
check "... and check reads the model" "$FUSEENG" check "$T/producer.json"
check "a file name that is not UTF-8 does not leak into the model" \
    "$FUSEENG" import "$C/n$(printf '\377\001').onnx" -o "$T/fname.json"
check "... and check reads the model" "$FUSEENG" check "$T/fname.json"

# Relu -> LeakyRelu kept pointers into the importer's string table across a
# reallocation, with names long enough that the table grows in the middle
# of the LeakyRelu (a heap use-after-free: ASan sees it when make test
# SANITIZE=1 replays this file, tests/cli/fuzz_replay.sh, and memcheck in
# tests/cli/valgrind.sh; here, the names the model holds are those the
# import gave, whatever the allocator does with freed memory).
for perturb in 0 165; do
    rm -f "$T/rl.json"
    MALLOC_PERTURB_=$perturb "$FUSEENG" import tests/fuzz/regress/onnx/uaf-relu-leakyrelu.onnx \
        -o "$T/rl.json" 2>"$T/err" &&
        "$FUSEENG" check "$T/rl.json" >/dev/null 2>>"$T/err" &&
        grep -q '"inputs": \["r"\], "outputs": \["y/0"\]' "$T/rl.json" &&
        ok "Relu -> LeakyRelu imports with its names (MALLOC_PERTURB_=$perturb)" ||
        not_ok "Relu -> LeakyRelu imports with its names (MALLOC_PERTURB_=$perturb)" "$(cat "$T/err")" \
            "$(grep '"op"' "$T/rl.json" 2>/dev/null)"
done
finish
