/* vecprog.c: register-resident evaluation of elementwise runs (see vecprog.h). */
#include "vecprog.h"
#include "ops.h"
#include "vmath.h"

#ifdef FE_K_AVX2

int fe_k_vop_unary(int op, int approx_tanh)
{
    switch (op) {
    case FE_OP_RELU: return FE_V_RELU;
    case FE_OP_SILU: return FE_V_SILU;
    case FE_OP_SIGMOID: return FE_V_SIGMOID;
    case FE_OP_TANH: return FE_V_TANH;
    case FE_OP_EXP: return FE_V_EXP;
    case FE_OP_NEG: return FE_V_NEG;
    case FE_OP_ABS: return FE_V_ABS;
    case FE_OP_SQRT: return FE_V_SQRT;
    case FE_OP_RSQRT: return FE_V_RSQRT;
    case FE_OP_RECIPROCAL: return FE_V_RECIP;
    case FE_OP_GELU: return approx_tanh ? FE_V_GELU_TANH : -1;
    default: return -1;
    }
}

int fe_k_vop_binary(int op)
{
    switch (op) {
    case FE_OP_ADD: return FE_V_ADD;
    case FE_OP_SUB: return FE_V_SUB;
    case FE_OP_MUL: return FE_V_MUL;
    case FE_OP_DIV: return FE_V_DIV;
    case FE_OP_MAXIMUM: return FE_V_MAX;
    case FE_OP_MINIMUM: return FE_V_MIN;
    default: return -1;
    }
}

#define ALWAYS static inline __attribute__((always_inline))

int fe_k_vcode(int op, unsigned in_mem)
{
    return op * 8 + (int)(in_mem & 7u);
}

ALWAYS __m256 unary(int code, __m256 v)
{
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    switch (code) {
    case FE_V_RELU: return _mm256_max_ps(_mm256_setzero_ps(), v);
    case FE_V_SILU: return fe_k_v8_silu(v);
    case FE_V_SIGMOID: return fe_k_v8_sigmoid(v);
    case FE_V_TANH: return fe_k_v8_tanh(v);
    case FE_V_EXP: return fe_k_v8_exp(v);
    case FE_V_NEG: return _mm256_xor_ps(v, sign);
    case FE_V_ABS: return _mm256_andnot_ps(sign, v);
    case FE_V_SQRT: return _mm256_sqrt_ps(v);
    case FE_V_RSQRT: return _mm256_div_ps(one, _mm256_sqrt_ps(v));
    case FE_V_RECIP: return _mm256_div_ps(one, v);
    case FE_V_GELU_TANH: return fe_k_v8_gelu_tanh(v);
    default: return v;
    }
}

ALWAYS __m256 binary(int code, __m256 a, __m256 b)
{
    switch (code) {
    case FE_V_ADD: return _mm256_add_ps(a, b);
    case FE_V_SUB: return _mm256_sub_ps(a, b);
    case FE_V_MUL: return _mm256_mul_ps(a, b);
    case FE_V_DIV: return _mm256_div_ps(a, b);
    case FE_V_MAX: return fe_k_v8_maxnan(a, b);
    case FE_V_MIN: return fe_k_v8_minnan(a, b);
    default: return a;
    }
}

/* where: c == 0 picks b; NaN compares unequal to 0, so it picks a (as the
 * tile pass does) */
ALWAYS __m256 ternary(int code, __m256 a, __m256 b, __m256 c)
{
    if (code == FE_V_FMA)
        return _mm256_fmadd_ps(a, b, c);
    return _mm256_blendv_ps(b, c, _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_EQ_OQ));
}

/* U independent vectors per dispatch: each case runs its op on all of
 * them, which pays the dispatch once per U vectors and gives the
 * out-of-order core independent chains side by side. In the tail (U = 1,
 * lanes lm) loads and stores are masked so nothing past the tile's end is
 * touched. */
#define EACH(STMT)                                   \
    do {                                             \
        _Pragma("GCC unroll 4")                      \
        for (int u = 0; u < U; u++) {                \
            const int64_t j = i + 8 * u;             \
            (void)j;                                 \
            STMT;                                    \
        }                                            \
    } while (0)

#define MEM(k) (o->p[k] + (j & o->m[k]))
#define LDM(k) (tail ? _mm256_maskload_ps(MEM(k), lm) : _mm256_loadu_ps(MEM(k)))
/* operand k under form F (a constant in each case, so the test folds) */
#define ARG(k, F) ((((F) >> (k)) & 1) ? LDM(k) : acc[u])

#define C1(OP) case OP * 8: EACH(acc[u] = unary(OP, acc[u])); break;
#define C2(OP, F) case OP * 8 + F: EACH(acc[u] = binary(OP, ARG(0, F), ARG(1, F))); break;
#define C3(OP, F) \
    case OP * 8 + F: EACH(acc[u] = ternary(OP, ARG(0, F), ARG(1, F), ARG(2, F))); break;

/* Dispatch is a decision tree of conditional branches, not a jump table:
 * on this host an indirect jump per op costs several cycles more (measured:
 * 6 against 2-3 cycles per dispatch), and the tree stays shallow because
 * only the forms the translator emits have cases (fe_k_vform_ok). */
__attribute__((optimize("no-jump-tables")))
ALWAYS void strip(const fe_k_vbound *ops, int n, int64_t i, const int U, const int tail,
                  __m256i lm)
{
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                     _mm256_setzero_ps()};
    for (const fe_k_vbound *o = ops; o < ops + n; o++) {
        switch (o->code) {
        case FE_V_LD * 8 + 1:
            EACH(acc[u] = LDM(0));
            break;
        case FE_V_ST * 8 + 1:
            if (tail)
                EACH(_mm256_maskstore_ps(o->p[0] + j, lm, acc[u]));
            else if (o->nt)
                EACH(_mm256_stream_ps(o->p[0] + j, acc[u]));
            else
                EACH(_mm256_storeu_ps(o->p[0] + j, acc[u]));
            break;
        C1(FE_V_RELU) C1(FE_V_SILU) C1(FE_V_SIGMOID) C1(FE_V_TANH) C1(FE_V_EXP)
        C1(FE_V_NEG) C1(FE_V_ABS) C1(FE_V_SQRT) C1(FE_V_RSQRT) C1(FE_V_RECIP)
        C1(FE_V_GELU_TANH)
        C2(FE_V_ADD, 2) C2(FE_V_MUL, 2)
        C2(FE_V_SUB, 2) C2(FE_V_SUB, 1) C2(FE_V_DIV, 2) C2(FE_V_DIV, 1)
        C2(FE_V_MAX, 2) C2(FE_V_MAX, 1) C2(FE_V_MIN, 2) C2(FE_V_MIN, 1)
        C3(FE_V_FMA, 6) C3(FE_V_FMA, 5) C3(FE_V_FMA, 3)
        C3(FE_V_WHERE, 6) C3(FE_V_WHERE, 5) C3(FE_V_WHERE, 3)
        default:
            break;
        }
    }
}

int fe_k_vform_ok(int op, unsigned in_mem)
{
    switch (op) {
    case FE_V_LD: case FE_V_ST: return in_mem == 1;
    case FE_V_ADD: case FE_V_MUL: return in_mem == 2;
    case FE_V_SUB: case FE_V_DIV: case FE_V_MAX: case FE_V_MIN: return in_mem == 1 || in_mem == 2;
    case FE_V_FMA: case FE_V_WHERE: return in_mem == 3 || in_mem == 5 || in_mem == 6;
    default: return op >= FE_V_RELU && op <= FE_V_GELU_TANH && in_mem == 0;
    }
}

__attribute__((optimize("no-jump-tables")))
void fe_k_vrun(const fe_k_vbound *ops, int n, int64_t w)
{
    const __m256i all = _mm256_set1_epi32(-1);
    int64_t i = 0;
    for (; i + 32 <= w; i += 32)
        strip(ops, n, i, 4, 0, all);
    for (; i + 8 <= w; i += 8)
        strip(ops, n, i, 1, 0, all);
    if (i < w) {
        __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        __m256i lm = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(w - i)), lane);
        strip(ops, n, i, 1, 1, lm);
    }
}

#else /* no AVX2: the fused executor keeps its tile passes */

int fe_k_vop_unary(int op, int approx_tanh)
{
    (void)op;
    (void)approx_tanh;
    return -1;
}

int fe_k_vop_binary(int op)
{
    (void)op;
    return -1;
}

int fe_k_vcode(int op, unsigned in_mem)
{
    return op * 8 + (int)(in_mem & 7u);
}

int fe_k_vform_ok(int op, unsigned in_mem)
{
    (void)op;
    (void)in_mem;
    return 0;
}

void fe_k_vrun(const fe_k_vbound *ops, int n, int64_t w)
{
    (void)ops;
    (void)n;
    (void)w;
}

#endif
