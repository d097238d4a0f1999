#!/bin/sh
# cuda.sh: the CUDA back end (--device cuda). The first half runs anywhere:
# options, the error without a GPU, and the generated sources that
# --show-kernels --device cuda prints without one. The second half runs
# plans on the GPU against the CPU reference and is skipped, test by test,
# where the driver or a GPU is missing (CI, this project's dev hosts); on
# the GPU machine it runs (docs/cuda.md says how).
. tests/lib.sh
M=examples/models
SH=${SHARED:-../shared}/models

cuda_probe
gpu=$?

expect_fail "--device takes cpu or cuda" 2 "--device is cpu or cuda, got 'tpu'" \
    "$FUSEENG" run "$M/gpt2_block.json" --execute --device tpu
expect_fail "bench --device takes cpu or cuda" 2 "--device is cpu or cuda, got 'gpu'" \
    "$FUSEENG" bench "$M/gpt2_block.json" --device gpu
if [ "$gpu" -ne 0 ]; then
    missing="--device cuda: (no NVIDIA driver library \(libcuda.so.1\)|the driver sees no GPU|no NVRTC|cuInit)"
    expect_fail "without a GPU, --device cuda names what is missing" 2 "$missing" \
        "$FUSEENG" run "$M/gpt2_block.json" --policy fuse_all --execute --device cuda
    expect_fail "without a GPU, bench --device cuda names what is missing" 2 "$missing" \
        "$FUSEENG" bench "$M/gpt2_block.json" --policy fuse_all --device cuda
    expect_fail "without a GPU, profile --device cuda names what is missing" 2 "$missing" \
        "$FUSEENG" profile "$M/gpt2_block.json" -o "$T/p.json" --device cuda
    [ ! -e "$T/p.json" ] && ok "profile --device cuda without a GPU writes no profile" ||
        not_ok "profile --device cuda without a GPU writes no profile" "$T/p.json exists"
    expect_fail "without a GPU, ab --measure --device cuda names what is missing" 2 "$missing" \
        "$FUSEENG" ab "$M/gpt2_block.json" --policy fuse_all --policy no_fusion --measure --device cuda
    expect_fail "without a GPU, a policy's ctx:bench on --device cuda names what is missing" 2 \
        "bench: $missing" \
        "$FUSEENG" run "$M/gpt2_block.json" --policy benchmark_fusion --device cuda
    expect_fail "a library folder that holds no driver is named" 2 "/nonexistent/cuda" \
        env FUSEENG_CUDA_LIBS=/nonexistent/cuda "$FUSEENG" run "$M/gpt2_block.json" --policy fuse_all --execute --device cuda
else
    skip "without a GPU, --device cuda names what is missing" "this machine has a GPU"
    skip "a library folder that holds no driver is named" "this machine has a GPU"
fi

no_kernel_model "$T/mystery.json"
expect_fail "--show-kernels --device cuda refuses an op no kernel runs, naming it" 2 \
    "mystery.json.*special_bessel_j0" \
    "$FUSEENG" run "$T/mystery.json" --policy fuse_all --show-kernels --device cuda

# An i64 copy through a view moves the integers as they are (through a
# float, 1977326741 would come back 1977326720).
cat >"$T/i64t.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "i64t",
 "tensors": {"x": {"shape": [4, 8], "dtype": "i64", "kind": "input"},
             "y": {"shape": [8, 4], "dtype": "i64"}},
 "nodes": [{"name": "t", "op": "transpose", "inputs": ["x"], "outputs": ["y"], "attrs": {"perm": [1, 0]}}],
 "outputs": ["y"]}
JSON
"$FUSEENG" run "$T/i64t.json" --policy fuse_all --show-kernels --device cuda >"$T/i64" 2>&1
if grep -q 'o0\[row \* 4 + j\] = i0\[' "$T/i64" && ! grep -q '(float)i0' "$T/i64"; then
    ok "an i64 transpose is a copy of the integers, not through a float"
else
    not_ok "an i64 transpose is a copy of the integers, not through a float" "$(grep -n 'o0\[' "$T/i64")"
fi

DT=${BUILD:-build}/difftest/difftest
if [ "$gpu" -ne 0 ] && [ -x "$DT" ]; then
    expect_fail "difftest --device cuda without a GPU says so" 2 "difftest: --device cuda: " \
        "$DT" --seeds 1:2 --device cuda
fi

# Generated sources: every example model's groups, without a GPU too.
for f in "$M"/*.json; do
    b=$(basename "$f" .json)
    for p in fuse_all gcu_tlf; do
        if "$FUSEENG" run "$f" --policy $p --show-kernels --device cuda >"$T/show" 2>"$T/err"; then
            groups=$(grep -c '^group ' "$T/show")
            kern=$(grep -c 'extern "C" __global__ void' "$T/show")
            said=$(grep -Ec '^  (cuda_fused|cuda_steps|view):' "$T/show")
            if [ "$groups" -gt 0 ] && [ "$said" -eq "$groups" ] && [ "$kern" -gt 0 ]; then
                ok "$b $p: --show-kernels --device cuda says how each of $groups groups runs ($kern kernels printed)"
            else
                not_ok "$b $p: --show-kernels --device cuda" "$groups groups, $said said, $kern kernels" \
                    "$(head -c 600 "$T/show")"
            fi
        else
            not_ok "$b $p: --show-kernels --device cuda" "stderr: $(head -c 600 "$T/err")"
        fi
    done
done

# What the steps are: cuBLAS for a matmul, its epilogue one kernel, a
# softmax's row reductions, and why a group is not one kernel.
"$FUSEENG" run "$M/gpt2_block.json" --policy fuse_all --show-kernels --device cuda >"$T/show" 2>&1
for re in 'scores: cuBLAS gemm 1024 x 1024 x 64, batch 12' 'grp_max\(t_\)' 'grp_sum\(t_\)' \
          'cuda_steps: 4 ops in 2 steps \(1 kernel, 1 cuBLAS, 0 on the host\): not one kernel: node .scores. is matmul' \
          'cuda_fused: elementwise kernel of 9 ops'; do
    if grep -Eq -- "$re" "$T/show"; then
        ok "gpt2_block's CUDA plan shows /$re/"
    else
        not_ok "gpt2_block's CUDA plan shows /$re/" "$(grep -E '^group|^  cuda' "$T/show" | head -20)"
    fi
done

# The real exports' integer work (the attention mask's arange, cumsum,
# diff, comparisons, index; i64 adds and views) runs on the card: no member
# of their plans is a host step, so each plan can be captured as a graph.
for b in gpt2-small-2l-eager llama2-7b-2l-sdpa; do
    for p in no_fusion fuse_all; do
        name="shared $b under $p: --show-kernels --device cuda leaves no step on the host"
        if [ ! -f "$SH/$b.json" ]; then
            skip "$name" "no $SH/$b.json (set SHARED)"
            continue
        fi
        if "$FUSEENG" run "$SH/$b.json" --policy $p --show-kernels --device cuda >"$T/show" 2>"$T/err"; then
            host=$(grep -c ': on the host (' "$T/show")
            if [ "$host" -eq 0 ]; then
                ok "$name"
            else
                not_ok "$name" "$host host steps" "$(grep -B1 ': on the host (' "$T/show" | head -20)"
            fi
        else
            not_ok "$name" "stderr: $(head -c 600 "$T/err")"
        fi
    done
done

# A matmul and an epilogue cuBLASLt can take: without a GPU, named as a
# candidate to measure; the forms it cannot take, named with why.
name="without a GPU, --show-kernels --device cuda names cuBLASLt candidates and the forms refused"
if [ "$gpu" -ne 0 ]; then
    "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --show-kernels --device cuda >"$T/lt.show" 2>&1
    "$FUSEENG" run tests/cuda/lt_refused.json --policy fuse_all --show-kernels --device cuda >>"$T/lt.show" 2>&1
    if [ "$(grep -c 'a cuBLASLt candidate, epilogue [a-z+]*, measured against cuBLAS + kernel on the card' \
            "$T/lt.show")" = 7 ] && [ "$(grep -c 'not cuBLASLt: ' "$T/lt.show")" = 3 ]; then
        ok "$name"
    else
        not_ok "$name" "$(grep -E '^  cuda_steps' "$T/lt.show")"
    fi
else
    skip "$name" "this machine has a GPU"
fi

# ---- on the GPU ----
need_gpu() {   # need_gpu NAME: skip NAME and return 1 without a GPU
    if [ "$gpu" -ne 0 ]; then
        skip "$1" "no CUDA GPU here ($(head -c 120 "$T/probe" | tr '\n' ' '))"
        return 1
    fi
}

for f in "$M"/*.json; do
    b=$(basename "$f" .json)
    for p in fuse_all gcu_tlf tvm_fuseops xla_priority inductor_greedy no_fusion; do
        name="gpu: $b under $p agrees with the CPU reference"
        need_gpu "$name" || continue
        check "$name" "$FUSEENG" run "$f" --policy $p --execute --no-timing --device cuda
    done
done
for f in "$SH"/*.json; do
    [ -f "$f" ] || continue
    b=$(basename "$f" .json)
    for p in fuse_all gcu_tlf tvm_fuseops xla_priority inductor_greedy; do
        name="gpu: shared $b under $p agrees with the CPU reference"
        need_gpu "$name" || continue
        check "$name" "$FUSEENG" run "$f" --policy $p --execute --no-timing --device cuda
    done
done

name="gpu: a registered kernel's custom node runs on the host between the card's kernels"
if need_gpu "$name"; then
    if ${CC:-cc} -shared -fPIC -O2 -I core/include examples/kernels/mish.c -o "$T/mish.so" -lm 2>"$T/cc.log"; then
        expect_ok "$name" "y +.* ok$" "$FUSEENG" run examples/kernels/mish_chain.json --policy fuse_all \
            --execute --no-timing --device cuda --kernels "$T/mish.so"
    else
        skip "$name" "no C compiler builds examples/kernels/mish.c here"
    fi
fi

# every attribute of the conv, pool, pad, sdpa and softmax kernels
for f in tests/cuda/*.json; do
    b=$(basename "$f" .json)
    for p in no_fusion fuse_all inductor_greedy; do
        name="gpu: tests/cuda/$b under $p agrees with the CPU reference"
        need_gpu "$name" || continue
        check "$name" "$FUSEENG" run "$f" --policy $p --execute --no-timing --device cuda
    done
done

for p in no_fusion fuse_all; do
    name="gpu: softmax rows of -inf, NaN, +inf and masks under $p agree with the CPU reference"
    need_gpu "$name" || continue
    check "$name" "$FUSEENG" run tests/cuda/softmax_special.json --inputs tests/cuda/softmax_special.safetensors \
        --policy $p --execute --no-timing --device cuda
done

for c in conv sdpa; do
    name="gpu: tests/cuda/$c in chunks of one image or batch agrees with the CPU reference"
    need_gpu "$name" || continue
    check "$name" env FUSEENG_CUDA_SCRATCH_MIB=0 "$FUSEENG" run "tests/cuda/$c.json" --policy fuse_all \
        --execute --no-timing --device cuda
done

# cuBLASLt with the epilogue, forced either way, then chosen by measurement
for v in 1 0; do
    name="gpu: tests/cuda/lt with FUSEENG_CUDA_LT=$v agrees with the CPU reference"
    need_gpu "$name" || continue
    check "$name" env FUSEENG_CUDA_LT=$v "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --execute --no-timing \
        --device cuda
done
name="gpu: with FUSEENG_CUDA_LT=1 every group of tests/cuda/lt is one cuBLASLt call"
if need_gpu "$name"; then
    FUSEENG_CUDA_LT=1 "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --show-kernels --device cuda >"$T/lt.show" 2>&1
    if [ "$(grep -c '(0 kernels, 1 cuBLAS, 0 on the host):.*cuBLASLt epilogue [a-z+]* (forced' "$T/lt.show")" = 7 ] &&
        [ "$(grep -c ': cuBLASLt gemm ' "$T/lt.show")" = 7 ]; then
        ok "$name"
    else
        not_ok "$name" "$(grep -E '^  cuda_steps' "$T/lt.show")"
    fi
fi
name="gpu: matmul_bias_gelu measures cuBLASLt against cuBLAS + kernel, and agrees with the CPU reference"
if need_gpu "$name"; then
    if "$FUSEENG" run examples/bench/matmul_bias_gelu.json --policy fuse_all --execute --no-timing --device cuda \
        --verbose >"$T/mbg.out" 2>&1 &&
        grep -Eq '(cuBLASLt epilogue bias\+gelu|cuBLAS \+ kernel): [0-9.]+ vs [0-9.]+ ms for' "$T/mbg.out"; then
        ok "$name"
    else
        not_ok "$name" "$(grep -E 'cuda_steps|fuseeng:' "$T/mbg.out" | head -5)"
    fi
fi
name="gpu: a plan of cuBLASLt calls is replayed as a CUDA graph"
need_gpu "$name" && expect_ok "$name" "graphs     as CUDA graphs" \
    env FUSEENG_CUDA_LT=1 "$FUSEENG" run tests/cuda/lt.json --policy fuse_all --execute --device cuda --budget 0.1

name="gpu: 40 random graphs of the differential tester and its CUDA seeds agree with the CPU under every policy"
if need_gpu "$name"; then
    if [ -x "$DT" ]; then
        if "$DT" --seeds 1:40 --list tests/difftest/seeds_cuda.txt --device cuda --timing-every 0 \
            --out "$T/dt" >"$T/dt.log" 2>&1; then
            ok "$name"
        else
            not_ok "$name" "$(grep -m 3 FAIL "$T/dt.log" | cut -c 1-400)"
        fi
    else
        skip "$name" "no $DT (make difftest builds it)"
    fi
fi

name="gpu: a second process finds the kernels in the disk cache"
if need_gpu "$name"; then
    export FUSEENG_CACHE_DIR="$T/cache"
    "$FUSEENG" run "$M/llama2_7b_layer.json" --policy fuse_all --execute --no-timing --device cuda >/dev/null 2>&1
    expect_ok "$name" "cuda_fused:.*cached" \
        "$FUSEENG" run "$M/llama2_7b_layer.json" --policy fuse_all --execute --no-timing --device cuda --verbose
    unset FUSEENG_CACHE_DIR
fi

name="gpu: --show-kernels --device cuda reports registers and spills"
need_gpu "$name" && expect_ok "$name" "registers, [0-9]+ local \(spill\) bytes" \
    "$FUSEENG" run "$M/llama2_7b_layer.json" --policy fuse_all --show-kernels --device cuda

name="gpu: timed runs report the plan against unfused on the card, and as CUDA graphs"
need_gpu "$name" && expect_ok "$name" "graphs     as CUDA graphs.*x \\(95" \
    "$FUSEENG" run "$M/gpt2_block.json" --policy fuse_all --execute --device cuda --budget 0.2

cat >"$T/gather.json" <<'JSON'
{"format": "fuseeng.model/1", "name": "bad-index",
 "tensors": {"w": {"shape": [10, 4], "dtype": "f32", "kind": "weight"},
             "i": {"shape": [3], "dtype": "i64", "kind": "input"},
             "y": {"shape": [3, 4], "dtype": "f32"}},
 "nodes": [{"name": "e", "op": "embedding", "inputs": ["w", "i"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
name="gpu: an out-of-range index on the card is an error, not wrong numbers"
if need_gpu "$name"; then
    /usr/bin/python3 - "$T/idx.safetensors" <<'PY' 2>/dev/null
import json, struct, sys
data = struct.pack("<3q", 1, 12, 2)
hdr = json.dumps({"i": {"dtype": "I64", "shape": [3], "data_offsets": [0, len(data)]}}).encode()
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hdr)) + hdr + data)
PY
    expect_fail "$name" 2 "out of range" \
        "$FUSEENG" run "$T/gather.json" --policy no_fusion --execute --no-timing --device cuda --inputs "$T/idx.safetensors"
fi

name="gpu: bench --device cuda times groups and ops on the card, with registers and CUDA graphs"
if need_gpu "$name"; then
    "$FUSEENG" bench "$M/gpt2_block.json" --policy fuse_all --device cuda --budget 0.05 --json \
        >"$T/bench.json" 2>"$T/bench.err"
    /usr/bin/python3 - "$T/bench.json" >"$T/bench.chk" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device"] == "cuda" and d["device_name"], d.get("device")
for gr in d["groups"]:
    assert gr["median_ms"] > 0 and "registers" in gr and gr["spill_bytes"] >= 0, gr
    assert gr["host_steps"] == 0, gr["how"]
t = d["totals"]
assert t["plan"]["median_ms"] > 0 and t["unfused"]["median_ms"] > 0
assert "plan_graph" in t, t.get("no_graph")
assert 0 < t["plan_graph"]["median_ms"] <= t["plan"]["median_ms"] * 1.5, t
print("ok")
PY
    if grep -qx ok "$T/bench.chk"; then ok "$name"; else not_ok "$name" "$(cat "$T/bench.chk" "$T/bench.err")"; fi
fi

name="gpu: profile --device cuda writes the card's times, named by the device"
need_gpu "$name" && expect_ok "$name" "wrote" \
    "$FUSEENG" profile "$M/gpt2_block.json" --policy fuse_all -o "$T/gp.json" --device cuda --budget 0.02 &&
    { grep -q '"machine": "NVIDIA' "$T/gp.json" && ok "gpu: the profile names the card" ||
      not_ok "gpu: the profile names the card" "$(grep machine "$T/gp.json")"; }

name="gpu: ab --measure --device cuda measures the plans on the card"
need_gpu "$name" && expect_ok "$name" "measured on the GPU" \
    "$FUSEENG" ab "$M/gpt2_block.json" --policy fuse_all --policy no_fusion --measure --device cuda --budget 0.2

name="gpu: spill_veto measures on the card and its ctx:bench reports registers"
need_gpu "$name" && expect_ok "$name" "measured|register spilling" \
    "$FUSEENG" run "$M/hub_conflict.json" --policy spill_veto --param measure=true --device cuda --explain

[ "$failures" -eq 0 ]
