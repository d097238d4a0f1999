/* test_kern_convert.c: dtype conversions: f16/bf16 round trips and round to
 * nearest even against an independent search-based reference, the F16C fast
 * path against the portable fallback (compiled here without SIMD), and the
 * integer / bool rules. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "convert.h"

/* The portable fallback: convert.c again, renamed, with the SIMD macros off. */
#define fe_k_f32_to_f16 port_f32_to_f16
#define fe_k_f16_to_f32 port_f16_to_f32
#define fe_k_f32_to_bf16 port_f32_to_bf16
#define fe_k_bf16_to_f32 port_bf16_to_f32
#define fe_k_f32_to_i64 port_f32_to_i64
#define fe_k_f64_to_i64 port_f64_to_i64
#define fe_k_load_f32 port_load_f32
#define fe_k_store_f32 port_store_f32
#define fe_k_store_f32_nt port_store_f32_nt
#define fe_k_stream_fence port_stream_fence
#define fe_k_load_i64 port_load_i64
#define fe_k_store_i64 port_store_i64
#define fe_k_round_to port_round_to
#define fe_k_convert port_convert
#define fe_k_dtype_is_int port_dtype_is_int
#define fe_k_dtype_f32_exact port_dtype_f32_exact
#undef __F16C__
#undef __AVX2__
#undef __AVX__
#undef __SSE2__
#include "../kernels/vec/convert.c"
#undef fe_k_f32_to_f16
#undef fe_k_f16_to_f32
#undef fe_k_f32_to_bf16
#undef fe_k_bf16_to_f32
#undef fe_k_f32_to_i64
#undef fe_k_f64_to_i64
#undef fe_k_load_f32
#undef fe_k_store_f32
#undef fe_k_store_f32_nt
#undef fe_k_stream_fence
#undef fe_k_load_i64
#undef fe_k_store_i64
#undef fe_k_round_to
#undef fe_k_convert
#undef fe_k_dtype_is_int
#undef fe_k_dtype_f32_exact

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t xr(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Independent f16 reference: the value of every finite f16 as a double
 * (exact), nearest by binary search, ties to the even encoding. */
static double f16val[65536];
static uint16_t f16pos[31745];      /* non-negative finite f16 encodings 0 .. 0x7bff, sorted */

static void build_f16(void)
{
    for (uint32_t h = 0; h < 0x7c00; h++) {
        int e = (h >> 10) & 31, m = h & 1023;
        f16val[h] = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
        f16pos[h] = (uint16_t)h;
    }
}

static uint16_t ref_f16(float f)
{
    double x = fabs((double)f);
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    if (isnan(f))
        return 0x7e00;
    if (x >= 65520.0)                  /* halfway above 65504 rounds up to inf */
        return sign | 0x7c00;
    int lo = 0, hi = 0x7bff;            /* largest encoding with value <= x */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (f16val[f16pos[mid]] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint16_t a = f16pos[lo];
    if (f16val[a] == x || a == 0x7bff)
        return sign | a;
    double da = x - f16val[a], db = f16val[a + 1] - x;
    if (da < db || (da == db && !(a & 1)))
        return sign | a;
    return sign | (uint16_t)(a + 1);
}

static uint16_t ref_bf16(float f)
{
    uint32_t u = bits(f);
    if (isnan(f))
        return 0x7fc0;
    uint32_t t = u & 0xffff0000u;      /* truncation and the next encoding up */
    if (isinf(f))
        return (uint16_t)(u >> 16);
    double x = f, a = from_bits(t), b = from_bits(t + 0x10000u);
    if (isinf(b))                      /* rounding up reaches 2^128, i.e. inf */
        b = copysign(ldexp(1.0, 128), x);
    double da = fabs(x - a), db = fabs(b - x);
    if (da < db || (da == db && !((t >> 16) & 1)))
        return (uint16_t)(t >> 16);
    return (uint16_t)((t >> 16) + 1);
}

static float interesting(int i)
{
    static const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f,
                              1e-8f, 5.96046448e-8f, 2.98023224e-8f, 2.98023225e-8f, 4.4703484e-8f,
                              6.1035156e-5f, 6.1035152e-5f, 1.00048828f, 1.00146484f, 3.4e38f,
                              -3.4e38f, 1e-45f, 1.17549435e-38f, INFINITY, -INFINITY};
    int n = (int)(sizeof v / sizeof v[0]);
    if (i < n)
        return v[i];
    switch (i % 4) {
    case 0: return from_bits(xr());                         /* any bits */
    case 1: return (float)((int)(xr() % 200001) - 100000) / 1024.0f;
    case 2: return ldexpf((float)(xr() % 2048) / 1024.0f, (int)(xr() % 40) - 30);
    default: return from_bits((xr() & 0x8fffe000u) | 0x1000u); /* exact f16 ties */
    }
}

static void test_f16_roundtrip_all(void **state)
{
    (void)state;
    float f[8];
    uint16_t h2[8];
    for (uint32_t h = 0; h < 65536; h++) {
        float x = fe_k_f16_to_f32((uint16_t)h);
        assert_true(bits(x) == bits(port_f16_to_f32((uint16_t)h)));
        if (((h >> 10) & 31) == 31 && (h & 1023)) {
            assert_true(isnan(x));
            assert_true(fe_k_f32_to_f16(x) == (h | 0x200));   /* quieted, payload kept */
            continue;
        }
        assert_int_equal(fe_k_f32_to_f16(x), h);
        assert_int_equal(port_f32_to_f16(x), h);
        /* the bulk (F16C when built with it) path agrees */
        uint16_t hs = (uint16_t)h;
        fe_k_load_f32(&hs, FE_F16, 0, f, 1);
        assert_true(bits(f[0]) == bits(x));
        for (int k = 0; k < 8; k++)
            f[k] = x;
        fe_k_store_f32(h2, FE_F16, 0, f, 8);
        for (int k = 0; k < 8; k++)
            assert_int_equal(h2[k], h);
    }
}

static void test_f16_round_nearest_even(void **state)
{
    (void)state;
    enum { N = 200000 };
    float *x = malloc(N * sizeof(float));
    uint16_t *h = malloc(N * sizeof(uint16_t)), *hp = malloc(N * sizeof(uint16_t));
    build_f16();
    for (int i = 0; i < N; i++)
        x[i] = interesting(i);
    fe_k_store_f32(h, FE_F16, 0, x, N);          /* fast path */
    port_store_f32(hp, FE_F16, 0, x, N);         /* portable */
    for (int i = 0; i < N; i++) {
        uint16_t want = ref_f16(x[i]);
        if (isnan(x[i])) {
            assert_true((h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff));
            assert_true((hp[i] & 0x7c00) == 0x7c00 && (hp[i] & 0x3ff));
            continue;
        }
        if (h[i] != want || hp[i] != want || fe_k_f32_to_f16(x[i]) != want)
            fail_msg("f16 of %a: fast %04x portable %04x scalar %04x, want %04x", (double)x[i], h[i],
                     hp[i], fe_k_f32_to_f16(x[i]), want);
    }
    assert_int_equal(fe_k_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(fe_k_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(fe_k_f32_to_f16(2.98023224e-8f), 0x0000);  /* 2^-25: tie to even zero */
    assert_int_equal(fe_k_f32_to_f16(1.00048828125f), 0x3c00);  /* 1 + 2^-11: tie to even */
    free(x);
    free(h);
    free(hp);
}

static void test_bf16_round_nearest_even(void **state)
{
    (void)state;
    enum { N = 200000 };
    float *x = malloc(N * sizeof(float)), *back = malloc(N * sizeof(float));
    uint16_t *h = malloc(N * sizeof(uint16_t)), *hp = malloc(N * sizeof(uint16_t));
    for (int i = 0; i < N; i++)
        x[i] = i % 4 == 3 ? from_bits((xr() & 0xffff0000u) | 0x8000u) : interesting(i);
    fe_k_store_f32(h, FE_BF16, 0, x, N);
    port_store_f32(hp, FE_BF16, 0, x, N);
    for (int i = 0; i < N; i++) {
        if (isnan(x[i])) {
            assert_true(isnan(fe_k_bf16_to_f32(h[i])) && isnan(fe_k_bf16_to_f32(hp[i])));
            continue;
        }
        uint16_t want = ref_bf16(x[i]);
        if (h[i] != want || hp[i] != want)
            fail_msg("bf16 of %a: fast %04x portable %04x want %04x", (double)x[i], h[i], hp[i], want);
    }
    /* round trip of every bf16 */
    for (uint32_t b = 0; b < 65536; b++) {
        float f = fe_k_bf16_to_f32((uint16_t)b);
        if (isnan(f))
            continue;
        assert_int_equal(fe_k_f32_to_bf16(f), b);
    }
    fe_k_load_f32(h, FE_BF16, 0, back, N);
    for (int i = 0; i < N; i++)
        assert_true(isnan(back[i]) || bits(back[i]) == (uint32_t)h[i] << 16);
    free(x);
    free(back);
    free(h);
    free(hp);
}

static void test_integer_rules(void **state)
{
    (void)state;
    float x[] = {NAN, INFINITY, -INFINITY, 2.9f, -2.9f, 3e9f, -3e9f, 1e20f, 0.0f, -0.5f, 300.7f};
    int n = (int)(sizeof x / sizeof x[0]);
    int64_t i64[16];
    int32_t i32[16];
    int8_t i8[16];
    uint8_t b[16];
    fe_k_store_f32(i64, FE_I64, 0, x, n);
    fe_k_store_f32(i32, FE_I32, 0, x, n);
    fe_k_store_f32(i8, FE_I8, 0, x, n);
    fe_k_store_f32(b, FE_BOOL, 0, x, n);
    int64_t want64[] = {0, INT64_MAX, INT64_MIN, 2, -2, 3000000000LL, -3000000000LL, INT64_MAX, 0, 0, 300};
    for (int i = 0; i < n; i++) {
        assert_true(i64[i] == want64[i]);
        assert_true(i32[i] == (int32_t)(uint32_t)(uint64_t)want64[i]);   /* wraps */
        assert_true(i8[i] == (int8_t)(uint8_t)(uint64_t)want64[i]);
        assert_int_equal(b[i], x[i] != 0.0f);                            /* NaN is true */
    }
    /* integers and bools to float and back, exactly */
    int64_t iv[] = {0, 1, -1, 16777216, -16777216, 123456789012LL};
    float f[8];
    fe_k_load_f32(iv, FE_I64, 0, f, 6);
    assert_true(f[3] == 16777216.0f && f[4] == -16777216.0f && f[1] == 1.0f);
    /* what f32 holds exactly: every dtype but i32 and i64, past 2^24 */
    int64_t odd = 16777217;
    fe_k_load_f32(&odd, FE_I64, 0, f, 1);
    assert_true((int64_t)f[0] != odd);
    for (int dt = 0; dt < FE_NDTYPE; dt++)
        assert_int_equal(fe_k_dtype_f32_exact(dt), dt != FE_I32 && dt != FE_I64);
    double d[1];
    int64_t big = 123456789012345LL, back;
    fe_k_convert(d, FE_I64, &big, FE_I64, 1);
    memcpy(&back, d, 8);
    assert_true(back == big);
    uint8_t bb[3] = {0, 1, 7};
    fe_k_load_f32(bb, FE_BOOL, 0, f, 3);
    assert_true(f[0] == 0.0f && f[1] == 1.0f && f[2] == 1.0f);
    /* rounding in place matches a store and reload */
    float r[6] = {1.00048828125f, 3.14159265f, -2.7f, 0.0f, 1e-9f, NAN};
    float r2[6];
    uint16_t hh[6];
    memcpy(r2, r, sizeof r);
    fe_k_round_to(FE_F16, r, 6);
    fe_k_store_f32(hh, FE_F16, 0, r2, 6);
    fe_k_load_f32(hh, FE_F16, 0, r2, 6);
    for (int i = 0; i < 5; i++)
        assert_true(bits(r[i]) == bits(r2[i]));
    assert_true(isnan(r[5]));
    float q[3] = {2.9f, -2.9f, NAN};
    fe_k_round_to(FE_I32, q, 3);
    assert_true(q[0] == 2.0f && q[1] == -2.0f && q[2] == 0.0f);
    float bo[3] = {0.0f, -3.0f, NAN};
    fe_k_round_to(FE_BOOL, bo, 3);
    assert_true(bo[0] == 0.0f && bo[1] == 1.0f && bo[2] == 1.0f);
}

static void test_nontemporal_and_convert(void **state)
{
    (void)state;
    enum { N = 1000 };
    float *x = malloc(N * sizeof(float)), *y = malloc((N + 8) * sizeof(float));
    uint16_t *h = malloc((N + 8) * sizeof(uint16_t)), *h2 = malloc(N * sizeof(uint16_t));
    for (int i = 0; i < N; i++)
        x[i] = interesting(i + 50);
    /* odd offsets exercise the unaligned head and tail */
    for (int off = 0; off < 8; off++) {
        fe_k_store_f32_nt(y, FE_F32, off, x, N);
        fe_k_store_f32_nt(h, FE_F16, off, x, N);
        fe_k_stream_fence();
        fe_k_store_f32(h2, FE_F16, 0, x, N);
        for (int i = 0; i < N; i++) {
            assert_true(bits(y[off + i]) == bits(x[i]));
            assert_int_equal(h[off + i], h2[i]);
        }
    }
    /* every dtype pair through fe_k_convert agrees with load + store */
    static const int dts[] = {FE_F32, FE_F16, FE_BF16, FE_I64, FE_I32, FE_I8, FE_BOOL};
    char src[8 * 64], dst[8 * 64], dst2[8 * 64];
    float tmp[64];
    for (int i = 0; i < 64; i++)
        tmp[i] = (float)((int)(xr() % 201) - 100) * 0.75f;
    for (int a = 0; a < 7; a++)
        for (int b = 0; b < 7; b++) {
            fe_k_store_f32(src, dts[a], 0, tmp, 64);
            fe_k_convert(dst, dts[b], src, dts[a], 64);
            port_convert(dst2, dts[b], src, dts[a], 64);
            assert_memory_equal(dst, dst2, (size_t)(64 * fe_dtype_size(dts[b])));
        }
    free(x);
    free(y);
    free(h);
    free(h2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_roundtrip_all),
        cmocka_unit_test(test_f16_round_nearest_even),
        cmocka_unit_test(test_bf16_round_nearest_even),
        cmocka_unit_test(test_integer_rules),
        cmocka_unit_test(test_nontemporal_and_convert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
