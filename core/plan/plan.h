/* plan.h: fusion plans and their legality.
 *
 * A plan partitions a graph's nodes into groups; each group runs as one
 * kernel. plan.c is the one place that decides what is legal: a group must
 * be convex (no path leaves it and comes back), the group DAG acyclic, and
 * some kernel class must take the group's mix of ops. A plan that exists as
 * an fe_plan has passed these checks, so the simulator and the executor
 * never see an illegal one.
 */
#ifndef FE_PLAN_H
#define FE_PLAN_H

#include "graph.h"

/* Kernel classes: what one fused kernel can hold.
 *   single      any one node
 *   pointwise   elemwise, broadcast, injective and reduction ops (and
 *               batch_norm, an affine map per channel in inference)
 *   gemm        one matmul or conv2d with elemwise/broadcast/reduction
 *               (and batch_norm) prologue and epilogue, no data movement
 *   collective  one all_reduce with an elemwise/broadcast epilogue (seed 001)
 * Other opaque ops (sdpa, pools, opaque custom ops) only run alone. */
typedef enum fe_class {
    FE_CLASS_SINGLE, FE_CLASS_POINTWISE, FE_CLASS_GEMM, FE_CLASS_COLLECTIVE, FE_NCLASS
} fe_class;

/* Counts of a group's members by role; enough to decide its class. */
typedef struct fe_kinds {
    int32_t n, gemm, collective, opaque, injective, reduction, affine;
} fe_kinds;

void fe_kinds_add(fe_kinds *k, const fe_graph *g, int32_t node);
void fe_kinds_merge(fe_kinds *into, const fe_kinds *from);
/* The class that takes a group with these counts, or -1 with *why saying
 * what no kernel can hold (static storage). */
int fe_kinds_class(const fe_kinds *k, const char **why);
const char *fe_class_name(int c);

typedef struct fe_group {
    int32_t off, n;      /* members: plan->members[off .. off+n), topo order */
    int32_t split;       /* TLF split factor; 1 = not tiled, 0 = not chosen yet (a run
                            resolves it to the simulator's default) */
    int32_t kernel;      /* kernel choice id (kernels/choice.h); 0 = auto */
    int32_t reason;      /* interned in plan->strs; -1 if none */
    int8_t klass;        /* fe_class */
} fe_group;

typedef struct fe_decision {
    int32_t off, n;      /* candidate nodes: plan->dnodes[off .. off+n) */
    int8_t verdict;      /* 1 fuse, 0 do not fuse, -1 no opinion, -2 rejected as illegal */
    int32_t by;          /* policy name, interned */
    int32_t reason;      /* interned */
} fe_decision;

typedef struct fe_plan {
    const fe_graph *g;   /* not owned: free the plan before the graph */
    fe_strtab *strs;     /* reasons, policy names */
    int32_t policy;      /* name of the policy that made it, -1 if none */
    int32_t machine;     /* machine it was planned for, -1 if none */

    int32_t ngroups;
    fe_group *groups;    /* ordered so that every group runs after its producers */
    int32_t *members;    /* nnodes entries */
    int32_t *group_of;   /* node id -> group id */

    int32_t ndecisions, cap_decisions;
    fe_decision *decisions;
    int32_t *dnodes;
    int64_t ndnodes, cap_dnodes;
} fe_plan;

/* The unfused plan: one group per node, in topological order. Caller frees
 * with fe_plan_free. */
fe_plan *fe_plan_unfused(const fe_graph *g, fe_error *err);

/* A plan from labels (node -> any non-negative label; equal labels share a
 * group). Returns NULL with FE_EINPUT and a message naming the offending
 * group if the partition is illegal. */
fe_plan *fe_plan_from_labels(const fe_graph *g, const int32_t *labels, fe_error *err);

/* Check a plan from scratch (tests, plans read from files): every node in
 * one group, members sorted, classes right, convex, acyclic, groups in
 * dependency order. FE_OK or FE_EINPUT with the first problem. */
int fe_plan_check(const fe_plan *p, fe_error *err);

void fe_plan_free(fe_plan *p);

/* Append a decision to the log; returns FE_OK or FE_ENOMEM. */
int fe_plan_log(fe_plan *p, const int32_t *nodes, int n, int verdict, const char *by,
                const char *reason);

/* Intern s in the plan's table (-1 for NULL or on failure). */
int32_t fe_plan_str(fe_plan *p, const char *s);

/* Set a group's reason / policy name. */
void fe_plan_set_reason(fe_plan *p, int32_t group, const char *reason);

static inline const int32_t *fe_group_nodes(const fe_plan *p, const fe_group *gr)
{
    return &p->members[gr->off];
}

#endif
