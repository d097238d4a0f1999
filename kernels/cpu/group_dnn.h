/* group_dnn.h: a plan group run by oneDNN (kernel choice "onednn"): one
 * conv2d or matmul whose epilogue starts with a chain oneDNN's post-ops
 * express (eltwise, binary with a broadcast operand from outside the
 * group, inference batch_norm as a per-channel multiply and add); the
 * members after the chain run as one fused pass over its output.
 * group.c decides whether to use it; this file translates the group and
 * runs it.
 */
#ifndef FE_GROUP_DNN_H
#define FE_GROUP_DNN_H

#include <stdint.h>

#include "error.h"
#include "graph.h"
#include "ktensor.h"

typedef struct fe_k_dnn_group fe_k_dnn_group;

/* Compile the group nodes[0..n) (sorted ids), anchored on node anchor, whose
 * external outputs are outs[0..nouts). With prologue set, members feeding
 * the anchor's input (not its weights) run first as a fused pass of their
 * own that writes the input; without, they make it fail. NULL with why set
 * when oneDNN cannot take it (a prologue, a dtype other than f32, members
 * after the post-ops that are no fused program or read a value no pass
 * writes out, no fast implementation). Caller frees with
 * fe_k_dnn_group_free. */
fe_k_dnn_group *fe_k_dnn_group_new(const fe_graph *g, const int32_t *nodes, int n, int32_t anchor,
                                   const int32_t *outs, int nouts, int prologue, fe_error *why);
void fe_k_dnn_group_free(fe_k_dnn_group *dg);

/* Run it on bufs (indexed by tensor id). batch_norm's scale and shift are
 * computed from its current parameters on every run. */
int fe_k_dnn_group_run(fe_k_dnn_group *dg, fe_k_tensor *bufs, fe_error *err);

/* "conv2d 3x3 s1 with post-ops [binary_mul, binary_add, eltwise_relu]
 * (jit:avx2)"; owned by dg. */
const char *fe_k_dnn_group_desc(const fe_k_dnn_group *dg);
/* The shapes, attributes and post-ops: equal keys run the same primitive,
 * for caching a measurement; owned by dg. */
const char *fe_k_dnn_group_key(const fe_k_dnn_group *dg);

/* Bytes of the temporaries: the input a prologue pass writes, and the
 * primitive's output when only the epilogue pass reads it (0 without). */
int64_t fe_k_dnn_group_temp_bytes(const fe_k_dnn_group *dg);

/* Time dg against ours(ctx, bufs, err), the kernels that would run the
 * group otherwise (`versus` names them: "matmul_blocked", "per_op"), on
 * scratch buffers for the group's inputs ins[0..nins) and outputs
 * outs[0..nouts) (values in [0.5, 1.5)): a warm-up each, then alternating
 * runs (3 to 7, about 0.3 s); the minimum of each into *dnn_ms, *ours_ms.
 * Measured once per (versus, key) in the process, then remembered
 * (thread-safe). 1 if dg is faster, 0 if not, -1 if either failed or
 * memory ran out. */
int fe_k_dnn_group_choose(fe_k_dnn_group *dg, const char *versus, const int32_t *ins, int nins,
                          const int32_t *outs, int nouts,
                          int (*ours)(void *ctx, fe_k_tensor *bufs, fe_error *err), void *ctx,
                          double *dnn_ms, double *ours_ms);

#endif
