/* group_stages.c: a group whose column reductions, concats, or views or
 * broadcasts of computed values are read by later members, as fused
 * programs in turn (see group_stages.h).
 *
 * A column reduction (a mean over the batch, a max down each column) is
 * complete only after every row, so a program cannot read its own
 * (fused_prog.h). A group such as
 *
 *     c = x - mean_0(x);  v = mean_0(c * c);  y = c * rsqrt(v + eps)
 *
 * is therefore cut at its column reductions into stages, each a fused
 * program: stage 0 computes mean_0(x); stage 1 reads it and computes v;
 * stage 2 reads both and computes y. A member's stage is the number of
 * column reductions on its longest path from the group's inputs, and a
 * stage's program holds every member its results need, so the members
 * that feed several stages (c above) are computed again in each instead
 * of being written out and read back: the group reads its inputs once per
 * stage and writes nothing but its outputs and the reductions, which are
 * a row each. That is what makes it pay on memory-bound groups, where a
 * recomputed subtract costs less than the pass that would store it.
 *
 * A program has one domain, so a stage whose outputs differ in shape (a
 * sum of two column reductions beside full-size results) is several
 * programs; so is a group with no column reduction at all whose outputs
 * do, which is how such a group runs fused.
 */
#include <stdlib.h>
#include <string.h>

#include "fused_views.h"
#include "group_stages.h"
#include "node.h"
#include "ops.h"
#include "scratch.h"

struct fe_k_stages {
    const fe_graph *g;
    int n;
    fe_k_prog **progs;
    int32_t *temps;                /* cut results read only inside the group */
    void **took;                   /* a run's scratch buffer for each temp, or NULL */
    int ntemps;
    int nstages;
};

/* Whether a member's result is complete only after a program of its own:
 * CUT for a column reduction (after every row) or a concat (after its
 * operands' programs wrote their parts of it); CUT_WRITTEN for a value
 * that some member reads as no program computing it should pass it on,
 * so it is written out and the next program reads it (its other readers
 * may share its program):
 * - through a view a program cannot read (a transpose of a computed
 *   value: the next program reads the view of it as a strided load);
 * - broadcast to more elements (cos of RoPE's [S, D] angles, read by each
 *   of 32 heads: a program of the heads' domain would compute it 32
 *   times). Row reductions are exempt: a program computes them once per
 *   row already. */
enum { CUT = 1, CUT_WRITTEN = 2 };

/* Whether member v, an elementwise or broadcast op, gives more than numel
 * elements (so reads a value of numel broadcast). */
static int broadcasts(const fe_graph *g, const fe_node *v, int64_t numel)
{
    int pat = fe_op_get(v->op)->pattern;
    return (pat == FE_ELEMWISE || pat == FE_BROADCAST) &&
           fe_graph_tensor(g, fe_node_output(g, v, 0))->numel > numel;
}

/* Whether the members reading t, a value of numel elements, need it
 * written: a view that is no alias, or a reader of more elements (looking
 * through the reshapes programs read as their input). */
static int needs_written(const fe_graph *g, int32_t t, int64_t numel, const int32_t *nodes, int count)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    for (int k = 0; k < tt->ncons; k++) {
        int32_t c = fe_tensor_consumer(g, tt, k);
        if (fe_k_node_index(nodes, count, c) < 0)
            continue;
        const fe_node *v = fe_graph_node(g, c);
        int32_t out = fe_node_output(g, v, 0);
        if (fe_k_fused_view_op(v->op) ? !fe_k_view_aliased(g, v, nodes, count, -1) ||
                                            needs_written(g, out, numel, nodes, count)
                                      : broadcasts(g, v, numel))
            return 1;
    }
    return 0;
}

static int is_cut(const fe_graph *g, const fe_node *n, const int32_t *nodes, int count)
{
    int lo;
    if (n->op == FE_OP_CONCAT)
        return CUT;
    if ((n->op == FE_OP_SUM || n->op == FE_OP_MEAN || n->op == FE_OP_AMAX || n->op == FE_OP_AMIN) &&
        fe_k_node_reduce_kind(g, n, &lo) == FE_K_RED_COLS)
        return CUT;
    int32_t t = fe_node_output(g, n, 0);
    if (!fe_k_fused_view_op(n->op) && fe_op_get(n->op)->pattern != FE_REDUCTION &&
        needs_written(g, t, fe_graph_tensor(g, t)->numel, nodes, count))
        return CUT_WRITTEN;
    return 0;
}

/* The group being cut: its members, each one's stage and whether it cuts. */
typedef struct cutting {
    const fe_graph *g;
    const int32_t *nodes;
    int n;
    int *stage;
    char *cut;
} cutting;

/* What a program stores: value val, computed by member node, into its own
 * tensor (into < 0) or at off along axis `axis` of concat output into. */
typedef struct target {
    int node;
    int32_t val, into;
    int64_t off;
    int axis;
} target;

/* Mark in cone the members member i needs in stage s: back through its
 * inputs, stopping at the cuts of earlier stages (inputs then). */
static void mark_cone(const cutting *x, int s, int i, char *cone)
{
    if (cone[i])
        return;
    cone[i] = 1;
    const fe_node *nd = fe_graph_node(x->g, x->nodes[i]);
    for (int k = 0; k < nd->nin; k++) {
        int j = fe_k_node_index(x->nodes, x->n, fe_graph_tensor(x->g, fe_node_input(x->g, nd, k))->producer);
        if (j >= 0 && !(x->cut[j] && x->stage[j] < s))
            mark_cone(x, s, j, cone);
    }
}

/* The program of stage s storing tg[0..nt), or NULL with why. */
static fe_k_prog *stage_prog(const cutting *x, int s, const target *tg, int nt, fe_error *why)
{
    char *cone = calloc((size_t)x->n + 1, 1);
    int32_t *ids = malloc(((size_t)x->n + 1) * sizeof *ids);
    int32_t *sto = malloc(((size_t)nt + 1) * sizeof *sto), *into = malloc(((size_t)nt + 1) * sizeof *into);
    int64_t *off = malloc(((size_t)nt + 1) * sizeof *off);
    int *axis = malloc(((size_t)nt + 1) * sizeof *axis);
    fe_k_prog *p = NULL;
    int nids = 0, parts = 0;
    if (!cone || !ids || !sto || !into || !off || !axis) {
        fe_error_set(why, FE_ENOMEM, "out of memory");
    } else {
        for (int k = 0; k < nt; k++) {
            sto[k] = tg[k].val;
            into[k] = tg[k].into;
            off[k] = tg[k].off;
            axis[k] = tg[k].axis;
            parts |= tg[k].into >= 0;
            mark_cone(x, s, tg[k].node, cone);
        }
        for (int i = 0; i < x->n; i++)
            if (cone[i])
                ids[nids++] = x->nodes[i];
        fe_k_prog_spec sp = {.g = x->g, .nodes = ids, .nnodes = nids, .stores = sto, .nstores = nt,
                             .anchor = -1, .result = -1, .col_axis = -1, .into = parts ? into : NULL,
                             .into_off = off, .into_axis = axis};
        p = fe_k_prog_compile(&sp, why);
    }
    free(cone);
    free(ids);
    free(sto);
    free(into);
    free(off);
    free(axis);
    return p;
}

/* More stage targets than this are not sorted into programs one by one. */
#define MAX_TARGETS 32

static int by_size_desc(const void *a, const void *b)
{
    int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];
    return (x < y) - (x > y);
}

/* Add the programs of stage s to st: one for all its targets when they
 * compile together. Otherwise (outputs of other shapes: a sum of two
 * column reductions beside the full-size results) the largest first, each
 * program taking every remaining target that compiles with it. */
static int add_stage(fe_k_stages *st, const cutting *x, int s, const target *tg, int nt, fe_error *why)
{
    fe_k_prog *p = stage_prog(x, s, tg, nt, why);
    if (p || why->code == FE_ENOMEM || nt > MAX_TARGETS || nt < 2) {
        if (p)
            st->progs[st->n++] = p;
        return p ? 0 : -1;
    }
    int64_t key[MAX_TARGETS][2];
    for (int k = 0; k < nt; k++) {
        key[k][0] = fe_graph_tensor(x->g, tg[k].val)->numel;
        key[k][1] = k;
    }
    qsort(key, (size_t)nt, sizeof key[0], by_size_desc);
    target pick[MAX_TARGETS];
    char taken[MAX_TARGETS] = {0};
    for (int left = nt; left > 0;) {
        int np = 0;
        fe_k_prog *best = NULL;
        for (int k = 0; k < nt; k++) {
            if (taken[k])
                continue;
            pick[np] = tg[key[k][1]];
            fe_error e = {0};
            fe_k_prog *q = stage_prog(x, s, pick, np + 1, &e);
            if (!q) {
                if (np == 0 || e.code == FE_ENOMEM) {   /* a target no program takes */
                    *why = e;
                    fe_k_prog_free(best);
                    return -1;
                }
                continue;
            }
            fe_k_prog_free(best);
            best = q;
            taken[k] = 1;
            np++;
            left--;
        }
        st->progs[st->n++] = best;
    }
    return 0;
}

/* The targets of stage s into tg; their count, or -1 with why. */
static int stage_targets(fe_k_stages *st, const cutting *x, int s, const int32_t *outs, int nouts,
                         target *tg, fe_error *why)
{
    const fe_graph *g = x->g;
    int nt = 0;
    for (int i = 0; i < x->n; i++) {
        if (x->stage[i] != s)
            continue;
        const fe_node *nd = fe_graph_node(g, x->nodes[i]);
        int32_t t = fe_node_output(g, nd, 0);
        int leaves = fe_k_ids_has(outs, nouts, t);
        if (x->cut[i] && !leaves)
            st->temps[st->ntemps++] = t;
        if (nd->op != FE_OP_CONCAT) {
            if (x->cut[i] || leaves)
                tg[nt++] = (target){i, t, -1, 0, 0};
            continue;
        }
        /* a concat: each operand's program writes its part */
        int axis = fe_axis(fe_node_attr_int(g, nd, "axis", 0), fe_graph_tensor(g, t)->rank);
        int64_t off = 0;
        for (int k = 0; k < nd->nin; k++) {
            int32_t in = fe_node_input(g, nd, k);
            const fe_tensor *it = fe_graph_tensor(g, in);
            int j = fe_k_node_index(x->nodes, x->n, it->producer);
            if (j < 0 || x->cut[j] == CUT || axis < 0 || it->rank != fe_graph_tensor(g, t)->rank)
                return fe_error_set(why, FE_EINPUT, "node '%s' (concat): an operand made outside "
                                    "the group or by a column reduction or concat, or a bad axis",
                                    fe_node_name(g, nd)), -1;
            tg[nt++] = (target){j, in, t, off, axis};
            off += fe_tensor_shape(g, it)[axis];
        }
    }
    return nt;
}

fe_k_stages *fe_k_stages_new(const fe_graph *g, const int32_t *nodes, int n, const int32_t *outs,
                             int nouts, fe_error *why)
{
    fe_k_stages *st = calloc(1, sizeof *st);
    cutting x = {g, nodes, n, calloc((size_t)n + 1, sizeof(int)), calloc((size_t)n + 1, 1)};
    int top = 0, cap = 1;
    for (int i = 0; i < n; i++)
        cap += fe_graph_node(g, nodes[i])->nin + 1;
    target *tg = malloc((size_t)cap * sizeof *tg);
    if (!st || !x.stage || !x.cut || !tg)
        goto oom;
    st->g = g;
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        x.cut[i] = (char)is_cut(g, nd, nodes, n);
        for (int k = 0; k < nd->nin; k++) {
            int j = fe_k_node_index(nodes, n, fe_graph_tensor(g, fe_node_input(g, nd, k))->producer);
            if (j < 0)
                continue;
            /* a written value's viewers (a reshape it is read through
             * too, so that its readers follow) and broadcasters wait */
            int64_t numel = fe_graph_tensor(g, fe_node_output(g, fe_graph_node(g, nodes[j]), 0))->numel;
            int after = x.cut[j] == CUT || (x.cut[j] == CUT_WRITTEN &&
                                            (fe_k_fused_view_op(nd->op) || broadcasts(g, nd, numel)));
            if (x.stage[j] + after > x.stage[i])
                x.stage[i] = x.stage[j] + after;
        }
        if (x.stage[i] > top)
            top = x.stage[i];
    }
    /* a stage makes at most one program per target */
    if (!(st->progs = calloc((size_t)cap, sizeof *st->progs)) ||
        !(st->temps = malloc(((size_t)n + 1) * sizeof *st->temps)) ||
        !(st->took = calloc((size_t)n + 1, sizeof *st->took)))
        goto oom;
    st->nstages = top + 1;
    for (int s = 0; s <= top; s++) {
        int nt = stage_targets(st, &x, s, outs, nouts, tg, why);
        if (nt < 0 || (nt && add_stage(st, &x, s, tg, nt, why)))
            goto fail;
    }
    free(x.stage);
    free(x.cut);
    free(tg);
    return st;
oom:
    fe_error_set(why, FE_ENOMEM, "out of memory");
fail:
    fe_k_stages_free(st);
    free(x.stage);
    free(x.cut);
    free(tg);
    return NULL;
}

/* The cut values get scratch buffers for the run unless the caller gave
 * them one (as group_parts.c and group_dnn.c leave a given buffer alone),
 * and exactly the buffers taken here go back, by the pointers kept in
 * s->took: never whatever bufs holds at the end, which lost a caller's
 * buffer (overwritten, then cleared) or would return one not ours. */
int fe_k_stages_run(fe_k_stages *s, fe_k_tensor *bufs, int split, fe_error *err)
{
    int rc = FE_OK;
    for (int k = 0; k < s->ntemps; k++)
        s->took[k] = NULL;
    for (int k = 0; k < s->ntemps && rc == FE_OK; k++) {
        int32_t t = s->temps[k];
        if (bufs[t].data)
            continue;
        size_t bytes = (size_t)fe_graph_tensor(s->g, t)->bytes;
        if (!(s->took[k] = fe_k_scratch_get(bytes)))
            rc = fe_error_set(err, FE_ENOMEM, "out of memory for %s (%zu bytes)",
                              fe_tensor_name(s->g, fe_graph_tensor(s->g, t)), bytes);
        else
            bufs[t] = fe_k_graph_view(s->g, t, s->took[k]);
    }
    for (int k = 0; k < s->n && rc == FE_OK; k++)
        rc = fe_k_prog_run_all(s->progs[k], bufs, split, err);
    for (int k = 0; k < s->ntemps; k++)
        if (s->took[k]) {
            fe_k_scratch_put(s->took[k]);
            bufs[s->temps[k]].data = NULL;
        }
    return rc;
}

char *fe_k_stages_describe(const fe_k_stages *s, char *buf, size_t size)
{
    int ops = 0;
    for (int k = 0; k < s->n; k++)
        ops += fe_k_prog_nops(s->progs[k]);
    if (s->nstages > 1)
        snprintf(buf, size, "%d programs in turn, in %d stages cut where column reductions, "
                 "concats, views or broadcasts of computed values are read (%d ops in all, members "
                 "that several programs need computed in each)", s->n,
                 s->nstages, ops);
    else
        snprintf(buf, size, "%d programs, for outputs of different shapes (%d ops in all, members "
                 "that several programs need computed in each)", s->n, ops);
    return buf;
}

void fe_k_stages_show(const fe_k_stages *s, const char *indent, FILE *f)
{
    for (int k = 0; k < s->n; k++) {
        fprintf(f, "%sprogram %d of %d:\n", indent, k + 1, s->n);
        fe_k_prog_show(s->progs[k], s->g, indent, f);
    }
}


int64_t fe_k_stages_temp_bytes(const fe_k_stages *s)
{
    int64_t b = 0;
    for (int k = 0; k < s->ntemps; k++)
        b += fe_graph_tensor(s->g, s->temps[k])->bytes;
    return b;
}

void fe_k_stages_free(fe_k_stages *s)
{
    if (!s)
        return;
    for (int k = 0; s->progs && k < s->n; k++)
        fe_k_prog_free(s->progs[k]);
    free(s->progs);
    free(s->temps);
    free(s->took);
    free(s);
}
