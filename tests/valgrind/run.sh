#!/bin/sh
# run.sh: fuseeng's commands and C tests under valgrind's memcheck, on the
# portable build (make valgrind; tests/cli/valgrind.sh runs the quick set).
#
#   BUILD=build/portable SHARED=../shared sh tests/valgrind/run.sh [quick|kernels|full]
#
# quick: one case of each command and error path, and the C tests named in
# $VG_TESTS (tests/cli/valgrind.sh, in make test); kernels: that, plus
# executions of most example models at small sizes, the kernel C tests and
# examples/embed (make valgrind's second, AVX2 tree); full: that, plus
# every model with every policy and every other C test (make valgrind).
#
# Each case is one TAP line; it fails when memcheck reports anything: an
# invalid read or write, a jump on an uninitialised value, a leak (definite,
# indirect or possible), or when the command's exit status is not the one
# expected (error paths are run too: they are where frees go missing).
# tests/valgrind/fuseeng.supp holds the known reports that are not ours.
# A native (-march=native) tree may use instructions valgrind cannot decode
# (AVX-512), so BUILD must be a PORTABLE=1 tree.
BUILD=${BUILD:-build/portable}
SHARED=${SHARED:-../shared}
SET=${1:-full}
FUSEENG=$BUILD/fuseeng
# Two OpenMP threads whatever the host has: the parallel paths run, and the
# reports do not depend on the machine. Sleeping waits: under valgrind, which
# runs one thread at a time, a spinning worker only burns the others' turns.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_WAIT_POLICY=passive
export CMOCKA_MESSAGE_OUTPUT=TAP
VG="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible
    --errors-for-leak-kinds=definite,indirect,possible --num-callers=30
    --suppressions=tests/valgrind/fuseeng.supp"
[ "$SET" = quick ] || VG="$VG --track-origins=yes"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0 failures=0

# vg NAME CODE CMD...: run CMD under memcheck; it must exit CODE with no report
vg() {
    name=$1 code=$2; shift 2
    n=$((n + 1))
    t0=$(date +%s)
    $VG --log-file="$T/vg.log" "$@" >"$T/out" 2>&1
    rc=$?
    name="$name ($(($(date +%s) - t0)) s)"
    # -q: the log holds memcheck's reports and nothing else
    if [ "$rc" -eq "$code" ] && [ ! -s "$T/vg.log" ]; then
        echo "ok $n - $name"
        return
    fi
    failures=$((failures + 1))
    echo "not ok $n - $name (exit $rc, expected $code)"
    # memcheck's report, after the command's own failures (a C test that
    # fails leaks what its aborted case held, which is then all the report
    # shows), or the command's output
    if [ -s "$T/vg.log" ]; then
        grep -E '^not ok|^ERROR|error:' "$T/out" | head -n 10 | sed 's/^/# /'
        head -n 80 "$T/vg.log" | sed 's/^/# /'
    else
        head -n 20 "$T/out" | sed 's/^/# /'
    fi
}

if [ ! -x "$FUSEENG" ]; then
    echo "not ok 1 - $FUSEENG is missing (make PORTABLE=1)"
    echo "1..1"
    exit 1
fi

M=examples/models
L=$M/llama2_7b_layer.json

# ---- the quick set (tests/cli/valgrind.sh): one of each command ----
vg "check $L" 0 "$FUSEENG" check "$L" --json
vg "run $L --policy gcu_tlf --explain" 0 "$FUSEENG" run "$L" --policy gcu_tlf --explain
# matmul_bias_gelu with 64 for 2048: GEMM with an epilogue, weights filled
# in a moment
G=$T/matmul_bias_gelu.json
sed 's/2048/64/g' examples/bench/matmul_bias_gelu.json >"$G"
vg "run matmul_bias_gelu, 64 wide, --execute (GEMM with epilogue, threads)" 0 \
    "$FUSEENG" run "$G" --policy gcu_tlf --execute --budget 0.001 --plan-out "$T/plan.json"
vg "sim a saved plan --verbose --json --trace" 0 \
    "$FUSEENG" sim "$G" --plan "$T/plan.json" --verbose --json --trace "$T/trace.json"
vg "run $M/hub_conflict.json --execute (51 elementwise and row ops)" 0 "$FUSEENG" run \
    $M/hub_conflict.json --dim M=64 --dim N=64 --policy fuse_all --execute --budget 0.001
vg "ab three policies --json --svg" 0 "$FUSEENG" ab "$L" $M/gpt2_block.json --policy gcu_tlf \
    --policy fuse_all --policy no_fusion --json --svg "$T/ab.svg"
vg "bench chain6 --json" 0 "$FUSEENG" bench examples/bench/chain6.json --dim T=64 \
    --policy fuse_all --budget 0.001 --json
vg "profile then run profile_lookup" 0 "$FUSEENG" profile examples/bench/swiglu.json --dim T=64 \
    --policy fuse_all --budget 0.001 -o "$T/prof.json"
vg "run --policy profile_lookup --profile" 0 "$FUSEENG" run examples/bench/swiglu.json \
    --policy profile_lookup --profile "$T/prof.json"
vg "script tests/lua/test_pattern.lua" 0 "$FUSEENG" script tests/lua/test_pattern.lua
# the GPU's lowerings (conv2d, sdpa: steps over scratch), planned without a device
for c in conv sdpa; do
    vg "run tests/cuda/$c.json --show-kernels --device cuda" 0 "$FUSEENG" run tests/cuda/$c.json \
        --policy fuse_all --show-kernels --device cuda
done
# An ONNX model whose names outgrow the importer's string table mid-node (a
# use-after-free once, silent without memcheck or ASan: tests/fuzz/regress/onnx).
vg "import Relu -> LeakyRelu, names past a string table move" 0 "$FUSEENG" import \
    tests/fuzz/regress/onnx/uaf-relu-leakyrelu.onnx -o "$T/imported.json"
printf '{"format": "fuseeng.model/1", "nodes": [' >"$T/bad.json"
vg "bad model: exit 2" 2 "$FUSEENG" check "$T/bad.json"
printf 'return require("fuseeng").policy { name = "bad", driver = "greedy",\n  decide = function() error("no") end }\n' >"$T/bad.lua"
vg "policy that raises: exit 2" 2 "$FUSEENG" run "$L" --policy "$T/bad.lua"
printf 'local t = {} for i = 1, 1e9 do t[i] = i end\n' >"$T/mem.lua"
vg "script over its memory cap: exit 2" 2 "$FUSEENG" script --max-memory 8 "$T/mem.lua"
for t in $VG_TESTS; do
    vg "$t" 0 "$BUILD/tests/$t"
done

if [ "$SET" != quick ]; then
    # ---- executions at sizes memcheck gets through in seconds ----
    # (not the 7B layer: filling its 800 MB of weights alone takes minutes)
    while read -r f dims; do
        vg "run $f $dims --execute" 0 "$FUSEENG" run "$f" $dims --policy gcu_tlf --execute --budget 0.001
    done <<LIST
$M/gpt2_block.json --dim S=8
$M/bert_base_layer.json --dim B=1 --dim S=8
$M/resnet50_bottleneck.json --dim N=1
examples/bench/softmax.json --dim H=2 --dim Q=64
examples/bench/add_rmsnorm.json --dim T=64
examples/bench/chain6.json --dim T=64
examples/bench/gelu.json --dim T=64
LIST
    vg "ab --measure" 0 "$FUSEENG" ab examples/bench/chain6.json examples/bench/swiglu.json \
        --dim T=128 --policy fuse_all --policy no_fusion --measure --budget 0.001
    vg "bench a saved plan" 0 "$FUSEENG" bench "$G" --plan "$T/plan.json" --budget 0.001
    vg "run --policy benchmark_fusion (ctx:bench)" 0 "$FUSEENG" run examples/bench/swiglu.json \
        --dim T=64 --policy benchmark_fusion --json
    vg "run --policy benchmark_fusion, GEMM candidates" 0 "$FUSEENG" run "$G" \
        --policy benchmark_fusion --json
    # All C tests but test_api, which executes and times the 7B layer three
    # times: over an hour under memcheck. The calls it makes are the ones
    # fuseeng and examples/embed make, run here at small sizes.
    for t in "$BUILD"/tests/test_*; do
        case $t in *.d | */test_api) continue ;; esac
        case " $VG_TESTS " in *" ${t##*/} "*) continue ;; esac
        case "$SET:${t##*/}" in kernels:test_kern_*) ;; kernels:*) continue ;; esac
        vg "${t##*/}" 0 "$t"
    done
    vg "examples/embed: the public API through libfuseeng.so's shim" 0 \
        "$BUILD/examples/embed" $M/gpt2_block.json
fi

if [ "$SET" = full ]; then
    # ---- every model with every policy, every Lua test ----
    for f in $M/*.json examples/bench/*.json "$SHARED"/models/*.json; do
        [ -f "$f" ] && vg "check $f" 0 "$FUSEENG" check "$f"
    done
    for f in $M/*.json "$SHARED"/models/*.json; do
        [ -f "$f" ] || continue
        for p in policies/*.lua; do
            p=$(basename "$p" .lua)
            # it times candidates on the CPU: at small sizes above
            [ "$p" = benchmark_fusion ] && continue
            vg "run $f --policy $p" 0 "$FUSEENG" run "$f" --policy "$p" --json
        done
    done
    for f in tests/lua/test_*.lua; do
        vg "script $f" 0 "$FUSEENG" script "$f"
    done
fi

echo "1..$n"
[ "$failures" -eq 0 ]
