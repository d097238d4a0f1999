/* plan.h: fusion plans: a partition of a graph's nodes into groups, each
 * run as one kernel, with the decision log that made it.
 *
 * A plan that exists as an fe_plan is legal (legality.h): it was built by
 * legal merges (partition.h) or checked, so the simulator and the executor
 * never see an illegal one. This file holds the objects; legality.c holds
 * the rules.
 */
#ifndef FE_PLAN_H
#define FE_PLAN_H

#include "graph.h"

/* Kernel classes: what one fused kernel can hold (legality.c's note says
 * which ops each takes and decides a group's class). */
typedef enum fe_class {
    FE_CLASS_SINGLE, FE_CLASS_POINTWISE, FE_CLASS_GEMM, FE_CLASS_COLLECTIVE, FE_CLASS_POOL, FE_NCLASS
} fe_class;

/* "single", "pointwise", ... as plan files spell them; "illegal" for
 * anything else. Static storage. */
const char *fe_class_name(int c);

/* The largest split (tiles of one group) a plan, a plan file, a policy or
 * a caller may ask for, and the words every message about it uses. The
 * simulator's own default split never exceeds it either. */
#define FE_PLAN_MAX_SPLIT (1 << 24)
#define FE_PLAN_SPLIT_RULE "an integer from 1 to 16777216 (2^24)"

typedef struct fe_group {
    int32_t off, n;      /* members: plan->members[off .. off+n), topo order */
    int32_t split;       /* tiles it runs in, 0..FE_PLAN_MAX_SPLIT; 1 = whole, 0 = not
                            chosen yet (a run resolves it to the simulator's default) */
    int32_t kernel;      /* kernel choice id (kernels/group/choice.h); 0 = auto */
    int32_t reason;      /* interned in plan->strs; -1 if none */
    int8_t klass;        /* fe_class */
} fe_group;

typedef struct fe_decision {
    int32_t off, n;      /* candidate nodes: plan->dnodes[off .. off+n) */
    int8_t verdict;      /* 1 fuse, 0 do not fuse, -1 no opinion, -2 rejected as illegal */
    int32_t by;          /* policy name, interned */
    int32_t reason;      /* interned */
} fe_decision;

/* A decision's verdict as the decision lists print it: "fuse", "no",
 * "none" (no opinion), "rejected" (illegal), else "note". Static storage. */
const char *fe_verdict_name(int verdict);

/* A layout copy: a graph input or weight copied into another memory order
 * (channels_last for convolutions, as Inductor's layout optimization
 * does) by a generated kernel of its own, run before its first reader.
 * Our kernels take one layout, so the copy changes no value: it costs a
 * launch, the tensor's bytes read and written, and device memory for the
 * copy while its readers run (sim.c); the CPU executor skips it. */
typedef struct fe_copy {
    int32_t tensor;      /* tensor id: no producer, read by some node */
    int32_t reason;      /* interned in plan->strs; -1 if none */
} fe_copy;

/* A window an exact search solved while the plan was made (ctx:optimal,
 * optimal.h): what it proved, kept for the plan file's "optimal" record.
 * Its solution is kept too, so that a reader can tell whether the plan
 * holds it (a policy may change what it was given). */
typedef struct fe_solve {
    int32_t off, n;      /* the window: solve_nodes[off .. off + n), sorted; solve_group[off + i]
                            is the solution's group (0-based, per window) of node i */
    int32_t max_group;   /* largest candidate enumerated */
    int32_t cost;        /* what priced the groups: "simulator", "profile" or "hook" (interned) */
    int64_t candidates;  /* groups the solver chose among */
    int8_t optimal;      /* proven optimal among them; else stopped at its time limit */
    double value, bound; /* seconds: the solution's cost, the lower bound proven */
    double seconds;      /* the search took (enumeration, pricing, solving) */
} fe_solve;

typedef struct fe_plan {
    const fe_graph *g;   /* not owned: free the plan before the graph */
    fe_strtab *strs;     /* reasons, policy names */
    int32_t policy;      /* name of the policy that made it, -1 if none */
    int32_t machine;     /* machine it was planned for, -1 if none */

    int32_t ngroups;
    fe_group *groups;    /* ordered so that every group runs after its producers */
    int32_t *members;    /* nnodes entries */
    int32_t *group_of;   /* node id -> group id */

    int32_t ncopies;
    fe_copy *copies;     /* distinct tensors, in the order asked */

    int32_t ndecisions, cap_decisions;
    fe_decision *decisions;
    int32_t *dnodes;
    int64_t ndnodes, cap_dnodes;

    int32_t nsolves;
    fe_solve *solves;
    int32_t *solve_nodes, *solve_group;
} fe_plan;

/* The unfused plan: one group per node, in topological order. Caller frees
 * with fe_plan_free. */
fe_plan *fe_plan_unfused(const fe_graph *g, fe_error *err);

/* ngroups zeroed groups and room for every node in members and group_of,
 * for builders that fill them (fe_part_to_plan). Caller frees with
 * fe_plan_free; NULL with FE_ENOMEM. */
fe_plan *fe_plan_new(const fe_graph *g, int32_t ngroups, fe_error *err);

void fe_plan_free(fe_plan *p);

/* Append a decision to the log; returns FE_OK or FE_ENOMEM. */
int fe_plan_log(fe_plan *p, const int32_t *nodes, int n, int verdict, const char *by,
                const char *reason);
/* The same with by and reason already interned in p (fe_plan_str; -1 for
 * none): a run that logs the same reason many times interns it once. */
int fe_plan_log_ids(fe_plan *p, const int32_t *nodes, int n, int verdict, int32_t by,
                    int32_t reason);

/* Append a solve record s (its off is set here) with its window
 * nodes[0..s->n) and each node's group in its solution. FE_OK or
 * FE_ENOMEM. */
int fe_plan_add_solve(fe_plan *p, const fe_solve *s, const int32_t *nodes, const int32_t *group);

/* Does the plan hold solve i's solution: is every group of it one of the
 * plan's groups? */
int fe_plan_solve_applied(const fe_plan *p, int32_t i);

/* Intern s in the plan's table (-1 for NULL or on failure). */
int32_t fe_plan_str(fe_plan *p, const char *s);

/* Store s in the plan's table without interning it, for text stored once
 * such as a policy's notes (-1 for NULL or on failure). */
int32_t fe_plan_note_str(fe_plan *p, const char *s);

/* Set a group's reason / policy name. */
void fe_plan_set_reason(fe_plan *p, int32_t group, const char *reason);

/* Why tensor t (an id of p->g) cannot be copied, or NULL if it can: it
 * must exist, have no producer (activations are written in the layout
 * their readers want), be read by some node, and not be copied already.
 * Static storage. */
const char *fe_plan_copy_refusal(const fe_plan *p, int32_t t);

/* Append a copy of tensor t (fe_plan_copy_refusal(p, t) == NULL) with its
 * reason (may be NULL). FE_OK or FE_ENOMEM. */
int fe_plan_add_copy(fe_plan *p, int32_t t, const char *reason);

/* The group that first reads a copied tensor t: its copy runs just
 * before it. */
int32_t fe_plan_copy_group(const fe_plan *p, int32_t t);

static inline const int32_t *fe_group_nodes(const fe_plan *p, const fe_group *gr)
{
    return &p->members[gr->off];
}

#endif
