# weights.sh: a model's own weights and inputs from safetensors files
# (--weights, --inputs) on every command that executes, run --execute
# --expect / --save-outputs, and every way a data file can fail to fit the
# model (exit 2 naming the file and the tensor, nothing on stdout). The
# files are written by tests/tools/st_gen.py (standard library only: an
# implementation of the format other than ours).
. tests/lib.sh
M=examples/models/resnet50_bottleneck.json
Q="--budget 0.01"
PY=$(command -v python3)
if [ -z "$PY" ]; then
    skip "safetensors files" "no python3 to write them"
    finish
    exit 0
fi
gen() { "$PY" tests/tools/st_gen.py "$@"; }
run() { "$FUSEENG" run $M --policy fuse_all --execute $Q "$@"; }

gen $M weight "$T/w1.st" --seed 1 && gen $M weight "$T/w2.st" --seed 2 &&
    gen $M input "$T/i1.st" --seed 3 || not_ok "st_gen.py writes the files"

# The outputs depend on the weights: two weight files, two results; one
# file twice, the same result to the bit.
run --weights "$T/w1.st" --inputs "$T/i1.st" --save-outputs "$T/o1.st" >"$T/out" 2>"$T/err" &&
    run --weights "$T/w2.st" --inputs "$T/i1.st" --save-outputs "$T/o2.st" >/dev/null 2>&1 &&
    run --weights "$T/w1.st" --inputs "$T/i1.st" --save-outputs "$T/o1b.st" >/dev/null 2>&1
if [ $? -eq 0 ] && ! cmp -s "$T/o1.st" "$T/o2.st" && cmp -s "$T/o1.st" "$T/o1b.st"; then
    ok "outputs depend on --weights: two files differ, one file twice is identical"
else
    not_ok "outputs depend on --weights: two files differ, one file twice is identical" \
        "$(head -c 400 "$T/err")"
fi
grep -q "^data       weights from $T/w1.st, inputs from $T/i1.st" "$T/out" &&
    ok "the report says where weights and inputs came from" ||
    not_ok "the report says where weights and inputs came from" "$(head -c 600 "$T/out")"
"$PY" -c "
import sys; sys.path.insert(0, 'tests/tools'); import st_gen
t = st_gen.read('$T/o1.st')
assert [(n, d, s) for n, d, s, _ in t] == [('out', 'F32', [1, 256, 56, 56])], t
" && ok "--save-outputs writes a safetensors file another reader reads" ||
    not_ok "--save-outputs writes a safetensors file another reader reads"
run --save-outputs "$T/o3.st" >/dev/null 2>&1 && ! cmp -s "$T/o1.st" "$T/o3.st" &&
    ok "without --weights and --inputs the values stay seeded random" ||
    not_ok "without --weights and --inputs the values stay seeded random"

# --expect: the engine's own outputs pass, other ones fail with exit 1.
expect_ok "--expect passes on the outputs the same data produced" \
    '^           unfused   out +0 +0 +1e-03 +0  ok' \
    run --weights "$T/w1.st" --inputs "$T/i1.st" --expect "$T/o1.st"
grep -Eq '^expected   outputs of .*o1.st, against each run' "$T/out" &&
    grep -Eq '^           plan      out .* ok$' "$T/out" &&
    ok "--expect reports each run's max abs / max rel per output" ||
    not_ok "--expect reports each run's max abs / max rel per output" "$(cat "$T/out")"
expect_ok "--expect in --json: file, ok, per run and output" \
    '"expect": \{' run --weights "$T/w1.st" --inputs "$T/i1.st" --expect "$T/o1.st" --json
grep -q '"unfused": \[' "$T/out" && grep -q '"ok": true' "$T/out" &&
    ok "--expect JSON holds both runs" || not_ok "--expect JSON holds both runs" "$(head -c 600 "$T/out")"
gen --perturb "$T/o1.st" "$T/bad_out.st" out
run --weights "$T/w1.st" --inputs "$T/i1.st" --expect "$T/bad_out.st" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q MISMATCH "$T/out" &&
    grep -q "differ from the expected outputs in $T/bad_out.st: output 'out' has 1 element" "$T/err"; then
    ok "--expect on perturbed outputs: exit 1 naming the file, output and element"
else
    not_ok "--expect on perturbed outputs: exit 1 naming the file, output and element" "exit $rc" \
        "$(head -c 600 "$T/err")"
fi
run --weights "$T/w2.st" --inputs "$T/i1.st" --expect "$T/o1.st" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q "the unfused reference differs too" "$T/err" &&
    ok "--expect with other weights: exit 1, and the reference differs too" ||
    not_ok "--expect with other weights: exit 1, and the reference differs too" "$(cat "$T/err")"
expect_ok "--expect-rtol sets the tolerance" '^           plan      out .* 5e-01 .* ok$' \
    run --weights "$T/w1.st" --inputs "$T/i1.st" --expect "$T/bad_out.st" --expect-rtol 0.5

# Symbolic dims are compared after --dim.
gen $M input "$T/i2.st" --dim N=2
check "inputs at --dim N=2 run with --dim N=2" run --dim N=2 --inputs "$T/i2.st"

# Every way a file can fail to fit: exit 2, file and tensor named, no stdout.
gen $M weight "$T/drop.st" --drop layer1.1.bn1.bias
expect_fail "a missing weight" 2 \
    "drop.st: tensor 'layer1.1.bn1.bias' is missing: .*resnet50_bottleneck.json has a weight" \
    run --weights "$T/drop.st"
gen $M weight "$T/extra.st" --extra layer1.1.bn1.bia
expect_fail "a tensor the model has no weight for, with the likely name" 2 \
    "extra.st: tensor 'layer1.1.bn1.bia': .* has no weight of that name \(did you mean 'layer1.1.bn1.bias'\?\)" \
    run --weights "$T/extra.st"
gen $M weight "$T/dtype.st" --dtype layer1.1.bn1.bias=F64
expect_fail "a weight of another dtype" 2 \
    "dtype.st: tensor 'layer1.1.bn1.bias': dtype F64, but .*'s weight 'layer1.1.bn1.bias' is f32" \
    run --weights "$T/dtype.st"
gen $M weight "$T/shape.st" --shape layer1.1.bn1.bias=65
expect_fail "a weight of another shape" 2 \
    "shape.st: tensor 'layer1.1.bn1.bias': shape \[65\], but .* is \[64\]" \
    run --weights "$T/shape.st"
expect_fail "inputs made at other dims" 2 \
    "i2.st: tensor 'x': shape \[2, 256, 56, 56\], but .*'s input 'x' is \[N, 256, 56, 56\] = \[1, 256, 56, 56\]" \
    run --inputs "$T/i2.st"
expect_fail "the inputs file given as --weights" 2 \
    "i1.st: tensor 'x': .* has no weight of that name \('x' is an input of the model" \
    run --weights "$T/i1.st"
expect_fail "a weights file given as --expect" 2 \
    "w1.st: tensor '[^']+': .* has no output of that name" \
    run --expect "$T/w1.st"
head -c 1000 "$T/w1.st" >"$T/cut.st"
expect_fail "a file cut in its header" 2 "cut.st: the header length is [0-9]+ bytes, but the file has fewer" \
    run --weights "$T/cut.st"
size=$(wc -c <"$T/w1.st")
head -c $((size - 100)) "$T/w1.st" >"$T/short.st"
expect_fail "a file cut in its data" 2 "short.st: tensor '[^']+': data_offsets .* end beyond the data" \
    run --weights "$T/short.st"
expect_fail "a model file as --weights" 2 "resnet50_bottleneck.json: the header length is" \
    run --weights $M
expect_fail "no such file" 2 "nope.st: cannot open the safetensors file" run --weights "$T/nope.st"
expect_fail "bench checks the file too" 2 "shape.st: tensor 'layer1.1.bn1.bias'" \
    "$FUSEENG" bench $M --weights "$T/shape.st" $Q
expect_fail "--expect without --execute" 2 "--expect goes with --execute" \
    "$FUSEENG" run $M --policy fuse_all --expect "$T/o1.st"
expect_fail "--save-outputs over an input file" 2 "save-outputs" \
    run --weights "$T/w1.st" --save-outputs "$T/w1.st"

# Every command that executes takes them.
expect_ok "bench --weights --inputs" "^data       weights from .*w1.st, inputs from .*i1.st" \
    "$FUSEENG" bench $M --policy fuse_all --weights "$T/w1.st" --inputs "$T/i1.st" $Q
expect_ok "profile --weights" "^wrote .*prof.json" \
    "$FUSEENG" profile $M --policy fuse_all --weights "$T/w1.st" -o "$T/prof.json" $Q
expect_ok "ab --measure --weights" "fuse_all" \
    "$FUSEENG" ab $M --policy no_fusion --policy fuse_all --measure --weights "$T/w1.st" \
    --inputs "$T/i1.st" --budget 0.05
expect_fail "ab --measure with a file that does not fit" 2 "shape.st: tensor 'layer1.1.bn1.bias'" \
    "$FUSEENG" ab $M --policy no_fusion --policy fuse_all --measure --weights "$T/shape.st" --budget 0.05
expect_ok "ctx:bench runs on the weights of the run (benchmark_fusion)" "speedup" \
    "$FUSEENG" run $M --policy benchmark_fusion --bench-budget 1 --weights "$T/w1.st"

finish
