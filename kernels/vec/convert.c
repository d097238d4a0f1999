/* convert.c: dtype conversions (F16C/AVX2 fast paths, portable fallbacks). */
#include <string.h>

#if defined(__AVX2__) || defined(__F16C__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#include "convert.h"
#include "graph.h"

/* ---- single values, portable ---- */

uint16_t fe_k_f32_to_f16(float x)
{
    uint32_t u, a, sign;
    memcpy(&u, &x, 4);
    sign = (u >> 16) & 0x8000u;
    a = u & 0x7fffffffu;
    if (a > 0x7f800000u)                      /* NaN: quiet, keep top payload */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u)                     /* >= 65520 rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) {                   /* normal f16 */
        uint32_t h = (a - 0x38000000u) >> 13; /* rebias 127 -> 15 */
        uint32_t rem = a & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
            h++;                              /* a carry moves into the exponent */
        return (uint16_t)(sign | h);
    }
    if (a <= 0x33000000u)                     /* <= 2^-25: rounds to zero */
        return (uint16_t)sign;
    {                                         /* subnormal f16: units of 2^-24 */
        uint32_t e = a >> 23, mant = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;            /* 14 .. 24 */
        uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
}

float fe_k_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, mant = h & 0x3ffu, u;
    float f;
    if (e == 0) {
        f = (float)mant * 0x1p-24f;           /* zero or subnormal, exact */
        return sign ? -f : f;
    }
    if (e == 31)
        u = sign | 0x7f800000u | (mant << 13);
    else
        u = sign | ((e + 112u) << 23) | (mant << 13);
    memcpy(&f, &u, 4);
    return f;
}

uint16_t fe_k_f32_to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float fe_k_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline int64_t to_i64(double x)
{
    if (x != x)
        return 0;
    if (x >= 0x1p63)
        return INT64_MAX;
    if (x < -0x1p63)
        return INT64_MIN;
    return (int64_t)x;
}

int64_t fe_k_f64_to_i64(double x)
{
    return to_i64(x);
}

/* A float is a double exactly, and truncates to the same integer. */
int64_t fe_k_f32_to_i64(float x)
{
    return to_i64(x);
}

int fe_k_dtype_is_int(int dt)
{
    return dt == FE_I64 || dt == FE_I32 || dt == FE_I8 || dt == FE_BOOL;
}

int fe_k_dtype_f32_exact(int dt)
{
    return dt != FE_I64 && dt != FE_I32;
}

/* ---- vector helpers ---- */

static void f16_to_f32_n(const uint16_t *s, float *d, int64_t n)
{
    int64_t i = 0;
#ifdef __F16C__
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
#endif
    for (; i < n; i++)
        d[i] = fe_k_f16_to_f32(s[i]);
}

static void f32_to_f16_n(const float *s, uint16_t *d, int64_t n, int nt)
{
    int64_t i = 0;
#ifdef __F16C__
    if (nt) {
        for (; i < n && ((uintptr_t)(d + i) & 15u); i++)
            d[i] = fe_k_f32_to_f16(s[i]);
        for (; i + 8 <= n; i += 8)
            _mm_stream_si128((__m128i *)(d + i),
                             _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
#else
    (void)nt;
#endif
    for (; i < n; i++)
        d[i] = fe_k_f32_to_f16(s[i]);
}

static void bf16_to_f32_n(const uint16_t *s, float *d, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX2__
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
        _mm256_storeu_ps(d + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
#endif
    for (; i < n; i++)
        d[i] = fe_k_bf16_to_f32(s[i]);
}

static void f32_to_bf16_n(const float *s, uint16_t *d, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX2__
    const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
    const __m256i qnan = _mm256_set1_epi32(0x40);
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(s + i);
        __m256i u = _mm256_castps_si256(x);
        __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(bias,
                        _mm256_and_si256(_mm256_srli_epi32(u, 16), one)));
        __m256i nanv = _mm256_or_si256(_mm256_srli_epi32(u, 16), qnan);
        __m256 isnan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
        r = _mm256_srli_epi32(r, 16);
        r = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(r),
                                _mm256_castsi256_ps(nanv), isnan));
        /* pack 32 -> 16 bits: packus works per 128-bit lane, then fix order */
        __m256i p = _mm256_packus_epi32(r, r);
        p = _mm256_permute4x64_epi64(p, 0x08);
        _mm_storeu_si128((__m128i *)(d + i), _mm256_castsi256_si128(p));
    }
#endif
    for (; i < n; i++)
        d[i] = fe_k_f32_to_bf16(s[i]);
}

static void f32_store_nt(float *d, const float *s, int64_t n)
{
    int64_t i = 0;
#ifdef __AVX__
    for (; i < n && ((uintptr_t)(d + i) & 31u); i++)
        d[i] = s[i];
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(d + i, _mm256_loadu_ps(s + i));
#endif
    for (; i < n; i++)
        d[i] = s[i];
}

/* ---- bulk ---- */

void fe_k_load_f32(const void *src, int sdt, int64_t off, float *dst, int64_t n)
{
    int64_t i;
    switch (sdt) {
    case FE_F32:
        memcpy(dst, (const float *)src + off, (size_t)n * sizeof(float));
        break;
    case FE_F16:
        f16_to_f32_n((const uint16_t *)src + off, dst, n);
        break;
    case FE_BF16:
        bf16_to_f32_n((const uint16_t *)src + off, dst, n);
        break;
    case FE_I64: {
        const int64_t *s = (const int64_t *)src + off;
        for (i = 0; i < n; i++)
            dst[i] = (float)s[i];
        break;
    }
    case FE_I32: {
        const int32_t *s = (const int32_t *)src + off;
        for (i = 0; i < n; i++)
            dst[i] = (float)s[i];
        break;
    }
    case FE_I8: {
        const int8_t *s = (const int8_t *)src + off;
        for (i = 0; i < n; i++)
            dst[i] = (float)s[i];
        break;
    }
    case FE_BOOL: {
        const uint8_t *s = (const uint8_t *)src + off;
        for (i = 0; i < n; i++)
            dst[i] = s[i] ? 1.0f : 0.0f;
        break;
    }
    default:
        memset(dst, 0, (size_t)n * sizeof(float));
    }
}

static void store_f32(void *dst, int ddt, int64_t off, const float *src, int64_t n, int nt)
{
    int64_t i;
    switch (ddt) {
    case FE_F32:
        if (nt)
            f32_store_nt((float *)dst + off, src, n);
        else
            memcpy((float *)dst + off, src, (size_t)n * sizeof(float));
        break;
    case FE_F16:
        f32_to_f16_n(src, (uint16_t *)dst + off, n, nt);
        break;
    case FE_BF16:
        f32_to_bf16_n(src, (uint16_t *)dst + off, n);
        break;
    case FE_I64: {
        int64_t *d = (int64_t *)dst + off;
        for (i = 0; i < n; i++)
            d[i] = fe_k_f32_to_i64(src[i]);
        break;
    }
    case FE_I32: {
        int32_t *d = (int32_t *)dst + off;
        for (i = 0; i < n; i++)
            d[i] = (int32_t)(uint32_t)(uint64_t)fe_k_f32_to_i64(src[i]);
        break;
    }
    case FE_I8: {
        int8_t *d = (int8_t *)dst + off;
        for (i = 0; i < n; i++)
            d[i] = (int8_t)(uint8_t)(uint64_t)fe_k_f32_to_i64(src[i]);
        break;
    }
    case FE_BOOL: {
        uint8_t *d = (uint8_t *)dst + off;
        for (i = 0; i < n; i++)
            d[i] = src[i] != 0.0f;
        break;
    }
    default:
        break;
    }
}

void fe_k_store_f32(void *dst, int ddt, int64_t off, const float *src, int64_t n)
{
    store_f32(dst, ddt, off, src, n, 0);
}

void fe_k_store_f32_nt(void *dst, int ddt, int64_t off, const float *src, int64_t n)
{
    store_f32(dst, ddt, off, src, n, 1);
}

void fe_k_stream_fence(void)
{
#ifdef __SSE2__
    _mm_sfence();
#endif
}

void fe_k_load_i64(const void *src, int sdt, int64_t off, int64_t *dst, int64_t n)
{
    int64_t i;
    switch (sdt) {
    case FE_I64:
        memcpy(dst, (const int64_t *)src + off, (size_t)n * sizeof(int64_t));
        break;
    case FE_I32:
        for (i = 0; i < n; i++)
            dst[i] = ((const int32_t *)src)[off + i];
        break;
    case FE_I8:
        for (i = 0; i < n; i++)
            dst[i] = ((const int8_t *)src)[off + i];
        break;
    case FE_BOOL:
        for (i = 0; i < n; i++)
            dst[i] = ((const uint8_t *)src)[off + i] != 0;
        break;
    default: {
        float tmp[256];
        for (i = 0; i < n; i += 256) {
            int64_t m = n - i < 256 ? n - i : 256;
            fe_k_load_f32(src, sdt, off + i, tmp, m);
            for (int64_t j = 0; j < m; j++)
                dst[i + j] = fe_k_f32_to_i64(tmp[j]);
        }
    }
    }
}

void fe_k_store_i64(void *dst, int ddt, int64_t off, const int64_t *src, int64_t n)
{
    int64_t i;
    switch (ddt) {
    case FE_I64:
        memcpy((int64_t *)dst + off, src, (size_t)n * sizeof(int64_t));
        break;
    case FE_I32:
        for (i = 0; i < n; i++)
            ((int32_t *)dst)[off + i] = (int32_t)(uint32_t)(uint64_t)src[i];
        break;
    case FE_I8:
        for (i = 0; i < n; i++)
            ((int8_t *)dst)[off + i] = (int8_t)(uint8_t)(uint64_t)src[i];
        break;
    case FE_BOOL:
        for (i = 0; i < n; i++)
            ((uint8_t *)dst)[off + i] = src[i] != 0;
        break;
    default: {
        float tmp[256];
        for (i = 0; i < n; i += 256) {
            int64_t m = n - i < 256 ? n - i : 256;
            for (int64_t j = 0; j < m; j++)
                tmp[j] = (float)src[i + j];
            fe_k_store_f32(dst, ddt, off + i, tmp, m);
        }
    }
    }
}

void fe_k_round_to(int dt, float *x, int64_t n)
{
    int64_t i = 0;
    switch (dt) {
    case FE_F32:
        return;
    case FE_F16:
#ifdef __F16C__
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i),
                                                                    _MM_FROUND_TO_NEAREST_INT)));
#endif
        for (; i < n; i++)
            x[i] = fe_k_f16_to_f32(fe_k_f32_to_f16(x[i]));
        return;
    case FE_BF16:
        for (; i < n; i++)
            x[i] = fe_k_bf16_to_f32(fe_k_f32_to_bf16(x[i]));
        return;
    case FE_BOOL:
        for (; i < n; i++)
            x[i] = x[i] != 0.0f ? 1.0f : 0.0f;
        return;
    case FE_I64:
        for (; i < n; i++)
            x[i] = (float)fe_k_f32_to_i64(x[i]);
        return;
    case FE_I32:
        for (; i < n; i++)
            x[i] = (float)(int32_t)(uint32_t)(uint64_t)fe_k_f32_to_i64(x[i]);
        return;
    case FE_I8:
        for (; i < n; i++)
            x[i] = (float)(int8_t)(uint8_t)(uint64_t)fe_k_f32_to_i64(x[i]);
        return;
    default:
        return;
    }
}

void fe_k_convert(void *dst, int ddt, const void *src, int sdt, int64_t n)
{
    enum { CH = 1024 };
    if (ddt == sdt) {
        memcpy(dst, src, (size_t)n * (size_t)fe_dtype_size(sdt));
        return;
    }
    if (fe_k_dtype_is_int(ddt) && fe_k_dtype_is_int(sdt)) {
        int64_t tmp[CH];
        for (int64_t i = 0; i < n; i += CH) {
            int64_t m = n - i < CH ? n - i : CH;
            fe_k_load_i64(src, sdt, i, tmp, m);
            fe_k_store_i64(dst, ddt, i, tmp, m);
        }
        return;
    }
    if (sdt == FE_I64 && !fe_k_dtype_is_int(ddt)) {
        /* i64 to float goes straight, not through the 2^24-exact float path */
        int64_t tmp[CH];
        for (int64_t i = 0; i < n; i += CH) {
            int64_t m = n - i < CH ? n - i : CH;
            fe_k_load_i64(src, sdt, i, tmp, m);
            fe_k_store_i64(dst, ddt, i, tmp, m);
        }
        return;
    }
    {
        float tmp[CH];
        for (int64_t i = 0; i < n; i += CH) {
            int64_t m = n - i < CH ? n - i : CH;
            fe_k_load_f32(src, sdt, i, tmp, m);
            fe_k_store_f32(dst, ddt, i, tmp, m);
        }
    }
}
