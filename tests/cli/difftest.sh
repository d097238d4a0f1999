# difftest.sh: the random-graph differential tester (tests/difftest,
# docs/testing.md): the kept seeds that once found a bug, then a few
# hundred more (250 under SANITIZE=1), and the bugs it found as models run
# from the command line: whatever check accepts, run --execute executes and
# agrees with the unfused reference.
. tests/lib.sh
DT="$BUILD/difftest/difftest"
N=${DIFF_SEEDS:-300}
[ "$SANITIZE" = 1 ] && N=${DIFF_SEEDS:-250}

# difft NAME ARGS...: one TAP line for a difftest run; the FAIL lines on failure.
difft() {
    name=$1; shift
    mkdir -p "$T/tmp"
    TMPDIR="$T/tmp" "$DT" --out "$T/repro" "$@" >"$T/dt" 2>"$T/dterr"
    rc=$?
    if [ $rc -eq 0 ]; then
        ok "$name: $(tail -n 1 "$T/dt")"
    else
        # a sanitizer ends the process without a word from difftest: the
        # model it was on is still in its scratch directory
        not_ok "$name (exit $rc)" "$(grep -A1 '^FAIL\|^CRASH' "$T/dt" "$T/dterr" | head -n 20)" \
            "$(grep -m 3 'runtime error\|ERROR: AddressSanitizer' "$T/dterr")" \
            "model left behind: $(ls "$T"/tmp/difftest.*/difftest-*.json 2>/dev/null)"
    fi
}

if [ -x "$DT" ]; then
    difft "kept seeds" --list tests/difftest/seeds.txt --timing-every 3
    difft "seeds 1..$N" --seeds "1:$N" --timing-every 40
else
    skip "difftest" "$DT is not built (make $DT)"
fi

# The issue's two models and what the tester found next, each a model
# that check accepts and every command must execute.
model() {   # model FILE TENSORS NODES OUTPUTS
    printf '{"format": "fuseeng.model/1", "name": "m", "tensors": {%s}, "nodes": [%s], "outputs": [%s]}\n' \
        "$2" "$3" "$4" >"$1"
}
model "$T/slice.json" '"x": {"shape": [5, 6], "dtype": "f32", "kind": "input"}' \
    '{"name": "s", "op": "slice", "inputs": ["x"], "outputs": ["y"], "attrs": {"axis": 0, "start": 1, "step": 9223372036854775807}},
     {"name": "r", "op": "relu", "inputs": ["y"], "outputs": ["z"]}' '"z"'
model "$T/concat.json" '"a": {"shape": [2, 3], "dtype": "f32", "kind": "input"},
     "b": {"shape": [2, 2], "dtype": "i64", "kind": "input"}, "c": {"shape": [2, 1], "dtype": "f16", "kind": "weight"}' \
    '{"name": "k", "op": "concat", "inputs": ["a", "b", "c"], "outputs": ["y"], "attrs": {"axis": 1}},
     {"name": "e", "op": "exp", "inputs": ["y"], "outputs": ["z"]}' '"z"'
model "$T/norm.json" '"x": {"shape": [3, 4, 8], "dtype": "f32", "kind": "input"},
     "w": {"shape": [1, 8], "dtype": "f32", "kind": "weight"}, "b": {"shape": [4, 1], "dtype": "f32", "kind": "weight"}' \
    '{"name": "n", "op": "layer_norm", "inputs": ["x", "w", "b"], "outputs": ["y"], "attrs": {"normalized_shape": [4, 8]}}' '"y"'
model "$T/bool.json" '"x": {"shape": [64], "dtype": "bool", "kind": "input"}, "d": {"shape": [64], "dtype": "bool", "kind": "input"}' \
    '{"name": "s", "op": "sigmoid", "inputs": ["x"], "outputs": ["y"]},
     {"name": "q", "op": "div", "inputs": ["y", "d"], "outputs": ["z"]}' '"z"'
model "$T/mm.json" '"a": {"shape": [1, 1], "dtype": "f32", "kind": "input"},
     "b": {"shape": [3, 37, 1], "dtype": "f32", "kind": "weight"}' \
    '{"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["y"], "attrs": {"transpose_b": true}}' '"y"'
model "$T/mmbool.json" '"a": {"shape": [4, 9], "dtype": "bool", "kind": "input"},
     "b": {"shape": [9], "dtype": "bool", "kind": "weight"}' \
    '{"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]},
     {"name": "s", "op": "sub", "inputs": ["y"], "outputs": ["z"], "attrs": {"scalar": 0.5, "scalar_index": 0}}' '"z"'
for m in slice concat norm bool mmbool; do
    for p in no_fusion fuse_all; do
        expect_ok "$m.json checks, plans and executes ($p)" '^ +[^ ]+ .* ok$' \
            "$FUSEENG" run "$T/$m.json" --policy $p --execute --budget 0.01
    done
done
# i64 values past 2^24 through views (seeds 188 --op reshape / transpose):
# the fused program of a view group stored them through its f32 slots.
model "$T/i64view.json" '"x": {"shape": [], "dtype": "i64", "kind": "input"},
     "w": {"shape": [2, 1], "dtype": "i64", "kind": "input"}' \
    '{"name": "t", "op": "transpose", "inputs": ["x"], "outputs": ["y"], "attrs": {"perm": []}},
     {"name": "r", "op": "reshape", "inputs": ["y"], "outputs": ["z"], "attrs": {"shape": [1, 1]}},
     {"name": "u", "op": "transpose", "inputs": ["w"], "outputs": ["v"], "attrs": {"perm": [1, 0]}},
     {"name": "s", "op": "reshape", "inputs": ["v"], "outputs": ["q"], "attrs": {"shape": [2, 1, 1]}}' '"y", "z", "q"'
if /usr/bin/python3 -c '
import struct, sys
sys.path.insert(0, "tests/tools")
import st_gen
a, b = 1977326741, -(1 << 62) - 3
st_gen.write(sys.argv[1], [("x", "I64", [], struct.pack("<q", a)),
                           ("w", "I64", [2, 1], struct.pack("<2q", a, b))])
st_gen.write(sys.argv[2], [("y", "I64", [], struct.pack("<q", a)),
                           ("z", "I64", [1, 1], struct.pack("<q", a)),
                           ("q", "I64", [2, 1, 1], struct.pack("<2q", a, b))])' "$T/i64in.st" "$T/i64out.st"; then
    for p in no_fusion fuse_all; do
        expect_ok "i64 past 2^24 through views ($p): exact" '^           plan      q .* ok$' \
            "$FUSEENG" run "$T/i64view.json" --policy $p --execute --no-timing \
            --inputs "$T/i64in.st" --expect "$T/i64out.st"
    done
else
    not_ok "write the i64 inputs and outputs"
fi
# A one-column matrix read transposed by OpenBLAS (the kernel choice a
# benchmarking policy may pick): sgemm refused its row stride and left the
# output unset.
printf '{"format": "fuseeng.plan/1", "model": "m", "groups": [{"id": 0, "nodes": ["mm"], "kernel": "matmul_blas"}]}\n' \
    >"$T/mm.plan.json"
expect_ok "matmul_blas on a one-column transposed operand" 'matmul_blas|OpenBLAS' \
    "$FUSEENG" run "$T/mm.json" --plan "$T/mm.plan.json" --execute --budget 0.01
grep -Eq '^ +y .* ok$' "$T/out" && ! grep -q SGEMM "$T/err" &&
    ok "matmul_blas result equals the reference" || not_ok "matmul_blas result equals the reference" \
    "$(cat "$T/out" "$T/err" | head -n 30)"
finish
