/* candidates.c: the legal groups of a window, each found once (see
 * candidates.h).
 *
 * Note on the enumeration. A group worth pricing is connected: nodes that
 * share no tensor save nothing by sharing a kernel. The connected sets of
 * up to k nodes are listed by Wernicke's ESU walk (2006): from each root r
 * in turn, a set S grows by one node w of its extension E, the neighbours
 * of S numbered above r that were not neighbours of S when they could have
 * been added before. The child's extension is what is left of E after w,
 * plus w's exclusive neighbours (above r, not in S and adjacent to no
 * member of S). Every connected set is reached once, from its smallest
 * node, along one path:
 *
 *        a - b - c        root a: {a} {a,b} {a,b,c} {a,b,d}
 *            |                    {a,b,c,d}
 *            d            root b: {b} {b,c} {b,d} {b,c,d}   root c: {c}  ...
 *
 * Pruning. Which kernel class takes a set depends on its op counts only,
 * and a set no class takes has no superset that one does (legality.c's
 * classes only forbid: a second GEMM, a data-movement op beside a GEMM,
 * an opaque op among others), so such a branch is cut at once. A set that
 * is not convex can be mended by adding nodes, but only by adding its
 * convex hull, the nodes on paths from S back to S:
 *
 *     hull(S) = S + (descendants(S) & ancestors(S))
 *
 * and every convex superset of S holds it. So a branch whose hull has more
 * than k nodes is cut too. Descendants and ancestors of each node of the
 * window are bit sets made once per window (the window is convex, so
 * paths between its nodes stay inside it), and S's are their unions, kept
 * per depth of the walk: each step costs a few words. Sets that are not
 * their own hull are not offered; the rest go to fe_part_can_merge on a
 * partition of single nodes, which rules on convexity and the shape rules
 * (a pad feeding a conv2d, a pool's epilogue): the legality owner decides
 * every candidate, this file only proposes.
 *
 * Horizontal sets. Nodes that share nothing can still share a kernel,
 * and in the cost model that saves a launch (seed 002's CollectInputs
 * pulls such nodes into a group). With horizontal set, every pair of
 * window nodes counts as neighbours, so every legal set is listed, up to
 * 2^n of them: for small windows only.
 *
 * Cost. The number of connected sets grows like n d^(k-1) for n nodes of
 * degree d; transformer and convolution graphs have small d, and the class
 * rules cut most branches at the first GEMM or opaque op. max_candidates
 * and a deadline bound the walk on anything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "candidates.h"
#include "clock.h"
#include "legality.h"

int fe_cands_push(fe_cands *c, const int32_t *nodes, int n)
{
    if (c->n + 2 > c->cap) {
        int64_t cap = c->cap ? 2 * c->cap : 1024;
        int64_t *off = realloc(c->off, (size_t)cap * sizeof *off);
        if (!off)
            return FE_ENOMEM;
        c->off = off;
        c->cap = cap;
        if (c->n == 0)
            c->off[0] = 0;
    }
    int64_t at = c->off[c->n];
    if (at + n > c->nodecap) {
        int64_t cap = c->nodecap ? 2 * c->nodecap : 4096;
        while (cap < at + n)
            cap *= 2;
        int32_t *nodes2 = realloc(c->nodes, (size_t)cap * sizeof *nodes2);
        if (!nodes2)
            return FE_ENOMEM;
        c->nodes = nodes2;
        c->nodecap = cap;
    }
    memcpy(c->nodes + at, nodes, (size_t)n * sizeof *nodes);
    c->off[++c->n] = at + n;
    return FE_OK;
}

void fe_cands_clear(fe_cands *c)
{
    c->n = 0;
    if (c->off)
        c->off[0] = 0;
}

void fe_cands_free(fe_cands *c)
{
    free(c->off);
    free(c->nodes);
    memset(c, 0, sizeof *c);
}

struct fe_cand_space {
    const fe_graph *g;
    fe_part *part;          /* every node alone: gid[v] == v */
    int32_t *local;         /* node -> index in the current window, -1 outside */
    int32_t *stamp;         /* node -> visit stamp (neighbour lists without repeats) */
    int32_t now;
};

fe_cand_space *fe_cand_space_new(const fe_graph *g, fe_error *err)
{
    fe_cand_space *s = calloc(1, sizeof *s);
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    if (s) {
        s->g = g;
        s->local = malloc(n * sizeof *s->local);
        s->stamp = calloc(n, sizeof *s->stamp);
    }
    if (!s || !s->local || !s->stamp || !(s->part = fe_part_new(g, err))) {
        fe_cand_space_free(s);
        fe_error_set(err, FE_ENOMEM, "out of memory listing candidate groups");
        return NULL;
    }
    for (int32_t v = 0; v < g->nnodes; v++)
        s->local[v] = -1;
    return s;
}

void fe_cand_space_free(fe_cand_space *s)
{
    if (!s)
        return;
    fe_part_free(s->part);
    free(s->local);
    free(s->stamp);
    free(s);
}

int fe_cand_window_ok(fe_cand_space *s, const int32_t *win, int n, char *why, size_t size)
{
    return fe_part_convex(s->part, win, n, why, size);
}

int fe_cand_legal(fe_cand_space *s, const int32_t *nodes, int n, char *why, size_t size)
{
    return n == 1 || fe_part_can_merge(s->part, nodes, n, why, size);
}

/* ---- the walk ---- */

typedef struct walk {
    fe_cand_space *s;
    const fe_cand_opts *o;
    const int32_t *win;
    int nw;
    int32_t *adj_off, *adj;   /* local -> neighbours (local indices), no repeats */
    int32_t *near;            /* local -> members of S it is in or next to */
    int32_t *sub;             /* S, local indices, in the order added */
    int32_t *ext;             /* one extension list per depth, nw each */
    int32_t *nodes;           /* S as sorted node ids, for the checks */
    int words;                /* 64-bit words of a bit set over the window */
    uint64_t *desc, *anc;     /* local -> its descendants, its ancestors (words each) */
    uint64_t *sdesc, *sanc;   /* per depth: S's descendants and ancestors */
    uint64_t *in;             /* S's bits */
    fe_cands *out;
    int64_t found, visited, steps;   /* candidates kept, sets looked at, extensions tried */
    fe_error *err;
} walk;

static void add_neighbour(walk *w, int32_t self, int32_t v, int32_t *cnt, int fill)
{
    fe_cand_space *s = w->s;
    int32_t u = s->local[v];
    if (u < 0 || u == self || s->stamp[v] == s->now)
        return;
    s->stamp[v] = s->now;
    if (fill)
        w->adj[w->adj_off[self] + *cnt] = u;
    (*cnt)++;
}

/* Readers of t inside the window: consumers are sorted by id, so only
 * those between the window's first and last node are looked at (a table
 * read by every layer of a large model has thousands). */
static void add_readers(walk *w, int32_t self, const fe_tensor *t, int32_t *cnt, int fill)
{
    const fe_graph *g = w->s->g;
    int32_t lo = 0, hi = t->ncons, first = w->win[0], last = w->win[w->nw - 1];
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (fe_tensor_consumer(g, t, mid) < first)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int32_t c = lo; c < t->ncons && fe_tensor_consumer(g, t, c) <= last; c++)
        add_neighbour(w, self, fe_tensor_consumer(g, t, c), cnt, fill);
}

/* Neighbours of local node i: producers of its inputs, readers of its
 * outputs and, with siblings, the other readers of its inputs. Counts
 * them, or with fill writes them at adj_off[i]. */
static int32_t neighbours(walk *w, int32_t i, int fill)
{
    fe_cand_space *s = w->s;
    const fe_graph *g = s->g;
    const fe_node *n = fe_graph_node(g, w->win[i]);
    int32_t cnt = 0;
    if (w->o->horizontal) {
        /* every other node of the window: sets need not share a tensor */
        for (int32_t j = 0; j < w->nw; j++)
            if (j != i) {
                if (fill)
                    w->adj[w->adj_off[i] + cnt] = j;
                cnt++;
            }
        return cnt;
    }
    if (++s->now == INT32_MAX) {
        memset(s->stamp, 0, (size_t)g->nnodes * sizeof *s->stamp);
        s->now = 1;
    }
    for (int k = 0; k < n->nin; k++) {
        const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, n, k));
        if (t->producer >= 0)
            add_neighbour(w, i, t->producer, &cnt, fill);
        if (w->o->siblings)
            add_readers(w, i, t, &cnt, fill);
    }
    for (int k = 0; k < n->nout; k++)
        add_readers(w, i, fe_graph_tensor(g, fe_node_output(g, n, k)), &cnt, fill);
    return cnt;
}

/* Descendants in reverse topological order, ancestors in order, through
 * the producer -> reader edges inside the window. */
static void build_reach(walk *w)
{
    const fe_graph *g = w->s->g;
    int W = w->words;
    for (int32_t i = w->nw - 1; i >= 0; i--) {
        const fe_node *n = fe_graph_node(g, w->win[i]);
        uint64_t *d = w->desc + (size_t)i * W;
        for (int k = 0; k < n->nout; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            for (int32_t c = 0; c < t->ncons; c++) {
                int32_t j = w->s->local[fe_tensor_consumer(g, t, c)];
                if (j < 0)
                    continue;
                const uint64_t *dj = w->desc + (size_t)j * W;
                for (int x = 0; x < W; x++)
                    d[x] |= dj[x];
                d[j >> 6] |= UINT64_C(1) << (j & 63);
            }
        }
    }
    for (int32_t j = 0; j < w->nw; j++) {
        const fe_node *n = fe_graph_node(g, w->win[j]);
        uint64_t *a = w->anc + (size_t)j * W;
        for (int k = 0; k < n->nin; k++) {
            int32_t pr = fe_graph_tensor(g, fe_node_input(g, n, k))->producer;
            int32_t i = pr >= 0 ? w->s->local[pr] : -1;
            if (i < 0)
                continue;
            const uint64_t *ai = w->anc + (size_t)i * W;
            for (int x = 0; x < W; x++)
                a[x] |= ai[x];
            a[i >> 6] |= UINT64_C(1) << (i & 63);
        }
    }
}

static int build_adjacency(walk *w)
{
    w->adj_off = malloc((size_t)(w->nw + 1) * sizeof *w->adj_off);
    if (!w->adj_off)
        return FE_ENOMEM;
    w->adj_off[0] = 0;
    for (int32_t i = 0; i < w->nw; i++)
        w->adj_off[i + 1] = w->adj_off[i] + neighbours(w, i, 0);
    w->adj = malloc((size_t)(w->adj_off[w->nw] > 0 ? w->adj_off[w->nw] : 1) * sizeof *w->adj);
    if (!w->adj)
        return FE_ENOMEM;
    for (int32_t i = 0; i < w->nw; i++)
        neighbours(w, i, 1);
    return FE_OK;
}

/* Nodes of S's hull that are not in S (S at depth, its unions at that
 * depth's slot). */
static int hull_extra(const walk *w, int depth)
{
    const uint64_t *d = w->sdesc + (size_t)depth * w->words, *a = w->sanc + (size_t)depth * w->words;
    int extra = 0;
    for (int x = 0; x < w->words; x++)
        extra += __builtin_popcountll(d[x] & a[x] & ~w->in[x]);
    return extra;
}

/* S (depth members) found: keep it if the legality owner takes it. */
/* Past the deadline? Read every 4096 calls: the clock costs more than a step. */
static int late(walk *w)
{
    if ((++w->steps & 4095) || w->o->deadline <= 0 || fe_clock_s() <= w->o->deadline)
        return FE_OK;
    return fe_error_set(w->err, FE_EINPUT, "listing candidate groups ran past the time limit after "
                        "%lld candidates (%lld sets looked at): lower max_group or solve smaller "
                        "windows", (long long)w->found, (long long)w->visited);
}

static int emit(walk *w, int depth)
{
    w->visited++;
    if (late(w) != FE_OK)
        return FE_EINPUT;
    if (hull_extra(w, depth) > 0)
        return FE_OK;   /* not convex: fe_part_can_merge would say so, at more cost */
    for (int i = 0; i < depth; i++) {
        int32_t v = w->win[w->sub[i]], j = i;
        while (j > 0 && w->nodes[j - 1] > v) {
            w->nodes[j] = w->nodes[j - 1];
            j--;
        }
        w->nodes[j] = v;
    }
    if (!fe_cand_legal(w->s, w->nodes, depth, NULL, 0))
        return FE_OK;
    if (w->found >= w->o->max_candidates)
        return fe_error_set(w->err, FE_EINPUT, "more than %lld candidate groups of up to %d nodes "
                            "in a window of %d nodes: lower max_group, solve smaller windows or "
                            "raise max_candidates", (long long)w->o->max_candidates,
                            w->o->max_group, w->nw);
    w->found++;
    return fe_cands_push(w->out, w->nodes, depth) == FE_OK ? FE_OK
           : fe_error_set(w->err, FE_ENOMEM, "out of memory listing candidate groups");
}

/* Add local i to S (d = 1) or take it out (d = -1): its neighbours'
 * counts and S's bits; adding also makes depth's unions from the last. */
static void near_add(walk *w, int32_t i, int d, int depth)
{
    w->near[i] += d;
    for (int32_t a = w->adj_off[i]; a < w->adj_off[i + 1]; a++)
        w->near[w->adj[a]] += d;
    w->in[i >> 6] ^= UINT64_C(1) << (i & 63);
    if (d < 0)
        return;
    int W = w->words;
    uint64_t *sd = w->sdesc + (size_t)depth * W, *sa = w->sanc + (size_t)depth * W;
    const uint64_t *di = w->desc + (size_t)i * W, *ai = w->anc + (size_t)i * W;
    for (int x = 0; x < W; x++) {
        sd[x] = sd[x - W] | di[x];
        sa[x] = sa[x - W] | ai[x];
    }
}

/* S = sub[0..depth) with counts kinds, extension ext[0..next). */
static int extend(walk *w, int depth, const int32_t *ext, int next, int32_t root,
                  const fe_kinds *kinds)
{
    int rc = emit(w, depth);
    if (rc != FE_OK || depth == w->o->max_group)
        return rc;
    const fe_graph *g = w->s->g;
    int32_t *child = w->ext + (size_t)depth * (size_t)w->nw;
    for (int i = 0; i < next && rc == FE_OK; i++) {
        int32_t x = ext[i];
        fe_kinds k = *kinds;
        fe_kinds_add(&k, g, w->win[x]);
        if (fe_kinds_class(&k, NULL) < 0)
            continue;   /* no superset is legal either */
        int m = 0;
        for (int j = i + 1; j < next; j++)
            child[m++] = ext[j];
        for (int32_t a = w->adj_off[x]; a < w->adj_off[x + 1]; a++)
            if (w->adj[a] > root && w->near[w->adj[a]] == 0)
                child[m++] = w->adj[a];
        w->sub[depth] = x;
        near_add(w, x, 1, depth + 1);
        if (depth + 1 + hull_extra(w, depth + 1) <= w->o->max_group)
            rc = extend(w, depth + 1, child, m, root, &k);
        else
            rc = late(w);   /* a pruned branch is a step too */
        near_add(w, x, -1, depth + 1);
    }
    return rc;
}

int fe_cands_enumerate(fe_cand_space *s, const int32_t *win, int n, const fe_cand_opts *o,
                       fe_cands *out, int64_t *visited, fe_error *err)
{
    walk w = {.s = s, .o = o, .win = win, .nw = n, .out = out, .err = err};
    int k = o->max_group < n ? o->max_group : n;
    int rc = FE_OK;
    if (n < 1 || k < 1)
        return FE_OK;
    if (n > FE_CAND_MAX_WINDOW)
        return fe_error_set(err, FE_EINPUT, "a window of %d nodes: the most is %d (solve a larger "
                            "graph in windows)", n, FE_CAND_MAX_WINDOW);
    for (int i = 0; i < n; i++)
        s->local[win[i]] = i;
    w.near = calloc((size_t)n, sizeof *w.near);
    w.sub = malloc((size_t)n * sizeof *w.sub);
    w.nodes = malloc((size_t)n * sizeof *w.nodes);
    w.words = (n + 63) / 64;
    w.ext = malloc((size_t)n * (size_t)(k + 1) * sizeof *w.ext);
    w.desc = calloc((size_t)n * (size_t)w.words, sizeof *w.desc);
    w.anc = calloc((size_t)n * (size_t)w.words, sizeof *w.anc);
    /* depth 0 is an empty S, the base of depth 1's unions */
    w.sdesc = calloc((size_t)(k + 1) * (size_t)w.words, sizeof *w.sdesc);
    w.sanc = calloc((size_t)(k + 1) * (size_t)w.words, sizeof *w.sanc);
    w.in = calloc((size_t)w.words, sizeof *w.in);
    if (!w.near || !w.sub || !w.nodes || !w.ext || !w.desc || !w.anc || !w.sdesc || !w.sanc ||
        !w.in || build_adjacency(&w) != FE_OK)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory listing candidate groups");
    if (rc == FE_OK)
        build_reach(&w);
    for (int32_t r = 0; r < n && rc == FE_OK; r++) {
        fe_kinds kinds = {0};
        fe_kinds_add(&kinds, s->g, win[r]);
        int m = 0;
        for (int32_t a = w.adj_off[r]; a < w.adj_off[r + 1]; a++)
            if (w.adj[a] > r)
                w.ext[m++] = w.adj[a];
        w.sub[0] = r;
        near_add(&w, r, 1, 1);
        /* The root's extension sits in level 0's list; children use
         * levels 1 and up. */
        rc = extend(&w, 1, w.ext, m, r, &kinds);
        near_add(&w, r, -1, 1);
    }
    for (int i = 0; i < n; i++)
        s->local[win[i]] = -1;
    if (visited)
        *visited = w.visited;
    free(w.adj_off);
    free(w.adj);
    free(w.near);
    free(w.sub);
    free(w.nodes);
    free(w.ext);
    free(w.desc);
    free(w.anc);
    free(w.sdesc);
    free(w.sanc);
    free(w.in);
    return rc;
}

/* ---- unions of a solution's groups ---- */

/* Append the union of sets a and b of c to out when it is legal; 1 if
 * appended, 0 if not, -1 out of memory. */
static int try_union(fe_cand_space *s, const fe_cands *c, int64_t a, int64_t b, fe_cands *out,
                     int32_t **buf, int64_t *bufcap)
{
    int64_t na = c->off[a + 1] - c->off[a], nb = c->off[b + 1] - c->off[b];
    if (na + nb > *bufcap) {
        int32_t *nbuf = realloc(*buf, (size_t)(na + nb) * sizeof *nbuf);
        if (!nbuf)
            return -1;
        *buf = nbuf;
        *bufcap = na + nb;
    }
    /* the two sorted sets merged */
    const int32_t *x = c->nodes + c->off[a], *y = c->nodes + c->off[b];
    int64_t i = 0, j = 0, m = 0;
    while (i < na || j < nb)
        (*buf)[m++] = j >= nb || (i < na && x[i] < y[j]) ? x[i++] : y[j++];
    if (!fe_cand_legal(s, *buf, (int)m, NULL, 0))
        return 0;
    return fe_cands_push(out, *buf, (int)m) == FE_OK ? 1 : -1;
}

int fe_cands_unions(fe_cand_space *s, const fe_cands *c, const int64_t *chosen, int64_t n,
                    fe_cands *out, int64_t **pairs, fe_error *err)
{
    int32_t *buf = NULL;
    int64_t bufcap = 0, found = 0, cap = 0;
    *pairs = NULL;
    for (int64_t k = 0; k < n; k++)
        for (int64_t k2 = k + 1; k2 < n; k2++) {
            int rc = try_union(s, c, chosen[k], chosen[k2], out, &buf, &bufcap);
            if (rc > 0 && found + 1 > cap) {
                cap = cap ? 2 * cap : 64;
                int64_t *np = realloc(*pairs, (size_t)cap * 2 * sizeof *np);
                rc = np ? rc : -1;
                if (np)
                    *pairs = np;
            }
            if (rc < 0) {
                free(buf);
                return fe_error_set(err, FE_ENOMEM, "out of memory growing candidate groups");
            }
            if (rc > 0) {
                (*pairs)[2 * found] = chosen[k];
                (*pairs)[2 * found + 1] = chosen[k2];
                found++;
            }
        }
    free(buf);
    return FE_OK;
}
