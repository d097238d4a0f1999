/* user_kernel.h: kernels a program registers at run time for custom nodes.
 *
 * A custom node is an op fuseeng does not know; its outputs are declared in
 * the model. A host program (core/api: fe_kernel_register, or a plugin that
 * fe_kernel_load opens) names a kernel, and every custom node that asks for
 * that name runs it: on the CPU as any node does, on a GPU as a host step.
 * The node asks by its attrs.kernel, else attrs.aten, else attrs.onnx_op,
 * else the target of attrs.torch ("call_function mylib.op" asks for
 * "mylib.op"); a registered name is taken before aten.c's table.
 *
 * The registry is the process's: register before planning or executing
 * (registration is not synchronised with running kernels).
 */
#ifndef FE_USER_KERNEL_H
#define FE_USER_KERNEL_H

#include <stddef.h>

#include "error.h"
#include "graph.h"
#include "ktensor.h"

/* One call of a registered kernel. In a check, in[] and out[] have no data
 * (NULL) and the kernel only says whether it takes these dtypes and shapes. */
typedef struct fe_k_user_call {
    const fe_graph *g;
    const fe_node *n;
    const char *kernel;        /* the registered name */
    const char *attrs;         /* the node's attrs as one JSON object, dims as numbers */
    const fe_k_tensor *in;
    fe_k_tensor *out;
    int check;
    char *why;                 /* the kernel's reason on failure, why_size bytes */
    size_t why_size;
} fe_k_user_call;

/* 0 when done (or, in a check, when the kernel takes the call). */
typedef int (*fe_k_user_fn)(void *ctx, const fe_k_user_call *c);

/* Register fn under name (ctx passed back on each call), replacing a kernel
 * registered under it before, whose ctx goes to *old (NULL when there was
 * none: the caller owns it again). FE_EINPUT for an empty or overlong name. */
int fe_k_user_register(const char *name, fe_k_user_fn fn, void *ctx, void **old, fe_error *err);

/* The registered name custom node n asks for, or NULL when none is. */
const char *fe_k_user_kernel(const fe_graph *g, const fe_node *n);

/* FE_OK if n's registered kernel takes its dtypes and shapes, else
 * FE_EINPUT naming the node, the kernel and its reason. */
int fe_k_user_check(const fe_graph *g, const fe_node *n, fe_error *err);

/* Run n's registered kernel on caller-owned buffers in[] / out[] (graph
 * shapes and dtypes): FE_OK, or FE_EINPUT naming node, kernel and reason. */
int fe_k_user_run(const fe_graph *g, const fe_node *n, const fe_k_tensor *in, fe_k_tensor *out,
                  fe_error *err);

#endif
