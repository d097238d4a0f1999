#!/bin/sh
# cuda_clang.sh: every CUDA kernel the generators write compiles, checked
# without a GPU or CUDA. --show-kernels --device cuda plans each group
# without a device; FUSEENG_CUDA_DUMP=DIR makes it write every generated
# source to DIR (kernels/gpu/cuda_build.h), and clang's CUDA front end
# compiles each to PTX with tests/tools/nvrtc_prelude.h standing for what
# NVRTC has built in. Every model of examples/models, ../shared/models and
# tests/cuda (graphs that reach every attribute of the conv, pool, pad,
# sdpa, softmax and aten kernels) under three policies, each source compiled
# once. Skipped by name where clang or its NVPTX target is missing.
. tests/lib.sh
CLANG=${CLANG:-clang}
PRE=tests/tools/nvrtc_prelude.h
POLICIES="fuse_all inductor_greedy no_fusion"

models() {
    for f in examples/models/*.json "${SHARED:-../shared}"/models/*.json tests/cuda/*.json; do
        [ -f "$f" ] && echo "$f"
    done
    echo tests/cuda/conv.json:chunked tests/cuda/sdpa.json:chunked
}

# clang -x cuda for one file at architecture $arch into $2
cc_ptx() {
    "$CLANG" -O2 -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch="$arch" \
        -Xclang -target-feature -Xclang +ptx72 -Wno-unknown-cuda-version -include "$PRE" \
        -S -o "$2" "$1"
}

# The newest architecture this clang knows (clang 14 stops at sm_86;
# the generators write nothing architecture-specific).
arch=""
why="no $CLANG here"
if command -v "$CLANG" >/dev/null 2>&1; then
    why="$CLANG has no NVPTX target"
    if "$CLANG" -print-targets 2>/dev/null | grep -q nvptx64; then
        why="$CLANG compiles no CUDA for sm_90, sm_89, sm_86 or sm_80"
        printf 'extern "C" __global__ void fe_kernel(float *p) { p[threadIdx.x] = expf(p[0]); }\n' >"$T/probe.cu"
        for a in sm_90 sm_89 sm_86 sm_80; do
            arch=$a
            if cc_ptx "$T/probe.cu" "$T/probe.ptx" >/dev/null 2>&1; then break; fi
            arch=""
        done
    fi
fi

if [ -z "$arch" ]; then
    skip "clang compiles a kernel that uses the prelude's built-ins" "$why"
    for m in $(models); do
        b=$(basename "${m%:chunked}" .json)
        [ "$m" = "${m%:chunked}" ] || b="$b in chunks"
        for p in $POLICIES; do
            skip "clang: $b under $p: every generated kernel compiles" "$why"
        done
    done
    finish
    exit $?
fi

# The prelude itself: a kernel using what it declares compiles, and one
# using what NVRTC lacks does not (the check would be worthless if the
# prelude declared everything).
cat >"$T/uses.cu" <<'CU'
extern "C" __global__ void __launch_bounds__(64) fe_kernel(const float *__restrict__ x, float *o)
{
  __shared__ float s[32];
  float v = __shfl_xor_sync(0xffffffffu, x[threadIdx.x], 1) + __uint_as_float(__float_as_uint(1.0f));
  s[threadIdx.x & 31] = expf(v) + tanhf(v) + erff(v) + rsqrtf(v) + powf(v, 2.0f) + fmaf(v, v, v);
  __syncthreads();
  float4 q = make_float4(s[0], s[1], s[2], s[3]);
  uint2 u = make_uint2(1u, 2u);
  o[blockIdx.x * blockDim.x + threadIdx.x] = q.x + (float)u.y + __int_as_float(0x7f800000) + (float)gridDim.x;
}
CU
printf 'extern "C" __global__ void fe_kernel(float *p) { p[0] = INFINITY; }\n' >"$T/lacks.cu"
if cc_ptx "$T/uses.cu" "$T/uses.ptx" >"$T/log" 2>&1 && ! cc_ptx "$T/lacks.cu" "$T/lacks.ptx" >/dev/null 2>&1; then
    ok "clang ($arch) compiles a kernel that uses the prelude's built-ins, and refuses what NVRTC lacks"
else
    not_ok "clang ($arch) compiles a kernel that uses the prelude's built-ins, and refuses what NVRTC lacks" \
        "$(head -c 800 "$T/log")"
fi

mkdir -p "$T/done"
cat >"$T/cc1.sh" <<SH
# one source: its PTX and log beside it, a mark in done/ when it compiles
k=\$(basename "\$1")
"$CLANG" -O2 -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=$arch \\
    -Xclang -target-feature -Xclang +ptx72 -Wno-unknown-cuda-version -include "$PRE" \\
    -S -o "\$1.ptx" "\$1" >"\$1.log" 2>&1 && touch "$T/done/\$k"
SH
for m in $(models); do
    f=${m%:chunked}
    b=$(basename "$f" .json)
    # :chunked: scratch for one image or batch at a time, the chunk loops' kernels
    cap=""
    [ "$m" = "$f" ] || { b="$b in chunks"; cap=0; }
    for p in $POLICIES; do
        name="clang: $b under $p: every generated kernel compiles"
        d="$T/dump/$(echo "$b" | tr ' ' _).$p"
        if ! FUSEENG_CUDA_SCRATCH_MIB=$cap FUSEENG_CUDA_DUMP="$d" "$FUSEENG" run "$f" --policy "$p" \
            --show-kernels --device cuda >"$T/show" 2>"$T/err"; then
            not_ok "$name" "--show-kernels --device cuda failed: $(head -c 400 "$T/err")"
            continue
        fi
        shown=$(grep -c 'extern "C" __global__ void' "$T/show")
        # each source once over the whole test: two cores, two compilers
        ls "$d" 2>/dev/null | while read -r k; do [ -e "$T/done/$k" ] || echo "$d/$k"; done >"$T/todo"
        xargs -r -P 2 -n 1 sh "$T/cc1.sh" <"$T/todo"
        bad=""
        nk=0
        for k in $(ls "$d" 2>/dev/null | grep '\.cu$'); do
            nk=$((nk + 1))
            [ -e "$T/done/$k" ] || bad="$bad $k"
        done
        if [ -n "$bad" ]; then
            first=$(echo $bad | cut -d' ' -f1)
            not_ok "$name" "these do not compile:$bad" "$(head -c 1200 "$d/$first.log")"
        elif [ "$nk" -eq 0 ] && [ "$shown" -gt 0 ]; then
            not_ok "$name" "FUSEENG_CUDA_DUMP wrote nothing, --show-kernels printed $shown kernels"
        else
            ok "$name ($nk distinct of $shown printed)"
        fi
    done
done

# What now runs on the card that ran on the host: nothing of these graphs
# is a host step, and each op has its kernels.
for f in tests/cuda/*.json examples/models/resnet50_bottleneck.json examples/models/opu_convnet.json \
         examples/models/hub_conflict.json; do
    b=$(basename "$f" .json)
    "$FUSEENG" run "$f" --policy no_fusion --show-kernels --device cuda >"$T/show" 2>&1
    if grep -q ': on the host (' "$T/show"; then
        not_ok "$b: no member runs on the host" "$(grep ': on the host (' "$T/show" | head -5)"
    else
        ok "$b: no member runs on the host"
    fi
done
"$FUSEENG" run tests/cuda/conv.json --policy no_fusion --show-kernels --device cuda >"$T/show" 2>&1
for re in 'grouped: cuBLAS gemm 16 x 55 x 72, batch 2, adding to C' 'fuseeng: conv2d .depthwise.: direct' \
          'pointwise: cuBLAS gemm 24 x 42 x 16, batch 3$' 'fuseeng: conv2d .dilated.: im2col of 1 image' \
          'brain: cuBLAS gemm 8 x 24 x 36, batch 4, adding to C' \
          'fuseeng: conv2d .half_f32_bias.: direct'; do
    if grep -Eq -- "$re" "$T/show"; then
        ok "conv cases: /$re/"
    else
        not_ok "conv cases: /$re/" "$(grep -E 'cuBLAS|fuseeng: conv2d' "$T/show" | head -20)"
    fi
done
"$FUSEENG" run tests/cuda/sdpa.json --policy no_fusion --show-kernels --device cuda >"$T/show" 2>&1
for re in 'causal_bool: cuBLAS gemm 5 x 7 x 8, batch 6$' 'float_mask_half: cuBLAS gemm 6 x 9 x 16, batch 1$' \
          'softmax of 8 rows of 1500 scores, 128 threads a row, values in registers' \
          'softmax of 2 rows of 40000 scores, 1024 threads a row, read each pass' \
          'if \(j > i\) t = -__int_as_float'; do
    if grep -Eq -- "$re" "$T/show"; then
        ok "sdpa cases: /$re/"
    else
        not_ok "sdpa cases: /$re/" "$(grep -E 'cuBLAS|fuseeng: sdpa' "$T/show" | head -20)"
    fi
done

finish
