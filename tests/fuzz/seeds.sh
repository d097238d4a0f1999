#!/bin/sh
# seeds.sh DIR: write the seed inputs of every fuzz target into DIR/TARGET/,
# made from the project's own files (nothing generated is kept in git):
#   model    examples/models/*.json, examples/bench/*.json, tests/fuzz/model.json
#   plan     plans of tests/fuzz/model.json under every shipped policy (fuseeng run --plan-out)
#   profile  a measured profile of tests/fuzz/model.json (fuseeng profile) and an InfiniCore one
#   machine  lua/machines/*.lua
#   policy   policies/*.lua
#   pattern  pattern sources from tests/lua/test_pattern.lua, policies and docs
#   safetensors  outputs of tests/fuzz/model.json (run --execute --save-outputs), its
#            weights and inputs (tests/tools/st_gen.py, when python3 is there)
#   onnx     the models of tests/tools/onnx_cases.py: every mapped operator family,
#            the bad and hostile models of the import tests (when /usr/bin/python3
#            has onnx, numpy and torch; else none)
# Needs $FUSEENG (the fuseeng command); lua5.4 for the pattern seeds.
set -e
out=$1
FUSEENG=${FUSEENG:-build/fuseeng}
mkdir -p "$out/model" "$out/plan" "$out/profile" "$out/machine" "$out/policy" "$out/pattern" \
    "$out/safetensors" "$out/onnx"
cp examples/models/*.json examples/bench/*.json tests/fuzz/model.json "$out/model/"
cp lua/machines/*.lua "$out/machine/"
cp policies/*.lua "$out/policy/"
for p in policies/*.lua; do
    name=$(basename "$p" .lua)
    "$FUSEENG" run tests/fuzz/model.json --policy "$name" --plan-out "$out/plan/$name.json" \
        >/dev/null 2>&1 || echo "seeds.sh: no plan from policy $name" >&2
done
"$FUSEENG" profile tests/fuzz/model.json --policy fuse_all --budget 0.002 \
    -o "$out/profile/measured.json" >/dev/null 2>&1 || echo "seeds.sh: no measured profile" >&2
printf '{"single": {"silu": 0.012, "mul": 0.010, "add": 0.004, "rms_norm": 0.02},\n "fused": {"silu+mul": 0.013, "add+rms_norm": 0.021}}\n' \
    >"$out/profile/infinicore.json"
"$FUSEENG" run tests/fuzz/model.json --policy fuse_all --execute --budget 0.002 \
    --save-outputs "$out/safetensors/outputs.safetensors" >/dev/null 2>&1 ||
    echo "seeds.sh: no outputs file" >&2
if command -v python3 >/dev/null 2>&1; then
    python3 tests/tools/st_gen.py tests/fuzz/model.json weight "$out/safetensors/weights.safetensors"
    python3 tests/tools/st_gen.py tests/fuzz/model.json input "$out/safetensors/inputs.safetensors"
fi
if /usr/bin/python3 -c "import onnx, numpy, torch" 2>/dev/null; then
    /usr/bin/python3 tests/tools/onnx_cases.py "$out/onnx.cases" >/dev/null
    cp "$out/onnx.cases"/*.onnx "$out/onnx/"
    rm -rf "$out/onnx.cases"
fi
# A dictionary for the onnx target: the operators and attributes the
# importer knows (its tables in core/import/onnx_check.c), and the domain.
{
    grep -o '{"[A-Za-z_]*",' core/import/onnx_check.c | tr -d '{,' | sort -u
    printf '"ai.onnx"\n"NOTSET"\n"SAME_UPPER"\n"VALID"\n"reflect"\n"edge"\n"i,j->ij"\n'
} >"$out/onnx.dict"
if command -v lua5.4 >/dev/null 2>&1; then
    lua5.4 tests/fuzz/patterns.lua "$out/pattern" tests/lua/test_pattern.lua policies/*.lua docs/*.md
else
    printf 'add -> rms_norm' >"$out/pattern/p001"
    printf 'silu(x) * y' >"$out/pattern/p002"
fi
# A dictionary for the pattern target: its syntax, the op names and kinds
# (the coverage libFuzzer sees is the C code's, not the Lua grammar's).
{
    for tok in '->' '(' ')' '|' '+' '?' '*' '.' '@' ',' '-' '/' 'x' 'y' \
        '@elemwise' '@broadcast' '@reduction' '@injective' '@out-fusable' '@out_fusable' '@opaque'; do
        printf '"%s"\n' "$tok"
    done
    "$FUSEENG" ops | awk 'NR > 1 { printf "\"%s\"\n", $1 }'
} >"$out/pattern.dict"
# Dictionaries for the Lua targets: the names their seeds use (fields,
# drivers, hooks, ctx calls), which Lua compares where libFuzzer cannot see.
words() { cat "$@" | grep -o '[A-Za-z_][A-Za-z_0-9]*' | sort -u | awk '{ printf "\"%s\"\n", $1 }'; }
words policies/*.lua >"$out/policy.dict"
words lua/machines/*.lua >"$out/machine.dict"
