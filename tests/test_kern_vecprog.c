/* test_kern_vecprog.c: the vector-program evaluator, form by form. Every
 * (op, operands in memory) form the evaluator has, with every choice of
 * walked or broadcast memory operands, runs over widths that exercise the
 * handlers of each strip size and a partial last vector, and must give,
 * bit for bit, what the op's scalar definition gives (the transcendental
 * ops: what the 8-lane vmath functions give, which is also what the per-op
 * kernels compute), and write nothing past the tile. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#include "vecprog.h"

#define MAXW 300
#define GUARD 64


#ifdef FE_K_AVX2
/* 64-byte aligned (streaming stores need 16 floats' alignment) */
static void *alloc64(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}

static int arity(int op)
{
    if (op == FE_V_LD || op == FE_V_ST || op < FE_V_ADD)
        return 1;
    return op < FE_V_FMA ? 2 : 3;
}

static float lane0(__m256 v)
{
    return _mm256_cvtss_f32(v);
}

/* x86's max and min: the second operand unless the first is strictly
 * greater (less), so NaN and equal zeros give the second. */
static float maxps(float a, float b)
{
    return a > b ? a : b;
}

static float minps(float a, float b)
{
    return a < b ? a : b;
}

/* Op `op` on operand values v[0..arity), as its scalar definition. */
static float ref(int op, const float *v)
{
    __m256 x = _mm256_set1_ps(v[0]);
    switch (op) {
    case FE_V_LD: return v[0];
    case FE_V_RELU: return maxps(0.0f, v[0]);
    case FE_V_SILU: return lane0(fe_k_v8_silu(x));
    case FE_V_SIGMOID: return lane0(fe_k_v8_sigmoid(x));
    case FE_V_TANH: return lane0(fe_k_v8_tanh(x));
    case FE_V_EXP: return lane0(fe_k_v8_exp(x));
    case FE_V_NEG: return -v[0];
    case FE_V_ABS: return fabsf(v[0]);
    case FE_V_SQRT: return sqrtf(v[0]);
    case FE_V_RSQRT: return 1.0f / sqrtf(v[0]);
    case FE_V_RECIP: return 1.0f / v[0];
    case FE_V_GELU_TANH: return lane0(fe_k_v8_gelu_tanh(x));
    case FE_V_HARDSIGMOID: return minps(6.0f, maxps(0.0f, v[0] + 3.0f)) / 6.0f;
    case FE_V_HARDSWISH: return v[0] * minps(6.0f, maxps(0.0f, v[0] + 3.0f)) / 6.0f;
    case FE_V_SIN: return lane0(fe_k_v8_sin(x));
    case FE_V_COS: return lane0(fe_k_v8_cos(x));
    case FE_V_ADD: return v[0] + v[1];
    case FE_V_SUB: return v[0] - v[1];
    case FE_V_MUL: return v[0] * v[1];
    case FE_V_DIV: return v[0] / v[1];
    case FE_V_MAX: return isnan(v[0]) ? v[0] : maxps(v[0], v[1]);
    case FE_V_MIN: return isnan(v[0]) ? v[0] : minps(v[0], v[1]);
    case FE_V_FMA: return fmaf(v[0], v[1], v[2]);
    case FE_V_WHERE: return v[0] == 0.0f ? v[2] : v[1];
    case FE_V_SSQ: return v[0];   /* the accumulator passes through */
    default: fail_msg("no reference for op %d", op);
    }
    return 0;
}

/* Inputs: src[k] walks for operand k (src[3] for the accumulator), and
 * bc[k] holds FE_K_VLANES copies of operand k's broadcast value. Values
 * stay positive where an op needs them to (sqrt), and cross zero, large
 * and small magnitudes elsewhere. */
static float *src[4], *bc[3];

static void fill(int op)
{
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < MAXW; j++) {
            float v = (float)(((j * 37 + k * 11) % 41) - 20) * 0.37f + (float)k * 0.01f;
            if (j % 13 == 5)
                v = 0.0f;
            if (j % 17 == 3)
                v *= 30.0f;
            if (op == FE_V_SQRT || op == FE_V_RSQRT)
                v = fabsf(v) + 0.5f;
            src[k][j] = v;
        }
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < FE_K_VLANES; l++)
            bc[k][l] = k == 0 ? 1.75f : k == 1 ? -0.0f : 2.5f;
}

/* FE_V_SSQ's partial sums, and what they must add up to after a run over w
 * elements of the accumulator src[3]: the sum of squares, to float
 * rounding (the order is the evaluator's), and not a lane past w. */
static float *sums;

static void check_sums(int64_t w)
{
    double want = 0;
    for (int64_t j = 0; j < w; j++)
        want += (double)src[3][j] * src[3][j];
    float got = fe_k_vsums_total(sums);
    if (fabs(got - want) > 1e-6 * want + 1e-30)
        fail_msg("sum of squares over %lld: %.9g, want %.9g", (long long)w, got, want);
}

/* Run op in form (in_mem, bcast) over w elements (streaming stores if nt)
 * and compare with ref; out has GUARD floats past w that must stay. */
static void check_form(int op, unsigned in_mem, unsigned bcast, int64_t w, int nt, float *out)
{
    fe_k_vbound prog[4];
    int n = 0;
    memset(prog, 0, sizeof prog);
    if (op != FE_V_LD) {
        prog[n].code = fe_k_vcode(FE_V_LD, 1);   /* the accumulator operand */
        prog[n++].p[0] = src[3];
    }
    fe_k_vbound *o = &prog[n++];
    o->code = fe_k_vbcast(fe_k_vcode(op, in_mem), bcast);
    for (int k = 0; k < 3; k++)
        if ((in_mem >> k) & 1)
            o->p[k] = (bcast >> k) & 1 ? bc[k] : src[k];
    if (op == FE_V_SSQ)
        o->p[0] = memset(sums, 0, FE_K_VSUMS * sizeof(float));
    prog[n].code = fe_k_vcode(FE_V_ST, 1);
    prog[n].nt = nt;
    prog[n++].p[0] = out;
    prog[n].code = fe_k_vcode(FE_V_END, 0);
    for (int j = 0; j < w + GUARD; j++)
        out[j] = 12345.0f;
    fe_k_vrun(prog, w, NULL);
    for (int64_t j = 0; j < w; j++) {
        float v[3] = {0, 0, 0};
        for (int k = 0; k < arity(op); k++)
            v[k] = !((in_mem >> k) & 1) ? src[3][j] : (bcast >> k) & 1 ? bc[k][0] : src[k][j];
        float want = ref(op, v);
        if (memcmp(&want, &out[j], sizeof want) && !(isnan(want) && isnan(out[j])))
            fail_msg("op %d form %u bcast %u w %lld nt %d: element %lld is %.9g, want %.9g", op,
                     in_mem, bcast, (long long)w, nt, (long long)j, out[j], want);
    }
    for (int j = 0; j < GUARD; j++)
        if (out[w + j] != 12345.0f)
            fail_msg("op %d form %u bcast %u w %lld: wrote element %lld past the tile", op, in_mem,
                     bcast, (long long)w, (long long)(w + j));
    if (op == FE_V_SSQ)
        check_sums(w);
}

static void test_every_form(void **state)
{
    (void)state;
    static const int64_t widths[] = {1, 7, 8, 15, 16, 17, 33, 63, 64, 65, 127, 128, 129, 192, 200, 255, 300};
    float *out = alloc64((MAXW + GUARD) * sizeof(float));
    for (int k = 0; k < 4; k++)
        src[k] = malloc(MAXW * sizeof(float));
    for (int k = 0; k < 3; k++)
        bc[k] = alloc64(64 * sizeof(float));
    sums = alloc64(FE_K_VSUMS * sizeof(float));
    int forms = 0;
    for (int op = 0; op < FE_V_END; op++) {
        if (op == FE_V_ST)
            continue;   /* every program ends in one */
        fill(op);
        for (unsigned m = 0; m < 8; m++) {
            if (!fe_k_vform_ok(op, m))
                continue;
            forms++;
            for (unsigned b = 0; b < 8; b++) {
                if (b & ~m)
                    continue;
                for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
                    for (int nt = 0; nt < 2; nt++)
                        check_form(op, m, b, widths[i], nt, out);
            }
        }
    }
    /* 15 unary, LD, add and mul (one form each), sub, div, max and min
     * (two), fma and where (three), SSQ */
    assert_int_equal(forms, 15 + 1 + 2 + 8 + 6 + 1);
    assert_true(fe_k_vform_ok(FE_V_ST, 1));
    assert_false(fe_k_vform_ok(FE_V_ADD, 1));
    assert_false(fe_k_vform_ok(FE_V_FMA, 7));
    assert_false(fe_k_vform_ok(FE_V_END, 0));
    free(out);
    for (int k = 0; k < 4; k++)
        free(src[k]);
    for (int k = 0; k < 3; k++)
        free(bc[k]);
    free(sums);
}

/* A longer program: values pass from op to op in the accumulator, and a
 * program may store more than once. */
static void test_chain(void **state)
{
    (void)state;
    enum { W = 131 };
    float *x = malloc(W * sizeof(float)), *y1 = alloc64(192 * sizeof(float));
    float *y2 = malloc(W * sizeof(float)), *cb = alloc64(64 * sizeof(float));
    for (int j = 0; j < W; j++)
        x[j] = (float)(j - 60) * 0.05f;
    for (int l = 0; l < 64; l++)
        cb[l] = 0.5f;
    fe_k_vbound p[8];
    memset(p, 0, sizeof p);
    p[0].code = fe_k_vcode(FE_V_LD, 1), p[0].p[0] = x;
    p[1].code = fe_k_vbcast(fe_k_vcode(FE_V_MUL, 2), 2), p[1].p[1] = cb;
    p[2].code = fe_k_vcode(FE_V_TANH, 0);
    p[3].code = fe_k_vcode(FE_V_ST, 1), p[3].p[0] = y1, p[3].nt = 1;
    p[4].code = fe_k_vcode(FE_V_ADD, 2), p[4].p[1] = x;
    p[5].code = fe_k_vcode(FE_V_ST, 1), p[5].p[0] = y2;
    p[6].code = fe_k_vcode(FE_V_END, 0);
    fe_k_vrun(p, W, NULL);
    for (int j = 0; j < W; j++) {
        float t = lane0(fe_k_v8_tanh(_mm256_set1_ps(x[j] * 0.5f)));
        assert_float_equal(y1[j], t, 0.0f);
        assert_float_equal(y2[j], t + x[j], 0.0f);
    }
    free(x), free(y1), free(y2), free(cb);
}
/* SSQ after an op that makes the lanes past a partial last vector nonzero
 * (sigmoid, 0.5 at the zeros a masked load leaves there): those lanes must
 * add nothing. Every width to 300. */
static void test_sumsq_tail(void **state)
{
    (void)state;
    float *x = malloc(MAXW * sizeof(float)), *y = alloc64(MAXW * sizeof(float));
    float *s = alloc64(FE_K_VSUMS * sizeof(float));
    for (int j = 0; j < MAXW; j++)
        x[j] = (float)((j * 29) % 23) * 0.25f - 2.0f;
    for (int64_t w = 1; w <= MAXW; w++) {
        fe_k_vbound p[5];
        memset(p, 0, sizeof p);
        p[0].code = fe_k_vcode(FE_V_LD, 1), p[0].p[0] = x;
        p[1].code = fe_k_vcode(FE_V_SIGMOID, 0);
        p[2].code = fe_k_vcode(FE_V_SSQ, 0), p[2].p[0] = memset(s, 0, FE_K_VSUMS * sizeof(float));
        p[3].code = fe_k_vcode(FE_V_ST, 1), p[3].p[0] = y;
        p[4].code = fe_k_vcode(FE_V_END, 0);
        fe_k_vrun(p, w, NULL);
        double want = 0;
        for (int64_t j = 0; j < w; j++) {
            assert_float_equal(y[j], lane0(fe_k_v8_sigmoid(_mm256_set1_ps(x[j]))), 0.0f);
            want += (double)y[j] * y[j];
        }
        double got = fe_k_vsums_total(s);
        if (fabs(got - want) > 1e-6 * want)
            fail_msg("width %lld: sum of squares %.9g, want %.9g", (long long)w, got, want);
    }
    free(x), free(y), free(s);
}
#else
static void test_sumsq_tail(void **state)
{
    (void)state;
    skip();
}

static void test_every_form(void **state)
{
    (void)state;
    assert_false(fe_k_vform_ok(FE_V_LD, 1));   /* no evaluator: every form is refused */
    skip();
}

static void test_chain(void **state)
{
    (void)state;
    skip();
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_form),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_sumsq_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
