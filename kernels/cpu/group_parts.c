/* group_parts.c: a plan group run as parts in turn (group_impl.h).
 *
 * Op by op, every member is a part. A group that no fused kernel takes
 * whole because some of its members run in no fused program (a gather, a
 * pad, a log_softmax over the batch axis, an aten op, a matmul beside ops
 * that are neither its prologue nor its epilogue) is still fused around
 * them: each such member, a solo, runs on the kernel AUTO gives it alone,
 * as the unfused plan runs it, and the other members are grouped by their
 * level, the number of solos on their longest path from the group's
 * inputs. The parts then run as
 *
 *     fused part 0, solos of level 0, fused part 1, solos of level 1, ...
 *
 * and every part reads only what earlier parts wrote: a member reading a
 * solo is a level above it, a solo reading a member runs after that
 * member's part (solos of one level run in node order, which is
 * topological). A fused part is a group of its own (one program, a program
 * per view, or programs in turn, with the group's split); a matmul or
 * conv2d solo joins the part of the next level when our GEMM or oneDNN
 * takes that part as its epilogue. Between parts, values are written to
 * scratch buffers, freed once no later part reads them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "group.h"
#include "group_impl.h"
#include "node.h"
#include "ops.h"
#include "scratch.h"

/* Whether part writes t, an output of one of its members: a part of one
 * member writes all its outputs (its kernel fills each), a fused part only
 * those read after it. */
static int part_writes(const fe_k_group *part, int32_t t)
{
    return part->n == 1 || fe_k_ids_has(part->outs, part->nouts, t);
}

/* Run count units of gr in turn: unit u is part[u], or member u on its
 * reference kernel when part is NULL; unit_of[i] is member i's unit (NULL:
 * member i is unit i). */
static int run_units(fe_k_group *gr, int count, const int *unit_of, fe_k_group **part,
                     fe_k_tensor *bufs, fe_error *err)
{
    const fe_graph *g = gr->g;
    int rc = FE_OK, cap = 1, ntemps = 0;
    for (int i = 0; i < gr->n; i++)
        cap += fe_graph_node(g, gr->nodes[i])->nout;
    int32_t *temps = malloc((size_t)cap * sizeof *temps);
    void **took = malloc((size_t)cap * sizeof *took);   /* temps[j]'s buffer, returned by it */
    if (!temps || !took) {
        free(temps);
        free(took);
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    }
    for (int u = 0; u < count && rc == FE_OK; u++) {
        /* buffers for what the unit writes that no one gave it: from the
         * kernels' scratch pool, not fresh memory, whose pages fault and are
         * zeroed on every run (which made hub_conflict's 51-op per_op group
         * 1.5x slower than its ops run as separate groups) */
        int lo = unit_of ? 0 : u, hi = unit_of ? gr->n : u + 1;   /* the unit's members among */
        for (int i = lo; i < hi && rc == FE_OK; i++) {
            const fe_node *n = fe_graph_node(g, gr->nodes[i]);
            if (unit_of && unit_of[i] != u)
                continue;
            for (int k = 0; k < n->nout; k++) {
                int32_t t = fe_node_output(g, n, k);
                if (bufs[t].data || (part && !part_writes(part[u], t)))
                    continue;
                size_t bytes = (size_t)fe_graph_tensor(g, t)->bytes;
                void *d = fe_k_scratch_get(bytes);
                if (!d) {
                    rc = fe_error_set(err, FE_ENOMEM, "out of memory for %s (%zu bytes)",
                                      fe_tensor_name(g, fe_graph_tensor(g, t)), bytes);
                    break;
                }
                bufs[t] = fe_k_graph_view(g, t, d);
                took[ntemps] = d;
                temps[ntemps++] = t;
            }
        }
        if (rc == FE_OK && part) {
            rc = fe_k_group_run(part[u], bufs, err);
        } else if (rc == FE_OK) {
            rc = fe_k_node_run_bufs(g, fe_graph_node(g, gr->nodes[u]), bufs, err);
        }
        /* free the temporaries no later unit reads */
        for (int j = 0; j < ntemps; j++) {
            const fe_tensor *tt = fe_graph_tensor(g, temps[j]);
            int later = 0;
            for (int k = 0; k < tt->ncons && !later; k++) {
                int c = fe_k_group_index(gr, fe_tensor_consumer(g, tt, k));
                later = c >= 0 && (unit_of ? unit_of[c] : c) > u;
            }
            if (!later || rc) {
                fe_k_scratch_put(took[j]);
                bufs[temps[j]].data = NULL;
                --ntemps;
                took[j] = took[ntemps];
                temps[j--] = temps[ntemps];
            }
        }
    }
    for (int j = 0; j < ntemps; j++) {
        fe_k_scratch_put(took[j]);
        bufs[temps[j]].data = NULL;
    }
    free(temps);
    free(took);
    return rc;
}

int fe_k_group_run_perop(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err)
{
    return run_units(gr, gr->n, NULL, gr->sub, bufs, err);
}

int fe_k_group_run_parts(fe_k_group *gr, fe_k_tensor *bufs, fe_error *err)
{
    return run_units(gr, gr->nparts, gr->unit, gr->part, bufs, err);
}

void fe_k_group_free_parts(fe_k_group *gr)
{
    for (int u = 0; gr->part && u < gr->nparts; u++)
        fe_k_group_free(gr->part[u]);
    free(gr->part);
    free(gr->unit);
    gr->part = NULL;
    gr->unit = NULL;
    gr->nparts = 0;
}

/* Whether a member alone runs in a fused program (one, a view's, or
 * programs in turn) rather than on a kernel of its own. */
static int runs_fused(const fe_k_group *alone)
{
    return alone->mode == MODE_FUSED || alone->mode == MODE_VIEWS || alone->mode == MODE_STAGES;
}

/* Each member's level into level[] (see the top); the highest level. */
static int levels(const fe_k_group *gr, const char *solo, int *level)
{
    const fe_graph *g = gr->g;
    int top = 0;
    for (int i = 0; i < gr->n; i++) {
        const fe_node *nd = fe_graph_node(g, gr->nodes[i]);
        level[i] = 0;
        for (int k = 0; k < nd->nin; k++) {
            int j = fe_k_group_index(gr, fe_graph_tensor(g, fe_node_input(g, nd, k))->producer);
            if (j >= 0 && level[j] + (solo[j] && !solo[i]) > level[i])
                level[i] = level[j] + (solo[j] && !solo[i]);
        }
        if (level[i] > top)
            top = level[i];
    }
    return top;
}

/* "gather x2, pad": the ops of the members marked in pick, each once with
 * its count. */
static void op_counts(const fe_k_group *gr, const char *pick, char *buf, size_t size)
{
    size_t l = 0;
    buf[0] = 0;
    for (int i = 0; i < gr->n && l + 1 < size; i++) {
        int op = fe_graph_node(gr->g, gr->nodes[i])->op, seen = 0, count = 0;
        for (int j = 0; j < gr->n; j++)
            if (pick[j] && fe_graph_node(gr->g, gr->nodes[j])->op == op) {
                seen |= j < i;
                count++;
            }
        if (!pick[i] || seen)
            continue;
        snprintf(buf + l, size - l, count > 1 ? "%s%s x%d" : "%s%s", l ? ", " : "",
                 fe_node_op_name(fe_graph_node(gr->g, gr->nodes[i])), count);
        l += strlen(buf + l);
    }
}

/* gr's description as parts; why the group whole does not fuse is kept.
 * solo[] is rewritten: the members that run alone. */
static void describe(fe_k_group *gr, char *solo, int nfused, int nfused_ops)
{
    char alone[256], ops[256], anchors[300];
    char *merged = calloc((size_t)gr->n, 1);
    int nanch = 0;
    for (int i = 0; merged && i < gr->n; i++)
        if (solo[i] && gr->part[gr->unit[i]]->n > 1) {   /* run with its epilogue */
            solo[i] = 0;
            merged[i] = 1;
            nanch++;
        }
    op_counts(gr, solo, alone, sizeof alone);
    anchors[0] = 0;
    if (nanch) {
        op_counts(gr, merged, ops, sizeof ops);
        snprintf(anchors, sizeof anchors, " (%s with %s epilogue%s)", ops, nanch > 1 ? "their" : "its",
                 nanch > 1 ? "s" : "");
    }
    free(merged);
    snprintf(gr->how, sizeof gr->how, "%s: %d parts in turn, %d ops in %d fused part%s%s%s%s%s%s; "
             "whole, it does not fuse because %s",
             fe_k_choice_name(FE_K_CHOICE_FUSED), gr->nparts, nfused_ops, nfused,
             nfused == 1 ? "" : "s", anchors, gr->split > 1 ? " (the TLF split applies to them)" : "",
             alone[0] ? " around the members no fused program runs (" : "", alone,
             alone[0] ? "), each on its own kernel as the unfused plan runs it" : "", gr->perop_why);
}

static int is_anchor(const fe_k_group *gr, int i)
{
    int op = fe_graph_node(gr->g, gr->nodes[i])->op;
    return op == FE_OP_MATMUL || op == FE_OP_CONV2D;
}

/* Whether member j reads member i's output. */
static int reads(const fe_k_group *gr, int j, int i)
{
    const fe_node *nd = fe_graph_node(gr->g, gr->nodes[j]);
    for (int k = 0; k < nd->nin; k++)
        if (fe_graph_tensor(gr->g, fe_node_input(gr->g, nd, k))->producer == gr->nodes[i])
            return 1;
    return 0;
}

/* The fused part of level L, its members' ids in ids[0..c): with the
 * matmul or conv2d of level L - 1 it reads when that one takes it as its
 * epilogue (our GEMM or oneDNN; *merged gets the anchor), otherwise alone.
 * The anchor then runs at this part's place, after the solos of its own
 * level, so none of them may read it. NULL with err on failure. */
static fe_k_group *level_part(fe_k_group *gr, const char *solo, const int *level, int L,
                                 int32_t *ids, int c, int *merged, fe_error *err)
{
    *merged = -1;
    /* (with the anchor, a part of every member would be the group again) */
    for (int s = 0; s < gr->n && L > 0 && c + 1 < gr->n; s++) {
        int fed = 0, blocked = 0;
        if (!solo[s] || level[s] != L - 1 || !is_anchor(gr, s))
            continue;
        for (int j = 0; j < gr->n; j++) {
            fed |= !solo[j] && level[j] == L && reads(gr, j, s);
            blocked |= solo[j] && j != s && level[j] == L - 1 && reads(gr, j, s);
        }
        if (!fed || blocked)
            continue;
        ids[c] = gr->nodes[s];
        fe_k_group *p = fe_k_group_new(gr->g, ids, c + 1, gr->split, FE_K_CHOICE_AUTO, err);
        if (!p)
            return NULL;
        if (p->mode == MODE_ANCHOR || p->mode == MODE_DNN) {
            *merged = s;
            return p;
        }
        fe_k_group_free(p);
    }
    return fe_k_group_new(gr->g, ids, c, gr->split, FE_K_CHOICE_AUTO, err);
}

int fe_k_group_try_parts(fe_k_group *gr, fe_error *err)
{
    int n = gr->n, rc = FE_OK, nsolo = 0, nfused = 0, nfused_ops = 0;
    char *solo = calloc((size_t)n, 1);
    int *level = malloc((size_t)n * sizeof *level);
    int32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
    if (!solo || !level || !ids || (!gr->sub && fe_k_group_make_subs(gr, err))) {
        rc = err->code ? err->code : fe_error_set(err, FE_ENOMEM, "out of memory");
        goto done;
    }
    int nfusable = 0, nanchor = 0;
    for (int i = 0; i < n; i++) {
        nsolo += solo[i] = (char)!runs_fused(gr->sub[i]);
        nfusable += !solo[i];
        nanchor += solo[i] && is_anchor(gr, i);
    }
    /* no solo: members that fuse alone are not why the group does not;
     * and a part of several members needs two that fuse, or one and an
     * anchor */
    if (!nsolo || nfusable + (nanchor > 0) < 2)
        goto done;
    int top = levels(gr, solo, level);
    if (!(gr->part = calloc((size_t)n, sizeof *gr->part)) ||
        !(gr->unit = malloc((size_t)n * sizeof *gr->unit))) {
        fe_k_group_free_parts(gr);
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        gr->unit[i] = -1;
    for (int L = 0; L <= top && rc == FE_OK; L++) {
        int c = 0, merged = -1;
        for (int i = 0; i < n; i++)
            if (!solo[i] && level[i] == L) {
                ids[c++] = gr->nodes[i];
                gr->unit[i] = gr->nparts;
            }
        if (c) {
            fe_k_group *p = level_part(gr, solo, level, L, ids, c, &merged, err);
            if (!p) {
                rc = err->code;
                break;
            }
            if (merged >= 0) {   /* the anchor's solo part, placed earlier, goes */
                int u = gr->unit[merged];
                fe_k_group_free(gr->part[u]);
                memmove(&gr->part[u], &gr->part[u + 1], (size_t)(gr->nparts - u - 1) * sizeof *gr->part);
                gr->nparts--;
                for (int i = 0; i < n; i++)
                    gr->unit[i] -= gr->unit[i] > u;
                gr->unit[merged] = gr->nparts;
                for (int i = 0; i < n; i++)
                    if (!solo[i] && level[i] == L)
                        gr->unit[i] = gr->nparts;
            }
            gr->part[gr->nparts++] = p;
            if (p->n > 1 && p->mode != MODE_PEROP) {
                nfused++;
                nfused_ops += p->n;
            }
        }
        for (int i = 0; i < n; i++)
            if (solo[i] && level[i] == L) {
                gr->unit[i] = gr->nparts;
                gr->part[gr->nparts++] = gr->sub[i];   /* the part now owns it */
                gr->sub[i] = NULL;
            }
    }
    if (rc != FE_OK) {   /* the caller frees the group */
        fe_k_group_free_parts(gr);
        goto done;
    }
    if (!nfused) {   /* no part of several members fused (so none merged): op by op as before */
        for (int i = 0; i < n; i++)
            if (!gr->sub[i]) {   /* a solo's part: give it back */
                gr->sub[i] = gr->part[gr->unit[i]];
                gr->part[gr->unit[i]] = NULL;
            }
        fe_k_group_free_parts(gr);
        goto done;
    }
    gr->mode = MODE_PARTS;
    gr->kernel = FE_K_CHOICE_FUSED;
    gr->temp_bytes = 0;
    for (int u = 0; u < gr->nparts; u++) {
        const fe_k_group *p = gr->part[u];
        gr->temp_bytes += p->temp_bytes;
        for (int k = 0; k < p->nouts; k++)
            if (!fe_k_ids_has(gr->outs, gr->nouts, p->outs[k]))
                gr->temp_bytes += fe_graph_tensor(gr->g, p->outs[k])->bytes;
    }
    describe(gr, solo, nfused, nfused_ops);
    fe_k_group_free_subs(gr);
done:
    free(solo);
    free(level);
    free(ids);
    return rc;
}

void fe_k_group_show_parts(const fe_k_group *gr, const char *indent, FILE *f)
{
    char in2[64];
    snprintf(in2, sizeof in2, "%s  ", indent);
    for (int u = 0; u < gr->nparts; u++) {
        const fe_k_group *p = gr->part[u];
        char ops[200];
        size_t l = 0;
        ops[0] = 0;
        for (int i = 0; i < p->n && l + 1 < sizeof ops; i++) {
            snprintf(ops + l, sizeof ops - l, "%s%s", i ? ", " : "",
                     fe_node_name(gr->g, fe_graph_node(gr->g, p->nodes[i])));
            l += strlen(ops + l);
        }
        fprintf(f, "%spart %d of %d [%s]: %s\n", indent, u + 1, gr->nparts, ops, p->how);
        fe_k_group_show(p, in2, f);
    }
}
