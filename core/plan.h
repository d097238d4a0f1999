/* plan.h: a fusion plan: a partition of a graph's nodes into groups, each
 * run as one kernel, plus what decided it. plan.c owns legality: a plan that
 * exists as an fe_plan has passed fe_plan_check, so the simulator and the
 * executor never see an illegal one.
 */
#ifndef FE_PLAN_H
#define FE_PLAN_H

#include "graph.h"

typedef struct fe_group {
    int32_t off, n;      /* members: plan->members[off .. off+n), topo order */
    int32_t split;       /* TLF split factor; 1 = not tiled */
    int32_t kernel;      /* kernel choice id (kernels/choice.h); 0 = auto */
    int32_t reason;      /* interned in plan->strs; -1 if none */
} fe_group;

typedef struct fe_decision {
    int32_t off, n;      /* candidate nodes: plan->dnodes[off .. off+n) */
    int8_t verdict;      /* 1 fuse, 0 do not fuse, -1 no opinion */
    int32_t by;          /* policy name, interned */
    int32_t reason;      /* interned */
} fe_decision;

typedef struct fe_plan {
    const fe_graph *g;   /* not owned */
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

/* Build a plan from group_of (node -> group label, any non-negative ints;
 * labels are renumbered). Checks legality; on an illegal partition returns
 * NULL with FE_EINPUT and a message naming the offending group. */
fe_plan *fe_plan_from_labels(const fe_graph *g, const int32_t *group_of, fe_error *err);

void fe_plan_free(fe_plan *p);

static inline const int32_t *fe_group_nodes(const fe_plan *p, const fe_group *gr)
{
    return &p->members[gr->off];
}

#endif
