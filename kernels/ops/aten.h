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

/* Run custom node n on caller-owned buffers in[] / out[0] (graph shapes and
 * dtypes): FE_OK, FE_EINPUT naming node, aten op and fault, or FE_ENOMEM. */
int fe_k_aten_run(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                  fe_k_tensor *out, fe_error *err);

#endif
