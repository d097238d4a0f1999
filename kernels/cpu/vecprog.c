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
    case FE_OP_HARDSIGMOID: return FE_V_HARDSIGMOID;
    case FE_OP_HARDSWISH: return FE_V_HARDSWISH;
    case FE_OP_SIN: return FE_V_SIN;
    case FE_OP_COS: return FE_V_COS;
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
#define VKEEP(m, v) _mm512_maskz_mov_ps(m, v)
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
#define VKEEP(m, v) _mm256_and_ps(v, _mm256_castsi256_ps(m))
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
    case FE_V_HARDSIGMOID: return V(hardsigmoid)(v);
    case FE_V_HARDSWISH: return V(hardswish)(v);
    case FE_V_SIN: return V(sin)(v);
    case FE_V_COS: return V(cos)(v);
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

/* The forms the evaluator has: X(op, in_mem, bcast), bcast naming the
 * memory operands that are one value (FE_K_VLANES copies) rather than a
 * walk over the tile. One list, from which the handlers, their tables and
 * fe_k_vform_ok are made. Binary and ternary forms keep one operand in the
 * accumulator; add and mul only as their first, since they commute. */
#define W1(X, OP, F) X(OP, F, 0) X(OP, F, F)
#define W2(X, OP, F, LO, HI) X(OP, F, 0) X(OP, F, LO) X(OP, F, HI) X(OP, F, F)
#define FORMS(X)                                                                      \
    W1(X, FE_V_LD, 1) X(FE_V_ST, 1, 0)                                                \
    X(FE_V_RELU, 0, 0) X(FE_V_SILU, 0, 0) X(FE_V_SIGMOID, 0, 0) X(FE_V_TANH, 0, 0)    \
    X(FE_V_EXP, 0, 0) X(FE_V_NEG, 0, 0) X(FE_V_ABS, 0, 0) X(FE_V_SQRT, 0, 0)          \
    X(FE_V_RSQRT, 0, 0) X(FE_V_RECIP, 0, 0) X(FE_V_GELU_TANH, 0, 0)                   \
    X(FE_V_HARDSIGMOID, 0, 0) X(FE_V_HARDSWISH, 0, 0) X(FE_V_SIN, 0, 0)               \
    X(FE_V_COS, 0, 0)                                                                 \
    W1(X, FE_V_ADD, 2) W1(X, FE_V_MUL, 2)                                             \
    W1(X, FE_V_SUB, 2) W1(X, FE_V_SUB, 1) W1(X, FE_V_DIV, 2) W1(X, FE_V_DIV, 1)       \
    W1(X, FE_V_MAX, 2) W1(X, FE_V_MAX, 1) W1(X, FE_V_MIN, 2) W1(X, FE_V_MIN, 1)       \
    W2(X, FE_V_FMA, 6, 2, 4) W2(X, FE_V_FMA, 5, 1, 4) W2(X, FE_V_FMA, 3, 1, 2)       \
    W2(X, FE_V_WHERE, 6, 2, 4) W2(X, FE_V_WHERE, 5, 1, 4) W2(X, FE_V_WHERE, 3, 1, 2) \
    X(FE_V_SSQ, 0, 0)

#define NCODES FE_V_CODE(FE_V_NOPS, 0, 0)

/* Memory operand k of vector j: a walk over the tile, or the same copies
 * for every vector (a load the compiler hoists out of the handler's loop). */
#define MEM(k) (((B) >> (k)) & 1 ? o->p[k] : o->p[k] + j)
#define LDM(k) (tail ? VLOADM(MEM(k), lm) : VLOAD(MEM(k)))
/* operand k under form F (a constant in every handler, so the test folds) */
#define ARG(k) ((((F) >> (k)) & 1) ? LDM(k) : acc)

/* Op `op` in form (F, B) on the vector at element j, accumulator acc; its
 * new value. Inlined into every handler with constant op, F and B, where
 * it folds to the op's few instructions. In the tail, loads and stores are
 * masked (lanes lm) so nothing past the tile's end is touched. */
ALWAYS vec step(const int op, const int F, const int B, const fe_k_vbound *o, int64_t j,
                vec acc, const int tail, vmask lm)
{
    (void)F;
    if (op == FE_V_LD)
        return LDM(0);
    if (op == FE_V_ST) {
        if (tail)
            VSTOREM(o->p[0] + j, lm, acc);
        else if (o->nt)
            VSTREAM(o->p[0] + j, acc);
        else
            VSTORE(o->p[0] + j, acc);
        return acc;
    }
    if (op == FE_V_SSQ) {
        /* vector j adds into the partial sum of its strip position; the
         * lanes past a partial last vector add nothing */
        float *s = o->p[0] + (j / L) % FE_K_VSTRIP * L;
        vec v = tail ? VKEEP(lm, acc) : acc;
        VSTORE(s, VFMA(v, v, VLOAD(s)));
        return acc;
    }
    if (op < FE_V_ADD)
        return unary(op, acc);
    if (op < FE_V_FMA)
        return binary(op, ARG(0), ARG(1));
    return ternary(op, ARG(0), ARG(1), ARG(2));
}

/* Threaded code: each form has a handler that runs its op on the strip and
 * jumps straight to the next op's handler, passing the accumulators in
 * vector registers (a tail call; the program ends in FE_V_END, whose
 * handler returns). Each handler ends in an indirect jump of its own,
 * which the branch predictor learns per site; a loop around one dispatch
 * (a switch, as before) sent every op through the same branches, and
 * computed a broadcast operand's address per vector. Measured on chain6's
 * program in cache: 0.156 against 0.184 ns per element at four vectors a
 * strip, 0.142 at eight.
 *
 * Handlers come in three sizes: UMAX vectors (the dispatch is paid once
 * per UMAX, and the out-of-order core gets UMAX independent chains: 8 with
 * AVX-512's 32 registers, where tanh's handler still needs no spill, 4
 * with AVX2's 16), half that (the rest of a tile, or a narrow one), and
 * one vector with masked loads and stores (the last few vectors of a tile,
 * the last one partial). */
#define UMAX FE_K_VSTRIP
#ifdef FE_K_AVX512
#define VPARAMS vec a0, vec a1, vec a2, vec a3, vec a4, vec a5, vec a6, vec a7
#define VARGS a0, a1, a2, a3, a4, a5, a6, a7
#define VACC acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
#define VZEROS z, z, z, z, z, z, z, z
#else
#define VPARAMS vec a0, vec a1, vec a2, vec a3
#define VARGS a0, a1, a2, a3
#define VACC acc[0], acc[1], acc[2], acc[3]
#define VZEROS z, z, z, z
#endif
#define UHALF (UMAX / 2)

typedef void (*handler)(const fe_k_vbound *o, int64_t i, int64_t w, VPARAMS);
static const handler tabmax[NCODES], tabhalf[NCODES], tab1[NCODES];

/* The handler of form (OP, F, B) for U vectors, continuing through tab.
 * It reads its bound op from a local copy: vector stores may alias
 * anything, so through o the op's pointers and streaming flag were loaded
 * again after every store, and a streaming store branched per vector
 * (Add+RMSNorm's pass: 84% -> 91% of copy; chain6 in cache 0.134 -> 0.130
 * ns/element). */
#define HANDLER(NAME, U, tab, OP, F, B)                                               \
    static void NAME##_##OP##_##F##_##B(const fe_k_vbound *o, int64_t i, int64_t w,  \
                                        VPARAMS)                                      \
    {                                                                                 \
        vec acc[UMAX] = {VARGS};                                                      \
        const int tail = (U) == 1;                                                    \
        const fe_k_vbound ol = *o;                                                    \
        vmask lm = tail ? MASK_FIRST(w - i < L ? (int)(w - i) : L) : MASK_ALL;        \
        _Pragma("GCC unroll 8") for (int u = 0; u < (U); u++)                         \
            acc[u] = step(OP, F, B, &ol, i + L * u, acc[u], tail, lm);                \
        tab[o[1].code](o + 1, i, w, VACC);                                            \
    }
#define HANDLERS(OP, F, B)                         \
    HANDLER(hmax, UMAX, tabmax, OP, F, B)          \
    HANDLER(hhalf, UHALF, tabhalf, OP, F, B)       \
    HANDLER(h1, 1, tab1, OP, F, B)
FORMS(HANDLERS)

static void h_end(const fe_k_vbound *o, int64_t i, int64_t w, VPARAMS)
{
    vec acc[UMAX] = {VARGS};
    (void)o, (void)i, (void)w, (void)acc;
}

#define ENTRY(NAME, OP, F, B) [FE_V_CODE(OP, F, B)] = NAME##_##OP##_##F##_##B,
#define ENTRYMAX(OP, F, B) ENTRY(hmax, OP, F, B)
#define ENTRYHALF(OP, F, B) ENTRY(hhalf, OP, F, B)
#define ENTRY1(OP, F, B) ENTRY(h1, OP, F, B)
static const handler tabmax[NCODES] = {FORMS(ENTRYMAX)[FE_V_CODE(FE_V_END, 0, 0)] = h_end};
static const handler tabhalf[NCODES] = {FORMS(ENTRYHALF)[FE_V_CODE(FE_V_END, 0, 0)] = h_end};
static const handler tab1[NCODES] = {FORMS(ENTRY1)[FE_V_CODE(FE_V_END, 0, 0)] = h_end};

int fe_k_vform_ok(int op, unsigned in_mem)
{
    if (op < 0 || op >= FE_V_END || in_mem >= 8)
        return 0;
    /* and with each choice of broadcast memory operands (a store's
     * destination is never one) */
    unsigned bmax = op == FE_V_ST ? 0 : in_mem;
    for (unsigned b = 0; b <= bmax; b++)
        if (!(b & ~in_mem) && !tabmax[FE_V_CODE(op, in_mem, b)])
            return 0;
    return 1;
}

float fe_k_vsums_total(const float *sums)
{
    vec t = VLOAD(sums);
    for (int k = 1; k < UMAX; k++)
        t = VADD(t, VLOAD(sums + k * L));
#ifdef FE_K_AVX512
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1));
    return fe_k_v8_hsum(_mm256_add_ps(_mm512_castps512_ps256(t), hi));
#else
    return fe_k_v8_hsum(t);
#endif
}

void fe_k_vrun(const fe_k_vbound *ops, int64_t w, const fe_k_pf *pf)
{
    const vec z = VSET(0.0f);
    int64_t i = 0;
    for (; i + UMAX * L <= w; i += UMAX * L) {
        if (pf)
            for (int k = 0; k < pf->n; k++)
                for (int off = 0; off < UMAX * L; off += 16)
                    _mm_prefetch(fe_k_pf_at(pf, k, i + off), _MM_HINT_T0);
        tabmax[ops->code](ops, i, w, VZEROS);
    }
    if (i + UHALF * L <= w) {
        tabhalf[ops->code](ops, i, w, VZEROS);
        i += UHALF * L;
    }
    for (; i < w; i += L)
        tab1[ops->code](ops, i, w, VZEROS);
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

int fe_k_vform_ok(int op, unsigned in_mem)
{
    (void)op;
    (void)in_mem;
    return 0;
}

float fe_k_vsums_total(const float *sums)
{
    (void)sums;
    return 0.0f;
}

void fe_k_vrun(const fe_k_vbound *ops, int64_t w, const fe_k_pf *pf)
{
    (void)ops;
    (void)w;
    (void)pf;
}

#endif
