/* nvrtc_prelude.h: what NVRTC gives a program without any #include,
 * declared for clang's CUDA front end, so that tests/cli/cuda_clang.sh can
 * compile the generated kernels to PTX on a machine with no CUDA:
 *
 *   clang -x cuda --cuda-device-only -nocudainc -nocudalib \
 *         --cuda-gpu-arch=sm_80 -include tests/tools/nvrtc_prelude.h -S k.cu
 *
 * Only the built-ins the generators use are here, each as NVRTC has it (a
 * name NVRTC lacks must not be added: the check is that the sources need
 * nothing else). The math functions are declarations: with -nocudalib they
 * stay calls in the PTX, which is all a compile check needs.
 */
#ifndef FE_NVRTC_PRELUDE_H
#define FE_NVRTC_PRELUDE_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

#include <__clang_cuda_builtin_vars.h>

#define __DEV static __device__ __inline__ __attribute__((always_inline))

/* vector types, aligned as CUDA's */
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(8))) uint2 { unsigned x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
__DEV float4 make_float4(float x, float y, float z, float w) { float4 v = {x, y, z, w}; return v; }
__DEV float2 make_float2(float x, float y) { float2 v = {x, y}; return v; }
__DEV uint2 make_uint2(unsigned x, unsigned y) { uint2 v = {x, y}; return v; }
__DEV uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { uint4 v = {x, y, z, w}; return v; }

/* bit casts */
__DEV float __uint_as_float(unsigned u) { return __nvvm_bitcast_i2f((int)u); }
__DEV float __int_as_float(int i) { return __nvvm_bitcast_i2f(i); }
__DEV unsigned __float_as_uint(float f) { return (unsigned)__nvvm_bitcast_f2i(f); }
__DEV int __float_as_int(float f) { return __nvvm_bitcast_f2i(f); }

/* rounded arithmetic that is never contracted into an FMA */
__DEV float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
__DEV float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
__DEV double __dmul_rn(double a, double b) { return __nvvm_mul_rn_d(a, b); }
__DEV double __dadd_rn(double a, double b) { return __nvvm_add_rn_d(a, b); }

/* warp shuffles and barriers */
__DEV float __shfl_xor_sync(unsigned m, float v, int o, int w = 32) { return __nvvm_shfl_sync_bfly_f32(m, v, o, ((32 - w) << 8) | 0x1f); }
__DEV int __shfl_xor_sync(unsigned m, int v, int o, int w = 32) { return __nvvm_shfl_sync_bfly_i32(m, v, o, ((32 - w) << 8) | 0x1f); }
__DEV double __shfl_xor_sync(unsigned m, double v, int o, int w = 32)
{
    long long b = __builtin_bit_cast(long long, v);
    int lo = __shfl_xor_sync(m, (int)b, o, w), hi = __shfl_xor_sync(m, (int)(b >> 32), o, w);
    return __builtin_bit_cast(double, ((long long)hi << 32) | (unsigned)lo);
}
__DEV float __shfl_down_sync(unsigned m, float v, unsigned o, int w = 32) { return __nvvm_shfl_sync_down_f32(m, v, o, ((32 - w) << 8) | 0x1f); }
__DEV float __shfl_sync(unsigned m, float v, int l, int w = 32) { return __nvvm_shfl_sync_idx_f32(m, v, l, ((32 - w) << 8) | 0x1f); }
__DEV void __syncwarp(unsigned m = 0xffffffffu) { __nvvm_bar_warp_sync(m); }

/* atomics */
__DEV int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__DEV float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
__DEV int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }
__DEV int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }

/* the math API (device code links libdevice under NVRTC) */
extern "C" {
__device__ float expf(float);
__device__ float exp2f(float);
__device__ float logf(float);
__device__ float log2f(float);
__device__ float tanhf(float);
__device__ float erff(float);
__device__ float sqrtf(float);
__device__ float rsqrtf(float);
__device__ float powf(float, float);
__device__ float fabsf(float);
__device__ float sinf(float);
__device__ float cosf(float);
__device__ float fmaf(float, float, float);
__device__ float fminf(float, float);
__device__ float fmaxf(float, float);
__device__ float floorf(float);
__device__ float ceilf(float);
__device__ float __expf(float);
__device__ double sqrt(double);
}

#undef __DEV

/* NVRTC's -default-device (cuda_build.c passes it): a function with no
 * __host__ / __device__ is device code */
#pragma clang force_cuda_host_device begin

#endif
