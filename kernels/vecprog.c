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

/* The vector of the programs (FE_K_VLANES floats), its tail mask and the
 * few operations the math of vmath.h does not provide. */
#ifdef FE_K_AVX512
typedef __m512 vec;
typedef __mmask16 vmask;
#define V(name) fe_k_v16_##name
#define VSET _mm512_set1_ps
#define VLOAD _mm512_loadu_ps
#define VLOADM(p, m) _mm512_maskz_loadu_ps(m, p)
#define VSTORE _mm512_storeu_ps
#define VSTOREM(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define VSTREAM _mm512_stream_ps
#define VADD _mm512_add_ps
#define VSUB _mm512_sub_ps
#define VMUL _mm512_mul_ps
#define VDIV _mm512_div_ps
#define VMAX _mm512_max_ps
#define VSQRT _mm512_sqrt_ps
#define VFMA _mm512_fmadd_ps
#define VXORI(v, m) _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(m)))
#define VANDI(v, m) _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(m)))
/* c == 0 ? b : a */
#define VPICK0(c, a, b) _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(c, VSET(0.0f), _CMP_EQ_OQ), b)
#define MASK_ALL ((vmask)0xFFFF)
#define MASK_FIRST(n) ((vmask)((1u << (n)) - 1u))
#else
typedef __m256 vec;
typedef __m256i vmask;
#define V(name) fe_k_v8_##name
#define VSET _mm256_set1_ps
#define VLOAD _mm256_loadu_ps
#define VLOADM(p, m) _mm256_maskload_ps(p, m)
#define VSTORE _mm256_storeu_ps
#define VSTOREM(p, m, v) _mm256_maskstore_ps(p, m, v)
#define VSTREAM _mm256_stream_ps
#define VADD _mm256_add_ps
#define VSUB _mm256_sub_ps
#define VMUL _mm256_mul_ps
#define VDIV _mm256_div_ps
#define VMAX _mm256_max_ps
#define VSQRT _mm256_sqrt_ps
#define VFMA _mm256_fmadd_ps
#define VXORI(v, m) _mm256_xor_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(m)))
#define VANDI(v, m) _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(m)))
#define VPICK0(c, a, b) _mm256_blendv_ps(a, b, _mm256_cmp_ps(c, VSET(0.0f), _CMP_EQ_OQ))
#define MASK_ALL _mm256_set1_epi32(-1)
#define MASK_FIRST(n) \
    _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#endif
#define L FE_K_VLANES

ALWAYS vec unary(int code, vec v)
{
    switch (code) {
    case FE_V_RELU: return VMAX(VSET(0.0f), v);
    case FE_V_SILU: return V(silu)(v);
    case FE_V_SIGMOID: return V(sigmoid)(v);
    case FE_V_TANH: return V(tanh)(v);
    case FE_V_EXP: return V(exp)(v);
    case FE_V_NEG: return VXORI(v, (int)0x80000000u);
    case FE_V_ABS: return VANDI(v, 0x7FFFFFFF);
    case FE_V_SQRT: return VSQRT(v);
    case FE_V_RSQRT: return VDIV(VSET(1.0f), VSQRT(v));
    case FE_V_RECIP: return VDIV(VSET(1.0f), v);
    case FE_V_GELU_TANH: return V(gelu_tanh)(v);
    default: return v;
    }
}

ALWAYS vec binary(int code, vec a, vec b)
{
    switch (code) {
    case FE_V_ADD: return VADD(a, b);
    case FE_V_SUB: return VSUB(a, b);
    case FE_V_MUL: return VMUL(a, b);
    case FE_V_DIV: return VDIV(a, b);
    case FE_V_MAX: return V(maxnan)(a, b);
    case FE_V_MIN: return V(minnan)(a, b);
    default: return a;
    }
}

/* where: c == 0 picks b; NaN compares unequal to 0, so it picks a (as the
 * tile pass does) */
ALWAYS vec ternary(int code, vec a, vec b, vec c)
{
    if (code == FE_V_FMA)
        return VFMA(a, b, c);
    return VPICK0(a, b, c);
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
            const int64_t j = i + L * u;             \
            (void)j;                                 \
            STMT;                                    \
        }                                            \
    } while (0)

#define MEM(k) (o->p[k] + (j & o->m[k]))
#define LDM(k) (tail ? VLOADM(MEM(k), lm) : VLOAD(MEM(k)))
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
                  vmask lm, const fe_k_pf *pf)
{
    vec acc[4] = {VSET(0.0f), VSET(0.0f), VSET(0.0f), VSET(0.0f)};
    if (pf)
        for (int k = 0; k < pf->n; k++)
            for (int off = 0; off < U * L; off += 16)
                _mm_prefetch(fe_k_pf_at(pf, k, i + off), _MM_HINT_T0);
    for (const fe_k_vbound *o = ops; o < ops + n; o++) {
        switch (o->code) {
        case FE_V_LD * 8 + 1:
            EACH(acc[u] = LDM(0));
            break;
        case FE_V_ST * 8 + 1:
            if (tail)
                EACH(VSTOREM(o->p[0] + j, lm, acc[u]));
            else if (o->nt)
                EACH(VSTREAM(o->p[0] + j, acc[u]));
            else
                EACH(VSTORE(o->p[0] + j, acc[u]));
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
void fe_k_vrun(const fe_k_vbound *ops, int n, int64_t w, const fe_k_pf *pf)
{
    int64_t i = 0;
    for (; i + 4 * L <= w; i += 4 * L)
        strip(ops, n, i, 4, 0, MASK_ALL, pf);
    for (; i + L <= w; i += L)
        strip(ops, n, i, 1, 0, MASK_ALL, NULL);
    if (i < w)
        strip(ops, n, i, 1, 1, MASK_FIRST((int)(w - i)), NULL);
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

void fe_k_vrun(const fe_k_vbound *ops, int n, int64_t w, const fe_k_pf *pf)
{
    (void)ops;
    (void)n;
    (void)w;
    (void)pf;
}

#endif
