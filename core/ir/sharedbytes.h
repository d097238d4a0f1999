/* sharedbytes.h: what two disjoint node sets of a graph share, in bytes:
 * the tensors one writes and the other reads, and those both read (what
 * fusing them keeps on chip; Inductor's score_fusion_memory). */
#ifndef FE_SHAREDBYTES_H
#define FE_SHAREDBYTES_H

#include "graph.h"

/* Membership of two disjoint node sets a and b and a scratch of tensor
 * marks: node v is in a when node[v] == stamp, in b when node[v] ==
 * stamp + 1. tensor has g->ntensors entries, none equal to stamp or
 * stamp + 1 on entry (take a fresh pair of stamps per question). */
typedef struct fe_setpair {
    int32_t *node, *tensor;
    int32_t stamp;
} fe_setpair;

/* Bytes of the distinct tensors a[0..na) and b[0..nb) share: written in one
 * and read in the other, and those both read that neither writes. Each
 * tensor counts once. O(inputs of a and b); allocates nothing. */
int64_t fe_shared_bytes(const fe_graph *g, const fe_setpair *s, const int32_t *a, int32_t na,
                        const int32_t *b, int32_t nb);

/* Does some node of b read a tensor written in a? (s as above; only its
 * node marks are read.) */
int fe_set_feeds(const fe_graph *g, const fe_setpair *s, const int32_t *b, int32_t nb);

#endif
