/* group.h: one plan group compiled for execution: a fused program, a
 * matmul / conv with its prologue and epilogue programs, or its members one
 * by one, chosen by the group's kernel choice (choice.h) and what the fast
 * paths can take. Every group reports how it actually ran.
 */
#ifndef FE_GROUP_H
#define FE_GROUP_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "graph.h"
#include "ktensor.h"

typedef struct fe_k_group fe_k_group;

/* Compile the group of nodes[0..n) (any order; the group must be convex, as
 * plan.c checks) run in split (>= 1) tiles and with kernel choice id
 * kernel (0 = auto). Fails only on bad arguments or memory; a group the
 * fast paths cannot take compiles to per-op execution, with the reason in
 * fe_k_group_how. Caller frees with fe_k_group_free. */
fe_k_group *fe_k_group_new(const fe_graph *g, const int32_t *nodes, int n, int split,
                                 int kernel, fe_error *err);
void fe_k_group_free(fe_k_group *gr);

/* One line saying how the group runs, e.g. "matmul_blocked: ... epilogue 2
 * ops (add, gelu) on each output block"; owned by the group. */
const char *fe_k_group_how(const fe_k_group *gr);
/* What it executes, for a reader (fuseeng run --show-kernels): its fused
 * programs' listings (fe_k_prog_show), each line after indent; nothing
 * for a group run op by op (fe_k_group_how says why). */
void fe_k_group_show(const fe_k_group *gr, const char *indent, FILE *f);
/* The choice id that actually runs it (never 0). */
int fe_k_group_kernel(const fe_k_group *gr);
/* 1 if it runs as one kernel (fused / anchored), 0 if op by op. */
int fe_k_group_is_fused(const fe_k_group *gr);
/* 1 if its fused kernel failed at run time and it now runs op by op. */
int fe_k_group_fell_back(const fe_k_group *gr);

/* External inputs (tensors read from outside the group) and outputs
 * (tensors consumed outside or graph outputs); arrays owned by the group. */
int fe_k_group_inputs(const fe_k_group *gr, const int32_t **ids);
int fe_k_group_outputs(const fe_k_group *gr, const int32_t **ids);

/* Run once. bufs is indexed by tensor id and must hold every external input
 * and output; internal tensors of per-op execution get temporary buffers,
 * freed before return. A fused kernel that fails at run time (FE_ERUNTIME)
 * falls back to the group's ops one by one for this and later runs, and
 * fe_k_group_how says so with the cause (fe_k_group_fell_back is then 1).
 * Returns FE_OK or the error of the failing kernel, its cause chained in
 * the message. A group keeps per-thread scratch: run it from one thread at a time (its
 * kernels use all OpenMP threads themselves). */
int fe_k_group_run(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err);

/* Bytes of temporaries the group allocates while running (internal tensors
 * of per-op execution, materialised passes of the BLAS choice). */
int64_t fe_k_group_temp_bytes(const fe_k_group *gr);

#endif
