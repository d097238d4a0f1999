#!/bin/sh
# cuda_emulated.sh: --device cuda end to end on a machine with no GPU.
# tests/tools/fakecuda.c, built here, stands in for the driver, NVRTC,
# cuBLAS and cuBLASLt (found first through LD_LIBRARY_PATH): kernels are
# compiled as host C++ and run thread by thread, cuBLAS and cuBLASLt are
# loops. Every plan is then
# checked against the CPU reference exactly as on a GPU: the graphs of
# tests/cuda (each attribute of conv2d, the pools, pad, sdpa, softmax
# over an axis, the aten customs and integer ops of exports; matmul
# epilogues as one cuBLASLt call, forced both ways with FUSEENG_CUDA_LT,
# and the forms it refuses), small example models, random graphs of the
# differential tester and out-of-range indices. What the emulation cannot see (races,
# alignment, registers, speed) is the GPU half of cuda.sh's; what NVRTC
# accepts is cuda_clang.sh's and cuda_nvrtc.sh's. Skipped by name without
# a C++ compiler, under SANITIZE=1, and where a real GPU answers (cuda.sh
# runs there).
. tests/lib.sh
M=examples/models
F="$T/fake"
CXX=${FAKECUDA_CXX:-c++}
DT=${BUILD:-build}/difftest/difftest

CASES="aten conv pad pool sdpa softmax masked_softmax lt lt_refused positions"
LT_FORMS="g_mm:bias+gelu s_mm:scale+residual r_mm:bias+relu h_mm:scale+bias+residual+gelu b_mm:scale+bias+relu w_mm:residual+bias t_mm:bias+gelu"
MODELS="resnet50_bottleneck:N=1 opu_convnet:N=1 allreduce_epilogue:T=16 gpt2_block:S=64 bert_base_layer:B=1,S=32 hub_conflict:M=64,N=64"
SEEDS=1:12

names() {   # every test's name, for skipping
    echo "emulated: --device cuda opens the fake device"
    for c in $CASES; do
        for p in no_fusion fuse_all inductor_greedy; do echo "emulated: tests/cuda/$c under $p agrees with the CPU reference"; done
    done
    for c in conv sdpa; do echo "emulated: tests/cuda/$c in chunks of one image or batch agrees with the CPU reference"; done
    for v in 1 0; do echo "emulated: tests/cuda/lt with FUSEENG_CUDA_LT=$v agrees with the CPU reference"; done
    for f in $LT_FORMS; do echo "emulated: ${f%%:*} runs as one cuBLASLt call, epilogue ${f#*:}"; done
    echo "emulated: tests/cuda/lt_refused keeps cuBLAS and a kernel, saying why"
    echo "emulated: tests/cuda/lt measured both ways says which won and by how much"
    echo "emulated: a plan with cuBLASLt calls is replayed as a CUDA graph"
    echo "emulated: a cuBLASLt without its entry points fails nothing: cuBLAS and a kernel, saying why"
    for m in $MODELS; do
        for p in no_fusion fuse_all; do echo "emulated: ${m%%:*} under $p agrees with the CPU reference"; done
    done
    for p in no_fusion fuse_all; do echo "emulated: softmax rows of -inf, NaN, +inf and masks under $p agree with the CPU reference"; done
    echo "emulated: random graphs $SEEDS and tests/difftest/seeds_cuda.txt agree under every policy"
    echo "emulated: an out-of-range index is an error, not wrong numbers"
    echo "emulated: an aten index.Tensor out of range is an error, not wrong numbers"
    echo "emulated: a registered kernel's custom node runs on the host between the card's kernels"
    echo "emulated: a fused kernel NVRTC refuses falls back to smaller kernels and the host, saying why"
    echo "emulated: with every generated kernel refused a plan still runs, on cuBLAS and the host"
}
skip_all() {
    names | while read -r nm; do skip "$nm" "$1"; done
    finish
    exit $?
}

if cuda_probe; then
    skip_all "a real GPU answers here: cuda.sh's GPU half runs instead"
fi
command -v "$CXX" >/dev/null 2>&1 || skip_all "no C++ compiler ($CXX) to compile the kernels for the host"
# ASan intercepts the fibers' swapcontext and may then report stacks it lost track of
[ "${SANITIZE:-}" = 1 ] && skip_all "under SANITIZE=1 (ASan and the emulation's swapcontext fibers)"
mkdir -p "$F"
if ! ${CC:-cc} -std=c11 -O2 -shared -fPIC -o "$F/libcuda.so.1" tests/tools/fakecuda.c -ldl -lm >"$T/cc.log" 2>&1; then
    not_ok "tests/tools/fakecuda.c builds" "$(head -c 600 "$T/cc.log")"
    finish
    exit $?
fi
for l in libnvrtc.so.13 libnvrtc.so.12 libcublas.so.13 libcublas.so.12 libcublasLt.so.13 libcublasLt.so.12; do ln -sf libcuda.so.1 "$F/$l"; done
export LD_LIBRARY_PATH="$F${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FUSEENG_CACHE_DIR="$T/cache" FAKECUDA_CXX="$CXX"
unset FUSEENG_CUDA_LIBS CUDA_HOME

expect_ok "emulated: --device cuda opens the fake device" "executed +on fakecuda" \
    "$FUSEENG" run "$T/tiny.json" --policy no_fusion --execute --no-timing --device cuda

for c in $CASES; do
    for p in no_fusion fuse_all inductor_greedy; do
        check "emulated: tests/cuda/$c under $p agrees with the CPU reference" \
            "$FUSEENG" run "tests/cuda/$c.json" --policy $p --execute --no-timing --device cuda
    done
done

# the chunk loops: scratch for one image (conv2d) or one batch (sdpa) at a time
for c in conv sdpa; do
    check "emulated: tests/cuda/$c in chunks of one image or batch agrees with the CPU reference" \
        env FUSEENG_CUDA_SCRATCH_MIB=0 "$FUSEENG" run "tests/cuda/$c.json" --policy fuse_all --execute \
        --no-timing --device cuda
done

# a matmul and its epilogue as one cuBLASLt call, and as cuBLAS and a kernel
for v in 1 0; do
    check "emulated: tests/cuda/lt with FUSEENG_CUDA_LT=$v agrees with the CPU reference" \
        env FUSEENG_CUDA_LT=$v "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --execute --no-timing --device cuda
done
FUSEENG_CUDA_LT=1 "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --show-kernels --device cuda >"$T/lt.show" 2>&1
for f in $LT_FORMS; do
    nd=${f%%:*}
    epi=${f#*:}
    name="emulated: $nd runs as one cuBLASLt call, epilogue $epi"
    if grep -q "cuda_steps: [0-9]* ops in 1 step (0 kernels, 1 cuBLAS, 0 on the host):.*cuBLASLt epilogue $epi (forced" \
        "$T/lt.show" && grep -q "^    $nd: cuBLASLt gemm .*epilogue $epi\$" "$T/lt.show"; then
        ok "$name"
    else
        not_ok "$name" "$(grep -E 'cuda_steps|cuBLAS' "$T/lt.show" | head -20)"
    fi
done
FUSEENG_CUDA_LT=1 "$FUSEENG" run tests/cuda/lt_refused.json --policy fuse_all --show-kernels --device cuda \
    >"$T/ltr.show" 2>&1
name="emulated: tests/cuda/lt_refused keeps cuBLAS and a kernel, saying why"
if [ "$(grep -c '(1 kernel, 1 cuBLAS, 0 on the host).*not cuBLASLt: ' "$T/ltr.show")" = 3 ] &&
    grep -q "not cuBLASLt: gelu 'e_y' is not among cuBLASLt's epilogues (its GELU is the tanh form" "$T/ltr.show" &&
    grep -q "not cuBLASLt: 'o_add' is read outside the epilogue" "$T/ltr.show" &&
    grep -q "not cuBLASLt: mul 'a_y' scales after an add" "$T/ltr.show"; then
    ok "$name"
else
    not_ok "$name" "$(grep -E 'cuda_steps' "$T/ltr.show")"
fi
name="emulated: tests/cuda/lt measured both ways says which won and by how much"
FUSEENG_CUDA_LT=auto "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --show-kernels --device cuda >"$T/lta.show" 2>&1
if [ "$(grep -cE '(cuBLASLt epilogue [a-z+]+|cuBLAS \+ kernel): [0-9.]+ vs [0-9.]+ ms for (cuBLAS \+ kernel|cuBLASLt epilogue)' \
        "$T/lta.show")" = 7 ]; then
    ok "$name"
else
    not_ok "$name" "$(grep -E 'cuda_steps' "$T/lta.show")"
fi
expect_ok "emulated: a plan with cuBLASLt calls is replayed as a CUDA graph" "as CUDA graphs" \
    env FUSEENG_CUDA_LT=1 "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --execute --device cuda --budget 0.05
# a library by cuBLASLt's names with none of its symbols, found first (a
# real one may sit in the loader's path)
mkdir -p "$F/nolt"
${CC:-cc} -shared -fPIC -o "$F/nolt/libcublasLt.so.13" -x c /dev/null >/dev/null 2>&1 &&
    ln -sf libcublasLt.so.13 "$F/nolt/libcublasLt.so.12"
name="emulated: a cuBLASLt without its entry points fails nothing: cuBLAS and a kernel, saying why"
if LD_LIBRARY_PATH="$F/nolt:$LD_LIBRARY_PATH" FUSEENG_CUDA_LT=1 "$FUSEENG" run tests/cuda/lt.json --policy fuse_all \
    --execute --no-timing --device cuda --verbose >"$T/nolt.out" 2>&1 &&
    [ "$(grep -c '(1 kernel, 1 cuBLAS, 0 on the host).*cuBLASLt not used: libcublasLt has no cublasLtCreate' \
        "$T/nolt.out")" = 7 ]; then
    ok "$name"
else
    not_ok "$name" "$(grep -E 'cuda_steps|fuseeng:' "$T/nolt.out" | head -10)"
fi

for m in $MODELS; do
    b=${m%%:*}
    dims=""
    for d in $(echo "${m#*:}" | tr ',' ' '); do dims="$dims --dim $d"; done
    for p in no_fusion fuse_all; do
        # shellcheck disable=SC2086
        check "emulated: $b under $p agrees with the CPU reference" \
            "$FUSEENG" run "$M/$b.json" $dims --policy $p --execute --no-timing --device cuda
    done
done

for p in no_fusion fuse_all; do
    check "emulated: softmax rows of -inf, NaN, +inf and masks under $p agree with the CPU reference" \
        "$FUSEENG" run tests/cuda/softmax_special.json --inputs tests/cuda/softmax_special.safetensors \
        --policy $p --execute --no-timing --device cuda
done

name="emulated: random graphs $SEEDS and tests/difftest/seeds_cuda.txt agree under every policy"
if [ -x "$DT" ]; then
    check "$name" "$DT" --seeds $SEEDS --list tests/difftest/seeds_cuda.txt --device cuda --timing-every 0 \
        --out "$T/dt"
else
    skip "$name" "no $DT (make difftest builds it)"
fi

cat >"$T/gather.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "bad-index",
 "tensors": {"w": {"shape": [10, 4], "dtype": "f32", "kind": "weight"},
             "i": {"shape": [3], "dtype": "i64", "kind": "input"},
             "y": {"shape": [3, 4], "dtype": "f32"}},
 "nodes": [{"name": "e", "op": "embedding", "inputs": ["w", "i"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
/usr/bin/python3 - "$T/idx.safetensors" <<'PY' 2>/dev/null
import json, struct, sys
data = struct.pack("<3q", 1, 12, 2)
hdr = json.dumps({"i": {"dtype": "I64", "shape": [3], "data_offsets": [0, len(data)]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hdr)) + hdr + data)
PY
expect_fail "emulated: an out-of-range index is an error, not wrong numbers" 2 "out of range" \
    "$FUSEENG" run "$T/gather.json" --policy no_fusion --execute --no-timing --device cuda --inputs "$T/idx.safetensors"

# the same through an exported x[i] (aten index.Tensor), which the card
# runs too: -3 is x's first row, 3 is past its end. bench runs the card
# without the CPU reference, which would stop at the index first
cat >"$T/aindex.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "bad-aten-index",
 "tensors": {"x": {"shape": [3, 4], "dtype": "i64", "kind": "weight"},
             "i": {"shape": [3], "dtype": "i64", "kind": "input"},
             "y": {"shape": [3, 4], "dtype": "i64"}},
 "nodes": [{"name": "ix", "op": "custom", "inputs": ["x", "i"], "outputs": ["y"],
            "attrs": {"aten": "index.Tensor"}}],
 "outputs": ["y"]}
JSON
/usr/bin/python3 - "$T/aidx.safetensors" <<'PY' 2>/dev/null
import json, struct, sys
data = struct.pack("<3q", -3, 3, 0)
hdr = json.dumps({"i": {"dtype": "I64", "shape": [3], "data_offsets": [0, len(data)]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hdr)) + hdr + data)
PY
expect_fail "emulated: an aten index.Tensor out of range is an error, not wrong numbers" 2 \
    "aten index is out of range on the GPU" \
    "$FUSEENG" bench "$T/aindex.json" --policy no_fusion --device cuda --inputs "$T/aidx.safetensors" --budget 0.001

# a kernel registered by a plugin (docs/kernels.md) runs on the host
name="emulated: a registered kernel's custom node runs on the host between the card's kernels"
if ${CC:-cc} -shared -fPIC -O2 -I core/include examples/kernels/mish.c -o "$T/mish.so" -lm 2>"$T/cc.log"; then
    expect_ok "$name" "y +.* ok$" "$FUSEENG" run examples/kernels/mish_chain.json --policy fuse_all \
        --execute --no-timing --device cuda --kernels "$T/mish.so"
else
    not_ok "$name" "examples/kernels/mish.c does not build: $(head -c 300 "$T/cc.log")"
fi

# A generated kernel that does not build (a generator bug NVRTC catches)
# is not the end of a legal plan: its group falls back to smaller kernels
# and, member by member, to the host, and says so with NVRTC's line.
name="emulated: a fused kernel NVRTC refuses falls back to smaller kernels and the host, saying why"
if env FUSEENG_CACHE_DIR="$T/cache_refuse" FAKECUDA_REFUSE='tanhf(' "$FUSEENG" run examples/bench/chain6.json \
        --dim T=8 --policy fuse_all --execute --no-timing --device cuda >"$T/out" 2>"$T/err" &&
        grep -q 'out .* ok$' "$T/out" &&
        grep -q 'cuda_steps: 6 ops in 3 steps (2 kernels, 0 cuBLAS, 1 on the host): [0-9]* generated kernels\{0,1\} did not build.*refused by FAKECUDA_REFUSE line [0-9]* of the generated source: .*tanhf(.*tanh on the host' "$T/out"; then
    ok "$name"
else
    not_ok "$name" "$(head -c 300 "$T/err")" "$(grep -A1 '^groups' "$T/out" | head -c 600)"
fi
check "emulated: with every generated kernel refused a plan still runs, on cuBLAS and the host" \
    env FUSEENG_CACHE_DIR="$T/cache_refuse_all" FAKECUDA_REFUSE=fe_kernel "$FUSEENG" run \
    examples/models/resnet50_bottleneck.json --dim N=1 --policy fuse_all --execute --no-timing --device cuda

finish
