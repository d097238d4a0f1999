/* legality.c: what may fuse (see legality.h).
 *
 * Note on legality. A group of nodes runs as one kernel: it reads its
 * external inputs, keeps its intermediates inside and writes its external
 * outputs. That is possible only if
 *
 *   1. the group is convex: no path leaves it and comes back. Below,
 *      {a, c} is not convex: c needs b, b needs a, so the kernel for
 *      {a, c} would need b's result before it can finish, and b needs the
 *      kernel's result to start;
 *
 *          +-----------+
 *          |  a ------------> b
 *          |  |        |      |
 *          |  v        |      |
 *          |  c <-------------+
 *          +-----------+
 *
 *   2. the group DAG is acyclic: two convex groups can still each need the
 *      other's output (A1 -> B1, B2 -> A2 with A = {A1, A2}, B = {B1, B2}),
 *      and then neither can run first;
 *
 *   3. a kernel class takes the group's mix of ops:
 *        single      any one node, whatever its op
 *        pointwise   elemwise, broadcast, injective (data movement) and
 *                    reduction ops, and batch_norm (an affine map per
 *                    channel in inference)
 *        gemm        one matmul or conv2d, with elemwise, broadcast,
 *                    reduction and batch_norm ops around it as prologue or
 *                    epilogue, but no data movement (reshape, transpose,
 *                    slice, ...): the GEMM reads its operands in place.
 *                    One exception: a pad that only the conv2d reads, as
 *                    its input, folds into the convolution's padding (the
 *                    OPU's pad -> ipa, seed 002)
 *        collective  one all_reduce with an elemwise/broadcast epilogue
 *                    (seed 001's all-reduce + add)
 *        pool        one max_pool2d or avg_pool2d with an elemwise/
 *                    broadcast epilogue (TVM's FuseOps marks pooling
 *                    kOutEWiseFusable and fuses max_pool2d + add; the CPU
 *                    executor applies the epilogue to each pooled plane),
 *                    and, as for conv2d, one pad before it that only the
 *                    pool reads (the OPU's pool_pad -> pool)
 *      Other opaque ops (sdpa, opaque custom ops) run alone, and a kernel
 *      holds at most one matmul, conv2d, all_reduce or pool. Two rules
 *      look at the shape of the group, not only its counts: a pad in a
 *      conv2d or pool group is read only by that op, as its input; and in
 *      a pool group every member but the pool and its pad reads a tensor
 *      made inside the group, so following producers back inside the group
 *      always ends at the pool: the other ops are an epilogue, never a
 *      prologue (a window over a computed input would be computed again
 *      for every overlapping window).
 *
 * Rule 1 follows from rule 2 (a path out of G and back is a cycle G -> H
 * -> G), so fe_plan_check need only sort the group DAG: with the groups
 * listed in a plan's order, any edge to an earlier group is a cycle or a
 * non-convex group, and the message names the node on the way out and
 * back.
 *
 * Invariants. Drivers grow a partition one merge at a time and ask
 * fe_part_can_merge first, so every group is legal at every moment and
 * fe_part_to_plan needs no check; plans from elsewhere (labels, plan
 * files) are rebuilt through the same merges (fe_plan_from_labels,
 * plan_build.c). An
 * illegal plan is never simulated or run, and a policy cannot override
 * any of this: it only chooses among legal merges.
 *
 * The merge check. Groups S = {G1..Gk} may merge when a class takes their
 * counts together (the partition keeps each group's fe_kinds, so this is
 * O(k)) and no path leaves S and comes back. The search walks the group
 * DAG forward from S through groups outside S; reaching S again means the
 * merge is illegal. The partition keeps a topological order of groups
 * (pos): a path back into S must end at a group no later than S's last
 * one, and positions grow along every path, so groups placed after S's
 * last group are never searched. (Node ids do not bound it: a group is
 * not an interval of ids, so a path can enter a group at a late node and
 * leave it from an early one.)
 */
#include <stdio.h>
#include <stdlib.h>

#include "ops.h"
#include "legality.h"

int fe_kinds_class(const fe_kinds *k, const char **why)
{
    const char *w = NULL;
    int c = -1;
    if (k->n == 1)
        c = FE_CLASS_SINGLE;
    else if (k->opaque > 0)
        w = "an opaque op (sdpa, opaque custom) runs alone";
    else if (k->gemm + k->collective + k->pool > 1)
        w = "one kernel holds at most one matmul, conv2d, all_reduce or pool";
    else if (k->pool == 1 && (k->injective > k->pad || k->pad > 1 || k->reduction || k->affine))
        w = "a pooling kernel takes only an elementwise/broadcast epilogue (and one pad before it)";
    else if (k->pool == 1)
        c = FE_CLASS_POOL;
    else if (k->gemm == 1 && (k->injective > k->pad || k->pad > 1 || (k->pad && !k->conv)))
        w = "a matmul/conv kernel takes only elementwise, broadcast and reduction ops around it, "
            "no data movement (reshape, transpose, slice, ...) but one pad before a conv2d";
    else if (k->gemm == 1)
        c = FE_CLASS_GEMM;
    else if (k->collective == 1 && (k->injective || k->reduction || k->affine))
        w = "an all_reduce kernel takes only an elementwise/broadcast epilogue";
    else if (k->collective == 1)
        c = FE_CLASS_COLLECTIVE;
    else
        c = FE_CLASS_POINTWISE;
    if (why)
        *why = w;
    return c;
}

static int is_window(const fe_node *n)
{
    return n->op == FE_OP_CONV2D || n->op == FE_OP_MAX_POOL2D || n->op == FE_OP_AVG_POOL2D;
}

/* The shape rules of the note for member v of a group with a conv2d or a
 * pool (in_group(ctx, node) says which nodes are in it): a pad is read only
 * by the window op, as its input 0; in a pool group (pool_group) every
 * other member but the pool reads a tensor made in the group. 0 if v keeps
 * them, else 1 with the reason in why (if not NULL). */
static int shape_rule(const fe_graph *g, int32_t v, int pool_group,
                      int (*in_group)(const void *, int32_t), const void *ctx, char *why, size_t size)
{
    const fe_node *n = fe_graph_node(g, v);
    const char *name = fe_node_name(g, n);
    if (n->op == FE_OP_PAD) {
        const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, 0));
        int ok = !(t->flags & FE_T_OUTPUT) && t->ncons > 0;
        for (int32_t c = 0; c < t->ncons && ok; c++) {
            const fe_node *cn = fe_graph_node(g, fe_tensor_consumer(g, t, c));
            ok = in_group(ctx, fe_tensor_consumer(g, t, c)) && is_window(cn);
            for (int k = 1; k < cn->nin && ok; k++)
                ok = fe_node_input(g, cn, k) != fe_node_output(g, n, 0);
        }
        if (!ok && why)
            snprintf(why, size, "a pad joins a conv2d/pool kernel only as its input, read by it "
                     "alone: pad '%s' is read elsewhere", name);
        return !ok;
    }
    if (!pool_group || n->op == FE_OP_MAX_POOL2D || n->op == FE_OP_AVG_POOL2D)
        return 0;
    for (int k = 0; k < n->nin; k++) {
        int32_t pr = fe_graph_tensor(g, fe_node_input(g, n, k))->producer;
        if (pr >= 0 && in_group(ctx, pr))
            return 0;
    }
    if (why)
        snprintf(why, size, "a pooling kernel takes only an epilogue: node '%s' does not follow "
                 "the pool", name);
    return 1;
}

typedef struct part_set { const fe_part *p; int32_t stamp; } part_set;

static int in_part_set(const void *ctx, int32_t v)
{
    const part_set *s = ctx;
    return s->p->mark[s->p->gid[v]] == s->stamp;
}

/* ---- may these groups merge ---- */

/* Push the groups that consume outputs of group c, are not yet seen and
 * are placed no later than last; returns a node of S reached directly from
 * c (a path back), or -1. */
static int32_t expand(fe_part *p, int32_t c, int32_t in_s, int32_t seen, int32_t last,
                      int from_s, int32_t *sp)
{
    const fe_graph *g = p->g;
    for (int32_t v = p->head[c]; v >= 0; v = p->next[v]) {
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            for (int32_t i = 0; i < t->ncons; i++) {
                int32_t u = fe_tensor_consumer(g, t, i);
                int32_t d = p->gid[u];
                if (p->mark[d] == in_s) {
                    if (!from_s)
                        return u;
                    continue;   /* an edge inside S */
                }
                if (p->mark[d] == seen || p->pos[d] > last)
                    continue;
                p->mark[d] = seen;
                p->stack[(*sp)++] = d;
            }
        }
    }
    return -1;
}

/* No path leaves the groups gids (marked in_s) and comes back; last is the
 * latest position among them. */
static int convex(fe_part *p, const int32_t *gids, int n, int32_t in_s, int32_t last, char *why,
                  size_t size)
{
    const fe_graph *g = p->g;
    int32_t seen = in_s + 1, sp = 0;
    for (int i = 0; i < n; i++)
        expand(p, gids[i], in_s, seen, last, 1, &sp);
    while (sp > 0) {
        int32_t c = p->stack[--sp];
        int32_t back = expand(p, c, in_s, seen, last, 0, &sp);
        if (back >= 0 && !why)
            return 0;
        if (back >= 0) {
            snprintf(why, size, "not convex: a path leaves the group through node '%s' and comes "
                     "back into node '%s'", fe_node_name(g, fe_graph_node(g, p->head[c])),
                     fe_node_name(g, fe_graph_node(g, back)));
            return 0;
        }
    }
    return 1;
}

int fe_part_convex(fe_part *p, const int32_t *gids, int n, char *why, size_t size)
{
    int32_t last = -1, in_s = fe_part_stamps(p);
    for (int i = 0; i < n; i++) {
        p->mark[gids[i]] = in_s;
        if (p->pos[gids[i]] > last)
            last = p->pos[gids[i]];
    }
    return convex(p, gids, n, in_s, last, why, size);
}

int fe_part_can_merge(fe_part *p, const int32_t *gids, int n, char *why, size_t size)
{
    const fe_graph *g = p->g;
    fe_kinds k = {0};
    const char *w;
    int32_t last = -1;

    for (int i = 0; i < n; i++) {
        fe_kinds_merge(&k, &p->kinds[gids[i]]);
        if (p->pos[gids[i]] > last)
            last = p->pos[gids[i]];
    }
    if (fe_kinds_class(&k, &w) < 0) {
        if (why)
            snprintf(why, size, "%s", w);
        return 0;
    }
    int32_t in_s = fe_part_stamps(p);
    for (int i = 0; i < n; i++)
        p->mark[gids[i]] = in_s;
    if (k.pool == 1 || (k.pad > 0 && k.conv > 0)) {
        part_set set = {p, in_s};
        for (int i = 0; i < n; i++)
            for (int32_t v = p->head[gids[i]]; v >= 0; v = p->next[v])
                if (shape_rule(g, v, k.pool == 1, in_part_set, &set, why, size))
                    return 0;
    }
    return convex(p, gids, n, in_s, last, why, size);
}

/* ---- is this plan legal ---- */

/* Find a node of group a with a consumer in group b (for messages). */
static int32_t edge_node(const fe_plan *p, int32_t a, int32_t b)
{
    const fe_graph *g = p->g;
    const fe_group *ga = &p->groups[a];
    for (int32_t i = 0; i < ga->n; i++) {
        const fe_node *n = fe_graph_node(g, p->members[ga->off + i]);
        for (int k = 0; k < n->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            for (int32_t c = 0; c < t->ncons; c++)
                if (p->group_of[fe_tensor_consumer(g, t, c)] == b)
                    return fe_tensor_consumer(g, t, c);
        }
    }
    return -1;
}

typedef struct plan_set { const fe_plan *p; int32_t gi; } plan_set;

static int in_plan_set(const void *ctx, int32_t v)
{
    const plan_set *s = ctx;
    return s->p->group_of[v] == s->gi;
}

/* Members distinct, sorted, in this group only, and of the class the
 * group claims (a pool group: an epilogue after the pool). */
static int check_group(const fe_plan *p, int32_t gi, int32_t *seen, fe_error *err)
{
    const fe_graph *g = p->g;
    const fe_group *gr = &p->groups[gi];
    fe_kinds k = {0};
    const char *why;
    if (gr->n < 1)
        return fe_error_set(err, FE_EINPUT, "group %d is empty", gi);
    for (int32_t i = 0; i < gr->n; i++) {
        int32_t v = p->members[gr->off + i];
        if (v < 0 || v >= g->nnodes || seen[v]++ || p->group_of[v] != gi ||
            (i > 0 && v <= p->members[gr->off + i - 1]))
            return fe_error_set(err, FE_EINPUT, "group %d: members are not distinct sorted "
                                "nodes of this graph, each in one group", gi);
        fe_kinds_add(&k, g, v);
    }
    if (fe_kinds_class(&k, &why) != gr->klass)
        return fe_error_set(err, FE_EINPUT, "group %d (node '%s'): %s", gi,
                            fe_node_name(g, fe_graph_node(g, p->members[gr->off])),
                            why ? why : "its kernel class is wrong");
    if (gr->klass == FE_CLASS_POOL || (k.pad > 0 && k.conv > 0)) {
        plan_set set = {p, gi};
        char msg[400];
        for (int32_t i = 0; i < gr->n; i++)
            if (shape_rule(g, p->members[gr->off + i], gr->klass == FE_CLASS_POOL, in_plan_set, &set,
                           msg, sizeof msg))
                return fe_error_set(err, FE_EINPUT, "group %d: %s", gi, msg);
    }
    return FE_OK;
}

int fe_plan_check(const fe_plan *p, fe_error *err)
{
    const fe_graph *g = p->g;
    int32_t *seen = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, sizeof *seen);
    int rc = FE_OK;
    if (!seen)
        return fe_error_set(err, FE_ENOMEM, "out of memory checking a plan");
    int64_t total = 0;
    for (int32_t gi = 0; gi < p->ngroups && rc == FE_OK; gi++) {
        rc = check_group(p, gi, seen, err);
        total += p->groups[gi].n;
    }
    if (rc == FE_OK && total != g->nnodes)
        rc = fe_error_set(err, FE_EINPUT, "the plan's groups hold %lld of %d nodes",
                          (long long)total, g->nnodes);
    /* Dependency order: every producer's group comes no later than its
     * consumer's (see the note: this rules out cycles and non-convex
     * groups at once). */
    for (int32_t v = 0; v < g->nnodes && rc == FE_OK; v++) {
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nin && rc == FE_OK; k++) {
            int32_t prod = fe_graph_tensor(g, fe_node_input(g, n, k))->producer;
            if (prod < 0 || p->group_of[prod] <= p->group_of[v])
                continue;
            int32_t a = p->group_of[v], b = p->group_of[prod];
            int32_t via = edge_node(p, a, b);
            rc = fe_error_set(err, FE_EINPUT,
                              "groups %d and %d depend on each other (node '%s' needs '%s' from "
                              "group %d%s%s): a group is not convex or the groups form a cycle",
                              a, b, fe_node_name(g, n), fe_node_name(g, fe_graph_node(g, prod)), b,
                              via >= 0 ? ", which needs node " : "",
                              via >= 0 ? fe_node_name(g, fe_graph_node(g, via)) : "");
        }
    }
    free(seen);
    return rc;
}
