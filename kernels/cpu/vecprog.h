/* vecprog.h: register-resident evaluation of a run of elementwise ops.
 *
 * The fused executor's instructions each make a pass over a tile in L1: an
 * op costs a load and a store per vector besides its arithmetic, and for
 * cheap ops (add, relu, a multiply by a weight) those are most of the cost.
 * A vector program instead takes a strip of vectors (up to 8 with AVX-512,
 * 4 with AVX2) at a time through every op of the run with the current value
 * (the accumulator) held in registers; only operands from outside the run
 * are loaded, and only values needed after the run (or by a non-adjacent
 * op) are written out.
 *
 * Every op reads its operands (the accumulator or memory) and leaves its
 * result in the accumulator; ST writes the accumulator to memory, and SSQ
 * adds its squares to a row's running sum. Which operands come from memory
 * is part of the op's code (fe_k_vcode), so each op's handler is
 * straight-line code, entered once per strip.
 *
 * Programs are bound to a tile before they run: each memory operand becomes
 * a pointer to the tile's first element, or to FE_K_VLANES copies of a
 * broadcast value (fe_k_vbcast: every vector of the tile then reads the
 * same copies).
 *
 * Vectors are 16 floats where the build targets AVX-512 and 8 with AVX2:
 * the math is the same operations at either width (vmath_fn.h), so the
 * values do not depend on it; on a core with full-width AVX-512 units the
 * wider vectors double the arithmetic per instruction, which is what a
 * chain with tanh or exp in it needs to keep up with memory.
 */
#ifndef FE_VECPROG_H
#define FE_VECPROG_H

#include <stdint.h>

#include "cache.h"
#include "vmath.h"

/* Lanes per vector, and vectors per strip (the most a handler takes at once). */
#ifdef FE_K_AVX512
#define FE_K_VLANES 16
#define FE_K_VSTRIP 8
#else
#define FE_K_VLANES 8
#define FE_K_VSTRIP 4
#endif
/* Floats of FE_V_SSQ's partial sums: one vector per strip position. */
#define FE_K_VSUMS (FE_K_VSTRIP * FE_K_VLANES)

enum {
    FE_V_LD, FE_V_ST,
    /* unary */
    FE_V_RELU, FE_V_SILU, FE_V_SIGMOID, FE_V_TANH, FE_V_EXP, FE_V_NEG, FE_V_ABS,
    FE_V_SQRT, FE_V_RSQRT, FE_V_RECIP, FE_V_GELU_TANH, FE_V_HARDSIGMOID, FE_V_HARDSWISH,
    FE_V_SIN, FE_V_COS,
    /* binary */
    FE_V_ADD, FE_V_SUB, FE_V_MUL, FE_V_DIV, FE_V_MAX, FE_V_MIN,
    /* ternary */
    FE_V_FMA, FE_V_WHERE,
    /* the accumulator's squares added into p[0] (FE_K_VSUMS floats, zeroed
     * before the run), the accumulator kept: the row sum of squares that a
     * following rms_norm needs, found in the pass that makes the row */
    FE_V_SSQ,
    FE_V_END,               /* ends a bound program */
    FE_V_NOPS
};

/* A bound op: its code, memory operands' pointers. */
typedef struct fe_k_vbound {
    int code;               /* fe_k_vcode, then fe_k_vbcast */
    int nt;                 /* ST: streaming stores (p[0] is aligned to a vector) */
    float *p[3];            /* operand k's tile start (ST: the destination), or
                               FE_K_VLANES copies of its one value */
} fe_k_vbound;

/* An op's code: the op (FE_V_*), the operands in memory (bit k of in_mem:
 * operand k; the accumulator otherwise) and, of those, the ones that are
 * one broadcast value (bcast). A constant expression, for tables. */
#define FE_V_CODE(op, in_mem, bcast) ((op) * 64 + (bcast) * 8 + (in_mem))
#define FE_V_OP(code) ((code) >> 6)
#define FE_V_INMEM(code) ((code) & 7)

/* The code of op `op` with in_mem's operands in memory, walking the tile.
 * ST and LD take their operand from memory: in_mem = 1. */
static inline int fe_k_vcode(int op, unsigned in_mem)
{
    return FE_V_CODE(op, (int)(in_mem & 7u), 0);
}

/* Code `code` with the memory operands named by bit k of bcast bound to
 * FE_K_VLANES copies of one value instead of a walk over the tile. */
static inline int fe_k_vbcast(int code, unsigned bcast)
{
    return code | FE_V_CODE(0, 0, (int)(bcast & (unsigned)FE_V_INMEM(code)));
}

/* Whether the evaluator has that form: LD and ST with in_mem 1, unary ops
 * and SSQ with 0 (their operand is the accumulator), binary and ternary
 * ops with exactly one operand in the accumulator (add and mul: the
 * first). Other forms are made of these with an LD or a spill. */
int fe_k_vform_ok(int op, unsigned in_mem);

/* FE_V_* of unary op `op` (FE_OP_*), or -1 when it has no vector form
 * (those keep their tile pass); the same for binary ops (add, sub, mul,
 * div, maximum, minimum). Both are -1 on builds without AVX2. */
int fe_k_vop_unary(int op, int approx_tanh);
int fe_k_vop_binary(int op);

/* The sum of FE_V_SSQ's partial sums, in a fixed order (so a row's sum
 * depends only on its values and width). */
float fe_k_vsums_total(const float *sums);

/* Run the ops of a bound program, which ends in an op with code
 * fe_k_vcode(FE_V_END, 0), over elements [0, w) of the tile they are bound
 * to, pulling pf's streams into cache meanwhile (pf may be NULL). */
void fe_k_vrun(const fe_k_vbound *ops, int64_t w, const fe_k_pf *pf);

#endif
