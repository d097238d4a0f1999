/* test_gemm.c: the packed GEMM against a plain triple loop when B is given
 * transposed (a linear layer's weight, B^T row-major) in f32, f16 and bf16,
 * at shapes that take both packing paths (one shared column block, and
 * per-thread blocks past NC columns) with ragged panels in N and K. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "convert.h"
#include "gemm.h"

static uint64_t rng = 88172645463325252ull;

static float rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2 - 1);
}

/* c (M x N) is A B, B^T given as bt ([N, K]), against a double-precision
 * loop within f32's rounding over K terms. */
static void assert_product(const float *a, const float *bt, const float *c, int64_t M,
                           int64_t N, int64_t K)
{
    double worst = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)a[i * K + k] * bt[j * K + k];
            double d = fabs(c[i * N + j] - s) / (1 + fabs(s));
            if (d > worst)
                worst = d;
        }
    assert_true(worst < 1e-5 * sqrt((double)K));
}

/* C = A B with B^T stored as dtype dt ([N, K] row-major); compare with a
 * double-precision loop over the same (rounded) values. */
static void check(int64_t M, int64_t N, int64_t K, int dt, int full_rows)
{
    float *a = malloc((size_t)(M * K) * sizeof(float));
    float *c = malloc((size_t)(M * N) * sizeof(float));
    float *bt = malloc((size_t)(N * K) * sizeof(float));
    uint16_t *bh = malloc((size_t)(N * K) * sizeof(uint16_t));
    assert_non_null(a);
    assert_non_null(c);
    assert_non_null(bt);
    assert_non_null(bh);
    for (int64_t i = 0; i < M * K; i++)
        a[i] = rnd();
    for (int64_t i = 0; i < N * K; i++) {
        float v = rnd();
        if (dt == FE_F16) {
            bh[i] = fe_k_f32_to_f16(v);
            v = fe_k_f16_to_f32(bh[i]);
        } else if (dt == FE_BF16) {
            bh[i] = fe_k_f32_to_bf16(v);
            v = fe_k_bf16_to_f32(bh[i]);
        }
        bt[i] = v;
    }
    fe_k_gemm g;
    memset(&g, 0, sizeof g);
    g.M = M, g.N = N, g.K = K;
    g.a = a, g.adt = FE_F32, g.a_rs = K, g.a_cs = 1;
    g.b = dt == FE_F32 ? (const void *)bt : (const void *)bh, g.bdt = dt, g.b_rs = 1, g.b_cs = K;
    g.c = c, g.ldc = N;
    g.full_rows = full_rows;
    fe_error err = {0};
    assert_int_equal(fe_k_gemm_run(&g, &err), FE_OK);
    assert_product(a, bt, c, M, N, K);
    free(a);
    free(c);
    free(bt);
    free(bh);
}

static void transposed_b(void **state)
{
    (void)state;
    int dts[3] = {FE_F32, FE_F16, FE_BF16};
    for (int d = 0; d < 3; d++) {
        check(7, 37, 300, dts[d], 0);      /* one column block, packed once, shared */
        check(13, 1100, 520, dts[d], 0);   /* past NC: each thread packs its blocks */
        check(9, 700, 257, dts[d], 1);     /* whole rows: one shared block past NC */
        check(1, 16, 1, dts[d], 0);
    }
}

/* An epilogue that copies each finished block into out (N columns) and
 * checks it is whole rows when asked; counts the rows it saw. */
typedef struct {
    float *out;
    int64_t N, rows;
    int full;
} epi_ctx;

static int copy_block(void *ctx, int64_t i0, int64_t mc, int64_t j0, int64_t nc, float *c,
                      int64_t ldc, int tid)
{
    epi_ctx *e = ctx;
    (void)tid;
    if (e->full && (j0 != 0 || nc != e->N))
        return 1;
    for (int64_t i = 0; i < mc; i++)
        memcpy(e->out + (i0 + i) * e->N + j0, c + i * ldc, (size_t)nc * sizeof(float));
    #pragma omp atomic
    e->rows += mc;
    return 0;
}

/* Blocks that live in scratch (c NULL) reach the epilogue with every
 * element right: whole rows wider than NC (computed NC columns at a time,
 * rows a multiple of 4 KiB apart), row shares that are not whole MC
 * blocks, and per-thread column blocks. */
static void epilogue_blocks(void **state)
{
    (void)state;
    int64_t shapes[][4] = {{200, 1024, 300, 1}, {512, 2048, 64, 1}, {37, 700, 129, 1},
                           {200, 1100, 70, 0}, {97, 512, 40, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *a = malloc((size_t)(M * K) * sizeof(float));
        float *bt = malloc((size_t)(N * K) * sizeof(float));
        float *out = calloc((size_t)(M * N), sizeof(float));
        assert_true(a && bt && out);
        for (int64_t i = 0; i < M * K; i++)
            a[i] = rnd();
        for (int64_t i = 0; i < N * K; i++)
            bt[i] = rnd();
        epi_ctx e = {.out = out, .N = N, .full = (int)shapes[s][3]};
        fe_k_gemm g;
        memset(&g, 0, sizeof g);
        g.M = M, g.N = N, g.K = K;
        g.a = a, g.adt = FE_F32, g.a_rs = K, g.a_cs = 1;
        g.b = bt, g.bdt = FE_F32, g.b_rs = 1, g.b_cs = K;
        g.epi = copy_block, g.ectx = &e, g.full_rows = e.full;
        fe_error err = {0};
        assert_int_equal(fe_k_gemm_run(&g, &err), FE_OK);
        int mr, nr, mc, kc, nc;
        fe_k_gemm_blocking(&mr, &nr, &mc, &kc, &nc);
        assert_int_equal(e.rows, M * (e.full || N <= nc ? 1 : (N + nc - 1) / nc));
        assert_product(a, bt, out, M, N, K);
        free(a);
        free(bt);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(transposed_b),
                                       cmocka_unit_test(epilogue_blocks)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
