/* vmath.h: vectorised float32 math (exp, tanh, sigmoid, silu, gelu) for
 * AVX2+FMA, used by every kernel so that a fused and an unfused run compute
 * the same function bit for bit.
 *
 * exp: range reduction x = n ln2 + r with |r| <= ln2/2 (Cody-Waite split of
 * ln2), e^r = 1 + r + r^2 Q(r) with a cubic Q fitted for minimax
 * relative error (1.05e-7, under one ulp; fitted for this file by Lawson's
 * iteratively reweighted least squares): about 1.5 ulp in all and 2^n built in the exponent bits. Results for
 * x < -86.6 (below 2.5e-38) flush to zero: denormals are slow and the
 * difference is under 3e-38; past 88.72 the result overflows to +inf as
 * e^x does; NaN propagates because the clamp puts the constant first
 * (min returns its second operand when either is NaN).
 * tanh: (e^{2x} - 1) / (e^{2x} + 1) with an expm1 built from the same
 * reduction, so it does not cancel near 0.
 * Sigmoid-type functions use 1/(1 + e^-x), which never cancels.
 *
 * Cost. On this machine (two FMA and two add pipes) these functions are
 * bound by latency, not by the pipes: a chain of ~20 dependent operations
 * per vector, of which the out-of-order window holds only a few at once.
 * So the sigmoid family, tanh and softmax's exp use a shorter core
 * (fe_k_v8_exp_ps: one fused reduction step, the scale merged into the
 * caller's multiply-add, clamps instead of masks), measured 10-20% faster
 * at 2.6 to 4.4 ulp (tests/test_kern_ops.c checks the bounds); the division
 * stays, as a reciprocal estimate plus a Newton step measured slower.
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

static inline __m256 fe_k_v8_exp(__m256 x)
{
    /* x <= 89 keeps n <= 128, so 2^(n-1) is a normal float and 2p * 2^(n-1)
     * overflows to +inf by itself exactly when e^x does; x < -86.6 flushes
     * to 0 (it keeps n - 1 >= -126). Adding 1.5 * 2^23 rounds x log2(e) to
     * the integer n and leaves n in the low mantissa bits of t. */
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 xc = _mm256_min_ps(_mm256_set1_ps(89.0f), x);
    __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), magic);
    __m256 n = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    /* e^r = 1 + r + r^2 Q(r), Q cubic by Estrin's scheme (short dependency chain) */
    __m256 r2 = _mm256_mul_ps(r, r);
    __m256 qa = _mm256_fmadd_ps(_mm256_set1_ps(1.6667114465e-01f), r, _mm256_set1_ps(4.9999231790e-01f));
    __m256 qb = _mm256_fmadd_ps(_mm256_set1_ps(8.3125249458e-03f), r, _mm256_set1_ps(4.1890113276e-02f));
    __m256 q = _mm256_fmadd_ps(qb, r2, qa);
    __m256 p = _mm256_fmadd_ps(q, r2, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_castps_si256(t),
                                                   _mm256_set1_epi32(126 - 0x4B400000)), 23);
    __m256 y = _mm256_mul_ps(_mm256_add_ps(p, p), _mm256_castsi256_ps(e));
    return _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-86.6f), _CMP_LT_OQ), y);
}

/* The core the sigmoid family shares: e^u = p * s for u in [-87, 89]
 * (callers clamp), s = 2^n (+inf for n = 128, so 1 + p s overflows exactly
 * when it should for the sigmoid's purposes) and p = e^r, r = u - n ln2.
 * Fewer operations and a shorter dependency chain than fe_k_v8_exp: one
 * fused reduction step with ln2 rounded to float, whose small error
 * (n * 1.9e-9) is folded into the linear term, and the scale left to the
 * caller, who merges it into its own multiply-add. The core is
 * latency-bound (the out-of-order window holds few such chains), so every
 * step off the chain counts. */
static inline __m256 fe_k_v8_exp_ps(__m256 u, __m256 *s)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 t = _mm256_fmadd_ps(u, _mm256_set1_ps(1.44269504088896341f), magic);
    __m256 n = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693147182464599609f), u);
    __m256 one_lo = _mm256_fnmadd_ps(n, _mm256_set1_ps(-1.9046542121e-9f), _mm256_set1_ps(1.0f));
    __m256 r2 = _mm256_mul_ps(r, r);
    __m256 qa = _mm256_fmadd_ps(_mm256_set1_ps(1.6667114465e-01f), r, _mm256_set1_ps(4.9999231790e-01f));
    __m256 qb = _mm256_fmadd_ps(_mm256_set1_ps(8.3125249458e-03f), r, _mm256_set1_ps(4.1890113276e-02f));
    __m256 q = _mm256_fmadd_ps(qb, r2, qa);
    *s = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(127 - 0x4B400000)), 23));
    return _mm256_fmadd_ps(q, r2, _mm256_add_ps(r, one_lo));
}

/* e^u for u <= 0 (softmax's x - max): 0 below -87 (the core's range ends
 * there; -inf gives exactly 0), NaN stays NaN (the scale is a multiply). */
static inline __m256 fe_k_v8_exp_nonpos(__m256 u)
{
    __m256 s, p = fe_k_v8_exp_ps(u, &s);
    return _mm256_andnot_ps(_mm256_cmp_ps(u, _mm256_set1_ps(-87.0f), _CMP_LT_OQ), _mm256_mul_ps(p, s));
}

/* 1 + e^u for any u: the clamps keep the core's range (NaN passes them:
 * max/min return their second operand when either is NaN). Below -87,
 * e^u < 1.7e-38 vanishes next to 1; from 88.7 up it is +inf. */
static inline __m256 fe_k_v8_one_plus_exp(__m256 u)
{
    __m256 s, uc = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), u));
    __m256 p = fe_k_v8_exp_ps(uc, &s);
    return _mm256_fmadd_ps(p, s, _mm256_set1_ps(1.0f));
}

/* e^x - 1 for |x| <= 18 (callers clamp), accurate near 0: with
 * x = n ln2 + r and s = 2^n, e^x - 1 = s (e^r - 1) + (s - 1), where
 * e^r - 1 = r + r^2 Q(r) has no cancellation and s - 1 is exact. */
static inline __m256 fe_k_v8_expm1_small(__m256 x)
{
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), magic);
    __m256 n = _mm256_sub_ps(t, magic);
    /* one fused step: n ln2 error is n * 1.9e-9 <= 5e-8 here, under an ulp */
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693147182464599609f), x);
    __m256 r2 = _mm256_mul_ps(r, r);
    __m256 qa = _mm256_fmadd_ps(_mm256_set1_ps(1.6666520690e-01f), r, _mm256_set1_ps(4.9999993452e-01f));
    __m256 qb = _mm256_fmadd_ps(_mm256_set1_ps(8.3687098318e-03f), r, _mm256_set1_ps(4.1668387365e-02f));
    __m256 q = _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_set1_ps(1.3814613093e-03f), r2, qb), r2, qa);
    __m256 pm1 = _mm256_fmadd_ps(q, r2, r);
    __m256 sc = _mm256_castsi256_ps(_mm256_slli_epi32(
        _mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(127 - 0x4B400000)), 23));
    return _mm256_fmadd_ps(sc, pm1, _mm256_sub_ps(sc, _mm256_set1_ps(1.0f)));
}

/* 1 / (1 + e^-x). The division stays: on this core the divider runs beside
 * the FMA pipes, and a reciprocal estimate plus a Newton step costs three
 * more operations on them (measured slower). */
static inline __m256 fe_k_v8_sigmoid(__m256 x)
{
    __m256 d = fe_k_v8_one_plus_exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(_mm256_set1_ps(1.0f), d);
}

/* x * sigmoid(x) as x / (1 + e^-x): one division. x = -inf gives
 * -inf / +inf = NaN, as x * sigmoid(x) does. */
static inline __m256 fe_k_v8_silu(__m256 x)
{
    __m256 d = fe_k_v8_one_plus_exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(x, d);
}

/* x * sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3): the tanh form of GELU,
 * since 0.5 (1 + tanh(z)) = sigmoid(2z); computed as x / (1 + e^{-2z}). */
static inline __m256 fe_k_v8_gelu_tanh(__m256 x)
{
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 mz = _mm256_mul_ps(x, _mm256_fmadd_ps(x2, _mm256_set1_ps(-0.044715f * 1.5957691216057308f),
                                                  _mm256_set1_ps(-1.5957691216057308f)));
    return _mm256_div_ps(x, fe_k_v8_one_plus_exp(mz));
}

/* tanh(x) = m / (m + 2) with m = e^{2x} - 1, x clamped to [-9, 9] (tanh is
 * +-1 in float beyond); NaN passes through the clamps. */
static inline __m256 fe_k_v8_tanh(__m256 x)
{
    __m256 xc = _mm256_max_ps(_mm256_set1_ps(-9.0f), _mm256_min_ps(_mm256_set1_ps(9.0f), x));
    __m256 m = fe_k_v8_expm1_small(_mm256_add_ps(xc, xc));
    return _mm256_div_ps(m, _mm256_add_ps(m, _mm256_set1_ps(2.0f)));
}

/* NaN-propagating max/min (maximum / minimum ops): vmaxps returns its
 * second operand when either is NaN, so put b second and then restore a
 * where a is NaN. */
static inline __m256 fe_k_v8_maxnan(__m256 a, __m256 b)
{
    return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

static inline __m256 fe_k_v8_minnan(__m256 a, __m256 b)
{
    return _mm256_blendv_ps(_mm256_min_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

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

#endif
