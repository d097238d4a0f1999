/* partition.h: a partition of a graph's nodes into groups that drivers grow
 * by merging, keeping every group legal at every step: they ask
 * fe_part_can_merge (legality.h) before each merge.
 *
 * Groups are named by a representative node id. Members form unsorted
 * linked lists joined in O(1); merging relabels the smaller group, so n
 * merges cost O(n log n) in all. The groups keep a topological order
 * (pos/order) that bounds the merge check's search (legality.c) and is
 * repaired after each merge (partition.c).
 */
#ifndef FE_PARTITION_H
#define FE_PARTITION_H

#include "plan.h"

/* Counts of a group's members by role; enough to decide its class. A
 * partition keeps one per group and sums them on merges. */
typedef struct fe_kinds {
    int32_t n, gemm, collective, pool, opaque, injective, reduction, affine;
    int32_t conv, pad;        /* conv2d among gemm, pad among injective */
} fe_kinds;

/* Count node in k under its role. */
void fe_kinds_add(fe_kinds *k, const fe_graph *g, int32_t node);
/* into += from: the counts of two groups merged. */
void fe_kinds_merge(fe_kinds *into, const fe_kinds *from);

typedef struct fe_part fe_part;

struct fe_part {
    const fe_graph *g;
    int32_t n, ngroups;
    int32_t *gid;             /* node -> group id */
    int32_t *next;            /* node -> next member of its group, -1 */
    int32_t *head, *size;     /* group id -> first member, member count */
    int32_t *minv, *maxv;     /* group id -> smallest and largest member id */
    int32_t *pos;             /* group id -> position in a topological order of groups */
    int32_t *order;           /* position -> group id, or -1 for a free slot */
    fe_kinds *kinds;          /* group id -> member counts by role */
    int32_t *mark, stamp;     /* search scratch: visit stamps per group id */
    int32_t *stack, *tmp;
};

/* Every node alone. NULL on out-of-memory (err set). Free with fe_part_free. */
fe_part *fe_part_new(const fe_graph *g, fe_error *err);
void fe_part_free(fe_part *p);

/* Merge the groups gids[0..n) (call only after fe_part_can_merge said
 * yes); returns the new group id. */
int32_t fe_part_merge(fe_part *p, const int32_t *gids, int n);

/* Two fresh visit stamps for p->mark, s and s + 1 (returns s); marks are
 * cleared when the counter nears its end. */
int32_t fe_part_stamps(fe_part *p);

/* Members of group gid in topological order into out (room for
 * p->size[gid]); returns the count. */
int32_t fe_part_members(const fe_part *p, int32_t gid, int32_t *out);

#endif
