/* aten.h: reference kernels for the aten ops that PyTorch exports leave as
 * `custom` nodes (attrs.aten names the op, attrs.args holds its non-tensor
 * arguments as JSON): the arange / diff / cumsum / compare / index chain
 * that builds causal masks and position ids, the fill factories, and
 * clone / contiguous, torch.gather and hardswish / hardsigmoid (aten_copy.c).
 * Values follow PyTorch's CPU kernels; dtypes and shapes come from the graph.
 */
#ifndef FE_ATEN_H
#define FE_ATEN_H

#include "error.h"
#include "graph.h"
#include "ktensor.h"

/* 1 if custom node n has a kernel here that takes its args, arity, dtypes and shapes. */
int fe_k_aten_supported(const fe_graph *g, const fe_node *n);

/* FE_OK where fe_k_aten_supported says 1, else FE_EINPUT with err saying why. */
int fe_k_aten_check(const fe_graph *g, const fe_node *n, fe_error *err);

/* What a custom node's kernel computes, as its validation finds it, for
 * a device that writes the kernel again (kernels/gpu/cuda_aten.c): one
 * owner of every argument's meaning, this file's table. */
enum {
    FE_K_ATEN_OTHER,            /* a kernel the plan does not describe */
    FE_K_ATEN_BINARY,           /* comparisons, bitwise and logical ops */
    FE_K_ATEN_ARANGE,
    FE_K_ATEN_FILL,             /* ones, zeros, full and their new_ / _like forms */
    FE_K_ATEN_CUMSUM,
    FE_K_ATEN_DIFF,
    FE_K_ATEN_INDEX,            /* index.Tensor */
    FE_K_ATEN_COPY              /* clone, contiguous */
};
/* FE_K_ATEN_BINARY's ops: comparisons give 0/1, the bitwise ones the bits,
 * the logical ones 0/1 of the operands' truth (NaN is true). */
enum {
    FE_K_ATEN_EQ, FE_K_ATEN_NE, FE_K_ATEN_LT, FE_K_ATEN_LE, FE_K_ATEN_GT, FE_K_ATEN_GE,
    FE_K_ATEN_AND, FE_K_ATEN_OR, FE_K_ATEN_XOR, FE_K_ATEN_LAND, FE_K_ATEN_LOR, FE_K_ATEN_LXOR
};

typedef struct fe_k_aten_plan {
    int kernel;                 /* FE_K_ATEN_* */
    int op;                     /* BINARY: FE_K_ATEN_EQ ... */
    /* BINARY: both operands are cast to cdt (integers wrap to it, floats
     * round to it) and compared or combined there; other, when it is
     * args.other, is the 0-d scalar si (FE_I64) or sf (FE_F32) */
    int cdt, scalar, scalar_dtype;
    int64_t si;
    float sf;
    /* ARANGE: size elements; integers start_i + step_i * i (wrapping),
     * f32 (float)(start + step * (double)i), f16 / bf16 start_f + step_f * i
     * in float, rounded when stored */
    int64_t size, start_i, step_i;
    double start, step;
    float start_f, step_f;
    /* FILL: every element the bytes of cell (the output's dtype) */
    unsigned char cell[8];
    /* CUMSUM, DIFF: the axis; DIFF: order n and the inputs that are
     * prepend and append (-1: none) */
    int axis, pre, app;
    int64_t n;
    /* INDEX: the first m dims of x indexed, dim d by input src[d] (-1:
     * taken whole); the indices broadcast to bshape (brank); they replace
     * dims first..last where adjacent, else lead the output: the output's
     * first nlead dims walk x's dim lead_x[k], or (lead_x[k] < 0) the
     * indices' dim lead_b[k]; x's dims after last follow */
    int m, src[FE_MAX_RANK], brank, first, last, adjacent;
    int64_t bshape[FE_MAX_RANK];
    int nlead, lead_x[2 * FE_MAX_RANK], lead_b[2 * FE_MAX_RANK];
} fe_k_aten_plan;

/* Validate custom node n as fe_k_aten_check does and describe its kernel
 * in *p (kernel FE_K_ATEN_OTHER for the ones not described): FE_OK, or
 * FE_EINPUT with err saying why it has no kernel. */
int fe_k_aten_plan_of(const fe_graph *g, const fe_node *n, fe_k_aten_plan *p, fe_error *err);

/* The registry's compare node n as a FE_K_ATEN_BINARY plan (op EQ..GE,
 * mirrored when the scalar comes first; the dtype both operands are
 * compared in, as torch promotes them; attrs.scalar as args.other): the
 * one reading of its attributes, for the CPU kernel and the CUDA one. */
int fe_k_compare_plan(const fe_graph *g, const fe_node *n, fe_k_aten_plan *p, fe_error *err);
/* Run such a plan on in[0] (and in[1] without a scalar) into out. */
int fe_k_compare_run(const fe_k_aten_plan *p, const fe_k_tensor *in, fe_k_tensor *out,
                     fe_error *err);

/* Run custom node n on caller-owned buffers in[] / out[] (graph shapes and
 * dtypes): FE_OK, FE_EINPUT naming node, aten op and fault, or FE_ENOMEM. */
int fe_k_aten_run(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                  fe_k_tensor *out, fe_error *err);

#endif
