/* launch.h: what running a group costs in launches: a generated kernel, a
 * vendor library call ("extern", as Inductor calls its cuBLAS/cuDNN calls)
 * or nothing at all (a group of views). Decided from the op registry's
 * flags (ops.h) alone, so every policy, the simulator, plan files and
 * reports agree on it; a policy changes it only through its grouping
 * (fusing an epilogue into a matmul makes the pair a generated kernel).
 */
#ifndef FE_LAUNCH_H
#define FE_LAUNCH_H

#include "graph.h"

typedef enum fe_launch {
    FE_LAUNCH_KERNEL,   /* generated code: one launch */
    FE_LAUNCH_EXTERN,   /* a lone library op (matmul, conv2d, sdpa): one library call */
    FE_LAUNCH_NONE      /* only views (reshape, transpose, slice, expand): no launch */
} fe_launch;

/* How the group nodes[0..n) of g is launched (n >= 1; ids valid). */
fe_launch fe_group_launch(const fe_graph *g, const int32_t *nodes, int n);

/* "kernel", "extern" or "view", as plan files and reports spell them;
 * static storage. */
const char *fe_launch_name(fe_launch l);

#endif
