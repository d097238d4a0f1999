/* vmath.h: vectorised float32 math (exp, tanh, sigmoid, silu, gelu,
 * hardsigmoid, hardswish) for
 * AVX2+FMA, used by every kernel so that a fused and an unfused run compute
 * the same function bit for bit. The functions are written once
 * (vmath_fn.h) and built at 8 lanes (fe_k_v8_*) and, where the compiler
 * targets AVX-512, at 16 (fe_k_v16_*) with the same operations.
 *
 * exp: range reduction x = n ln2 + r with |r| <= ln2/2 (Cody-Waite split of
 * ln2), e^r = 1 + r + r^2 Q(r) with a cubic Q fitted for minimax
 * relative error (1.05e-7, under one ulp; fitted for this file by Lawson's
 * iteratively reweighted least squares): about 1.5 ulp in all and 2^n built in the exponent bits. Results for
 * x < -86.6 (below 2.5e-38) flush to zero: denormals are slow and the
 * difference is under 3e-38; past 88.72 the result overflows to +inf as
 * e^x does; NaN propagates because the clamp puts the constant first
 * (min returns its second operand when either is NaN).
 * tanh: x P(x^2) / Q(x^2), quartics fitted for this file (vmath_fn.h).
 * Sigmoid-type functions use 1/(1 + e^-x), which never cancels.
 *
 * Cost. On this machine (two FMA and two add pipes) these functions are
 * bound by latency, not by the pipes: a chain of ~20 dependent operations
 * per vector, of which the out-of-order window holds only a few at once.
 * So the sigmoid family and softmax's exp use a shorter core
 * (fe_k_v8_exp_ps: one fused reduction step, the scale merged into the
 * caller's multiply-add, clamps instead of masks), measured 10-20% faster
 * at 2.6 to 4.4 ulp, and tanh a rational function with a chain half as
 * long as e^{2x}'s, at 5 ulp (tests/test_kern_ops.c checks the bounds);
 * the division stays, as a reciprocal estimate plus a Newton step
 * measured slower.
 *
 * Tails shorter than a vector go through the same vector code on a padded
 * copy, so the value of an element never depends on where it sits.
 * Without AVX2 the functions fall back to libm (exact to libm's accuracy).
 */
#ifndef FE_VMATH_H
#define FE_VMATH_H

#include <math.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define FE_K_AVX2 1

/* The functions at 8 lanes: fe_k_v8_exp, fe_k_v8_tanh, ... (vmath_fn.h) */
#define VT __m256
#define VFN(name) fe_k_v8_##name
#define VSET _mm256_set1_ps
#define VSETI _mm256_set1_epi32
#define VADD _mm256_add_ps
#define VSUB _mm256_sub_ps
#define VMUL _mm256_mul_ps
#define VDIV _mm256_div_ps
#define VMIN _mm256_min_ps
#define VMAX _mm256_max_ps
#define VFMA _mm256_fmadd_ps
#define VFNMA _mm256_fnmadd_ps
#define VADDI _mm256_add_epi32
#define VSLLI _mm256_slli_epi32
#define VCASTI _mm256_castps_si256
#define VCASTF _mm256_castsi256_ps
#define VZERO_LT(y, x, c) _mm256_andnot_ps(_mm256_cmp_ps(x, c, _CMP_LT_OQ), y)
#define VNAN_KEEP(r, a) _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q))
#define VTI __m256i
#define VSRAI _mm256_srai_epi32
#define VANDB _mm256_and_ps
#define VANDNB _mm256_andnot_ps
#define VORB _mm256_or_ps
#define VXORB _mm256_xor_ps
#define VANY_GT(a, c) _mm256_movemask_ps(_mm256_cmp_ps(a, c, _CMP_GT_OQ))
#define VLANES 8
#define VLOADU _mm256_loadu_ps
#define VSTOREU _mm256_storeu_ps
#include "vmath_fn.h"   /* which undefines the names above */

#if defined(__AVX512F__)
/* And at 16 lanes (fe_k_v16_*), for the vector programs of the fused
 * executor: the same operations, so the same values. */
#define FE_K_AVX512 1
#define VT __m512
#define VFN(name) fe_k_v16_##name
#define VSET _mm512_set1_ps
#define VSETI _mm512_set1_epi32
#define VADD _mm512_add_ps
#define VSUB _mm512_sub_ps
#define VMUL _mm512_mul_ps
#define VDIV _mm512_div_ps
#define VMIN _mm512_min_ps
#define VMAX _mm512_max_ps
#define VFMA _mm512_fmadd_ps
#define VFNMA _mm512_fnmadd_ps
#define VADDI _mm512_add_epi32
#define VSLLI _mm512_slli_epi32
#define VCASTI _mm512_castps_si512
#define VCASTF _mm512_castsi512_ps
#define VZERO_LT(y, x, c) _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, c, _CMP_NLT_UQ), y)
#define VNAN_KEEP(r, a) _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a)
#define VTI __m512i
#define VSRAI _mm512_srai_epi32
#define FE_K_V16_BITS(op, a, b) _mm512_castsi512_ps(op(_mm512_castps_si512(a), _mm512_castps_si512(b)))
#define VANDB(a, b) FE_K_V16_BITS(_mm512_and_si512, a, b)
#define VANDNB(a, b) FE_K_V16_BITS(_mm512_andnot_si512, a, b)
#define VORB(a, b) FE_K_V16_BITS(_mm512_or_si512, a, b)
#define VXORB(a, b) FE_K_V16_BITS(_mm512_xor_si512, a, b)
#define VANY_GT(a, c) ((int)_mm512_cmp_ps_mask(a, c, _CMP_GT_OQ))
#define VLANES 16
#define VLOADU _mm512_loadu_ps
#define VSTOREU _mm512_storeu_ps
#include "vmath_fn.h"   /* which undefines the names above */
#endif /* AVX-512 */

/* Horizontal sum and max of a vector. */
static inline float fe_k_v8_hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float fe_k_v8_hmax(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float fe_k_v8_hmin(__m256 v)
{
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Load / store the first n (< 8) lanes, padding with pad. */
static inline __m256 fe_k_v8_load_part(const float *p, long n, float pad)
{
    float t[8];
    for (long i = 0; i < 8; i++)
        t[i] = i < n ? p[i] : pad;
    return _mm256_loadu_ps(t);
}

static inline void fe_k_v8_store_part(float *p, __m256 v, long n)
{
    float t[8];
    _mm256_storeu_ps(t, v);
    for (long i = 0; i < n; i++)
        p[i] = t[i];
}
#endif /* AVX2 */

/* Scalar versions, for code that handles one value (row statistics, the
 * integer paths); with AVX2 they go through the vector code. */
static inline float fe_k_expf(float x)
{
#ifdef FE_K_AVX2
    return _mm256_cvtss_f32(fe_k_v8_exp(_mm256_set1_ps(x)));
#else
    return expf(x);
#endif
}

/* sin and cos of one value, through the vector code (as fe_k_expf). */
static inline float fe_k_sinf(float x)
{
#ifdef FE_K_AVX2
    return _mm256_cvtss_f32(fe_k_v8_sin(_mm256_set1_ps(x)));
#else
    return sinf(x);
#endif
}

static inline float fe_k_cosf(float x)
{
#ifdef FE_K_AVX2
    return _mm256_cvtss_f32(fe_k_v8_cos(_mm256_set1_ps(x)));
#else
    return cosf(x);
#endif
}

#endif
