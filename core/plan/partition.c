/* partition.c: groups that grow by legal merges (legality.c checks each
 * merge before a driver makes it).
 *
 * Note on the order of groups. The groups carry a topological order (pos)
 * that bounds the merge check's search (legality.c). After a merge the
 * order is repaired locally, in the spirit of Pearce and Kelly's dynamic
 * topological sort: in the span of positions from S's first group to its
 * last, S's ancestors move first, then the merged group, then everything
 * else, each keeping its relative order. Positions outside the span are
 * untouched; emptied slots stay free (-1). Drivers propose nearby groups
 * (Inductor's +-64 window), so spans and searches stay short.
 *
 * Every group is convex and the group DAG acyclic after each merge, so the
 * partition is legal at every moment and fe_part_to_plan needs no check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "partition.h"

void fe_kinds_add(fe_kinds *k, const fe_graph *g, int32_t node)
{
    const fe_node *n = fe_graph_node(g, node);
    k->n++;
    k->conv += n->op == FE_OP_CONV2D;
    k->pad += n->op == FE_OP_PAD;
    if (n->op == FE_OP_ALL_REDUCE)
        k->collective++;
    else if (n->op == FE_OP_BATCH_NORM)
        k->affine++;
    else if (n->op == FE_OP_MAX_POOL2D || n->op == FE_OP_AVG_POOL2D)
        k->pool++;
    else if (n->pattern == FE_OUT_FUSABLE)
        k->gemm++;
    else if (n->pattern == FE_OPAQUE)
        k->opaque++;
    else if (n->pattern == FE_INJECTIVE)
        k->injective++;
    else if (n->pattern == FE_REDUCTION)
        k->reduction++;
}

void fe_kinds_merge(fe_kinds *into, const fe_kinds *from)
{
    into->n += from->n;
    into->gemm += from->gemm;
    into->collective += from->collective;
    into->pool += from->pool;
    into->conv += from->conv;
    into->pad += from->pad;
    into->opaque += from->opaque;
    into->injective += from->injective;
    into->reduction += from->reduction;
    into->affine += from->affine;
}

fe_part *fe_part_new(const fe_graph *g, fe_error *err)
{
    fe_part *p = calloc(1, sizeof *p);
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    if (p) {
        p->g = g;
        p->n = p->ngroups = g->nnodes;
        p->gid = malloc(n * sizeof *p->gid);
        p->next = malloc(n * sizeof *p->next);
        p->head = malloc(n * sizeof *p->head);
        p->size = malloc(n * sizeof *p->size);
        p->minv = malloc(n * sizeof *p->minv);
        p->maxv = malloc(n * sizeof *p->maxv);
        p->kinds = calloc(n, sizeof *p->kinds);
        p->pos = malloc(n * sizeof *p->pos);
        p->order = malloc(n * sizeof *p->order);
        p->mark = calloc(n, sizeof *p->mark);
        p->stack = malloc(n * sizeof *p->stack);
        p->tmp = malloc(n * sizeof *p->tmp);
    }
    if (!p || !p->gid || !p->next || !p->head || !p->size || !p->minv || !p->maxv ||
        !p->pos || !p->order || !p->kinds || !p->mark || !p->stack || !p->tmp) {
        fe_part_free(p);
        fe_error_set(err, FE_ENOMEM, "out of memory building groups");
        return NULL;
    }
    for (int32_t v = 0; v < g->nnodes; v++) {
        p->gid[v] = p->head[v] = p->minv[v] = p->maxv[v] = p->pos[v] = p->order[v] = v;
        p->next[v] = -1;
        p->size[v] = 1;
        fe_kinds_add(&p->kinds[v], g, v);
    }
    return p;
}

void fe_part_free(fe_part *p)
{
    if (!p)
        return;
    free(p->gid);
    free(p->next);
    free(p->head);
    free(p->size);
    free(p->minv);
    free(p->maxv);
    free(p->kinds);
    free(p->pos);
    free(p->order);
    free(p->mark);
    free(p->stack);
    free(p->tmp);
    free(p);
}

int32_t fe_part_stamps(fe_part *p)
{
    if (p->stamp > INT32_MAX - 4) {
        memset(p->mark, 0, (size_t)p->n * sizeof *p->mark);
        p->stamp = 0;
    }
    p->stamp += 2;
    return p->stamp - 1;
}

/* Mark S's ancestors placed after first (the span's start) with stamp anc;
 * S itself is marked in_s. */
static void mark_ancestors(fe_part *p, const int32_t *gids, int n, int32_t in_s, int32_t anc,
                           int32_t first)
{
    const fe_graph *g = p->g;
    int32_t sp = 0;
    for (int i = 0; i < n; i++)
        p->stack[sp++] = gids[i];
    while (sp > 0) {
        int32_t c = p->stack[--sp];
        for (int32_t v = p->head[c]; v >= 0; v = p->next[v]) {
            const fe_node *nd = fe_graph_node(g, v);
            for (int k = 0; k < nd->nin; k++) {
                int32_t prod = fe_graph_tensor(g, fe_node_input(g, nd, k))->producer;
                if (prod < 0)
                    continue;
                int32_t d = p->gid[prod];
                if (p->mark[d] == in_s || p->mark[d] == anc || p->pos[d] < first)
                    continue;
                p->mark[d] = anc;
                p->stack[sp++] = d;
            }
        }
    }
}

int32_t fe_part_merge(fe_part *p, const int32_t *gids, int n)
{
    int32_t keep = gids[0], first = p->pos[gids[0]], last = first;
    for (int i = 1; i < n; i++) {
        if (p->size[gids[i]] > p->size[keep])
            keep = gids[i];
        if (p->pos[gids[i]] < first)
            first = p->pos[gids[i]];
        if (p->pos[gids[i]] > last)
            last = p->pos[gids[i]];
    }
    int32_t in_s = fe_part_stamps(p), anc = in_s + 1;
    for (int i = 0; i < n; i++)
        p->mark[gids[i]] = in_s;
    mark_ancestors(p, gids, n, in_s, anc, first);

    /* Re-lay the span [first, last]: ancestors, the merged group, the rest;
     * the slots S gives up become free at the end of the span. */
    int32_t na = 0, nr = 0;
    for (int32_t at = first; at <= last; at++) {
        int32_t d = p->order[at];
        if (d < 0 || p->mark[d] == in_s)
            continue;
        if (p->mark[d] == anc)
            p->stack[na++] = d;
        else
            p->tmp[nr++] = d;
    }
    int32_t at = first;
    for (int32_t i = 0; i < na; i++) {
        p->order[at] = p->stack[i];
        p->pos[p->stack[i]] = at++;
    }
    p->order[at] = keep;
    p->pos[keep] = at++;
    for (int32_t i = 0; i < nr; i++) {
        p->order[at] = p->tmp[i];
        p->pos[p->tmp[i]] = at++;
    }
    while (at <= last)
        p->order[at++] = -1;

    for (int i = 0; i < n; i++) {
        int32_t o = gids[i];
        if (o == keep)
            continue;
        /* Relabel the smaller list and splice it in front of keep's. */
        int32_t tail = -1;
        for (int32_t v = p->head[o]; v >= 0; v = p->next[v]) {
            p->gid[v] = keep;
            tail = v;
        }
        p->next[tail] = p->head[keep];
        p->head[keep] = p->head[o];
        p->size[keep] += p->size[o];
        if (p->minv[o] < p->minv[keep])
            p->minv[keep] = p->minv[o];
        if (p->maxv[o] > p->maxv[keep])
            p->maxv[keep] = p->maxv[o];
        fe_kinds_merge(&p->kinds[keep], &p->kinds[o]);
        p->size[o] = 0;
        p->head[o] = -1;
        p->pos[o] = -1;
        p->ngroups--;
    }
    return keep;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int32_t fe_part_members(const fe_part *p, int32_t gid, int32_t *out)
{
    int32_t n = 0;
    for (int32_t v = p->head[gid]; v >= 0; v = p->next[v])
        out[n++] = v;
    if (n < 16) {
        for (int32_t i = 1; i < n; i++) {
            int32_t x = out[i], j = i;
            while (j > 0 && out[j - 1] > x) {
                out[j] = out[j - 1];
                j--;
            }
            out[j] = x;
        }
    } else {
        qsort(out, (size_t)n, sizeof *out, cmp_i32);
    }
    return n;
}
