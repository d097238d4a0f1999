/* choices.c: fused choices around an anchor (see choices.h).
 *
 * Note on the enumeration. Seed 001 keeps several kernel choices per op
 * (MultiTemplateBuffer) and, at scheduling time, grows fused choices from
 * them recursively: iteration 1 adds one epilogue, prologue or adjacent
 * subgraph to each choice, iteration 2 one more to each of those, up to
 * max_fusion_depth. Here a choice is a set of nodes holding the anchor, and
 * level d holds the sets of d + 1 nodes:
 *
 *     level 0   {ar}
 *     level 1   {ar, relu}                  epilogue      ({mm, ar}: illegal)
 *     level 2   {ar, relu, scale}           epilogue
 *     level 3   {ar, relu, scale, out}      epilogue
 *
 * Each set of level d + 1 is a set S of level d plus one neighbour v of S:
 * a consumer of a member's output or a producer of a member's input. v is
 * downstream (D) when it consumes the anchor or a D member, upstream (U)
 * when it produces for the anchor or a U member, else a sibling (X); a set
 * is an epilogue when its added nodes are all D, a prologue when all U,
 * and cross-subgraph otherwise. (v cannot be both D and U: S is convex,
 * so no path runs from a D member through v back into S.)
 *
 * Invariants: every set returned is legal as one group by legality.c's
 * merge check, on a partition where every node is alone; sets only grow
 * from sets returned, so a set reachable only through an illegal one (a
 * diamond's far side before its branches) appears once the branches do;
 * a level holds no set twice (a hash of the sorted members); the order is
 * fixed: levels in depth order, within one epilogues, prologues, cross,
 * each sorted by member ids, whatever order the neighbours were found in.
 *
 * Bounds: at most o->max choices in all, and at most 8 * o->max
 * candidate sets examined per level, so a node read by thousands of
 * others costs a bounded amount of work; either cut sets `truncated`.
 * The level's hash grows with its candidates and is emptied slot by slot,
 * so a large max costs nothing until a level is that large.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "choices.h"
#include "legality.h"

enum { ROLE_ANCHOR = 0, ROLE_D = 1, ROLE_U = 2, ROLE_X = 4 };

typedef struct cand {
    int64_t off;      /* into cnodes */
    int32_t n, parent;
    int kind;
    uint32_t slot;    /* its slot in the level's hash */
} cand;

struct fe_chooser {
    const fe_graph *g;
    fe_part *part;
    fe_choice *items;
    int32_t nitems, cap_items;
    int32_t *nodes;          /* members of every choice, one after another */
    int8_t *roles;           /* the role of each member, parallel to nodes */
    int64_t nnodes, cap_nodes;
    cand *cands;             /* the level being built */
    int32_t ncands, cap_cands;
    int32_t *cnodes;
    int8_t *croles;
    int64_t ncn, cap_cn;
    int32_t *hash;           /* cand index + 1, 0 empty; all empty between levels */
    int32_t hcap;            /* a power of two, kept at least twice ncands */
    int32_t tmp[FE_CHOICE_MAX_DEPTH + 2];
    int8_t tmp_roles[FE_CHOICE_MAX_DEPTH + 2];
};

fe_chooser *fe_chooser_new(const fe_graph *g, fe_error *err)
{
    fe_chooser *c = calloc(1, sizeof *c);
    if (!c) {
        fe_error_set(err, FE_ENOMEM, "out of memory making a chooser");
        return NULL;
    }
    c->g = g;
    c->part = fe_part_new(g, err);
    if (!c->part) {
        free(c);
        return NULL;
    }
    return c;
}

void fe_chooser_free(fe_chooser *c)
{
    if (!c)
        return;
    fe_part_free(c->part);
    free(c->items);
    free(c->nodes);
    free(c->roles);
    free(c->cands);
    free(c->cnodes);
    free(c->croles);
    free(c->hash);
    free(c);
}

/* Grow *p (of *cap elements of size sz) to hold need; 0 on out-of-memory. */
static int reserve(void **p, int64_t *cap, int64_t need, size_t sz)
{
    if (need <= *cap)
        return 1;
    int64_t n = *cap > 0 ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * sz);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

static int reserve32(void **p, int32_t *cap, int64_t need, size_t sz)
{
    int64_t c = *cap;
    int ok = reserve(p, &c, need, sz);
    *cap = (int32_t)c;
    return ok;
}

/* Grow the parallel arrays *m and *r (capacity *cap) to hold need. */
static int reserve_members(int32_t **m, int8_t **r, int64_t *cap, int64_t need)
{
    int64_t c = *cap;
    if (!reserve((void **)m, &c, need, sizeof **m))
        return 0;
    if (c != *cap || !*r) {
        int8_t *q = realloc(*r, (size_t)c);
        if (!q)
            return 0;
        *r = q;
    }
    *cap = c;
    return 1;
}

static int member_role(const int32_t *m, const int8_t *roles, int n, int32_t v)
{
    for (int i = 0; i < n; i++)
        if (m[i] == v)
            return roles[i];
    return -1;
}

/* v's role next to the set m (see the note). */
static int role_of(const fe_graph *g, const int32_t *m, const int8_t *roles, int n, int32_t v)
{
    const fe_node *nd = fe_graph_node(g, v);
    for (int k = 0; k < nd->nin; k++) {
        int32_t p = fe_graph_tensor(g, fe_node_input(g, nd, k))->producer;
        int r = p >= 0 ? member_role(m, roles, n, p) : -1;
        if (r == ROLE_ANCHOR || r == ROLE_D)
            return ROLE_D;
    }
    for (int k = 0; k < nd->nout; k++) {
        const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, k));
        for (int32_t i = 0; i < t->ncons; i++) {
            int r = member_role(m, roles, n, fe_tensor_consumer(g, t, i));
            if (r == ROLE_ANCHOR || r == ROLE_U)
                return ROLE_U;
        }
    }
    return ROLE_X;
}

static int kind_of(int flags)
{
    if (flags == ROLE_D)
        return FE_CHOICE_EPILOGUE;
    if (flags == ROLE_U)
        return FE_CHOICE_PROLOGUE;
    return FE_CHOICE_CROSS;
}

static uint64_t hash_members(const int32_t *m, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        h ^= (uint32_t)m[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

/* Slot of members m (n of them) in the level's hash: the slot holding
 * them, or the empty slot where they go. */
static uint32_t slot_of(const fe_chooser *c, const int32_t *m, int n)
{
    uint32_t mask = (uint32_t)c->hcap - 1, i = (uint32_t)hash_members(m, n) & mask;
    for (;; i = (i + 1) & mask) {
        int32_t s = c->hash[i];
        if (s == 0 || !memcmp(c->cnodes + c->cands[s - 1].off, m, (size_t)n * sizeof *m))
            return i;
    }
}

/* Room in the hash for one more candidate: double it and place the level's
 * candidates again when it would be over half full. The hash grows with
 * the candidates a level really has, so a small level costs little
 * whatever max allows. 0 on out-of-memory. */
static int hash_room(fe_chooser *c)
{
    if (2 * ((int64_t)c->ncands + 1) <= c->hcap)
        return 1;
    int32_t cap = c->hcap > 0 ? 2 * c->hcap : 64;
    int32_t *h = calloc((size_t)cap, sizeof *h);
    if (!h)
        return 0;
    free(c->hash);
    c->hash = h;
    c->hcap = cap;
    for (int32_t i = 0; i < c->ncands; i++) {
        cand *x = &c->cands[i];
        x->slot = slot_of(c, c->cnodes + x->off, x->n);
        c->hash[x->slot] = i + 1;
    }
    return 1;
}

/* Try parent + v as a candidate of the level: 1 added or skipped, 0 on
 * out-of-memory. */
static int try_add(fe_chooser *c, const fe_choice_opts *o, int32_t pi, int32_t v,
                   fe_choice_set *out)
{
    const fe_choice *par = &c->items[pi];
    const int32_t *m = c->nodes + par->off;
    const int8_t *roles = c->roles + par->off;
    int n = par->n;
    if (member_role(m, roles, n, v) >= 0)
        return 1;
    int role = role_of(c->g, m, roles, n, v), flags = role;
    for (int i = 0; i < n; i++)
        flags |= roles[i];
    int kind = kind_of(flags);
    if (!(kind & o->kinds))
        return 1;
    int at = 0;
    while (at < n && m[at] < v)
        at++;
    memcpy(c->tmp, m, (size_t)at * sizeof *m);
    memcpy(c->tmp_roles, roles, (size_t)at);
    c->tmp[at] = v;
    c->tmp_roles[at] = (int8_t)role;
    memcpy(c->tmp + at + 1, m + at, (size_t)(n - at) * sizeof *m);
    memcpy(c->tmp_roles + at + 1, roles + at, (size_t)(n - at));
    if (!hash_room(c))
        return 0;
    uint32_t slot = slot_of(c, c->tmp, n + 1);
    if (c->hash[slot])
        return 1;
    /* An illegal set stays in the level (kind 0, never returned) so that
     * other parents reaching it do not ask legality again. */
    if (!fe_part_can_merge(c->part, c->tmp, n + 1, NULL, 0)) {
        out->illegal++;
        kind = 0;
    }
    if (!reserve32((void **)&c->cands, &c->cap_cands, c->ncands + 1, sizeof *c->cands) ||
        !reserve_members(&c->cnodes, &c->croles, &c->cap_cn, c->ncn + n + 1))
        return 0;
    memcpy(c->cnodes + c->ncn, c->tmp, (size_t)(n + 1) * sizeof *c->tmp);
    memcpy(c->croles + c->ncn, c->tmp_roles, (size_t)(n + 1));
    c->cands[c->ncands] = (cand){.off = c->ncn, .n = n + 1, .parent = pi, .kind = kind,
                                 .slot = slot};
    c->ncn += n + 1;
    c->hash[slot] = ++c->ncands;
    return 1;
}

/* Kind, then member ids: the level's fixed order. */
static int cmp_cand(const void *a, const void *b, void *arg)
{
    const fe_chooser *c = arg;
    const cand *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    const int32_t *p = c->cnodes + x->off, *q = c->cnodes + y->off;
    for (int32_t i = 0; i < x->n; i++)
        if (p[i] != q[i])
            return p[i] < q[i] ? -1 : 1;
    return 0;
}

/* Append a choice (members m with roles r) to the answer. */
static int push_choice(fe_chooser *c, const int32_t *m, const int8_t *r, int32_t n,
                       int32_t parent, int kind)
{
    if (!reserve32((void **)&c->items, &c->cap_items, c->nitems + 1, sizeof *c->items))
        return 0;
    if (!reserve_members(&c->nodes, &c->roles, &c->cap_nodes, c->nnodes + n))
        return 0;
    memcpy(c->nodes + c->nnodes, m, (size_t)n * sizeof *m);
    memcpy(c->roles + c->nnodes, r, (size_t)n);
    c->items[c->nitems++] = (fe_choice){.off = (int32_t)c->nnodes, .n = n, .parent = parent,
                                        .kind = kind};
    c->nnodes += n;
    return 1;
}

/* Build one level from the choices [from, to); 0 on out-of-memory. */
static int grow_level(fe_chooser *c, const fe_choice_opts *o, int32_t from, int32_t to,
                      fe_choice_set *out)
{
    const fe_graph *g = c->g;
    int64_t limit = 8 * (int64_t)o->max;
    int ok = 1;
    c->ncands = 0;
    c->ncn = 0;
    for (int32_t pi = from; pi < to; pi++) {
        for (int32_t j = 0; j < c->items[pi].n; j++) {
            const fe_node *nd = fe_graph_node(g, c->nodes[c->items[pi].off + j]);
            for (int k = 0; k < nd->nout; k++) {
                const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, k));
                for (int32_t i = 0; i < t->ncons; i++) {
                    if (c->ncands >= limit) {
                        out->truncated = 1;
                        goto sort;
                    }
                    if (!(ok = try_add(c, o, pi, fe_tensor_consumer(g, t, i), out)))
                        goto sort;
                }
            }
            for (int k = 0; k < nd->nin; k++) {
                int32_t p = fe_graph_tensor(g, fe_node_input(g, nd, k))->producer;
                if (p < 0)
                    continue;
                if (c->ncands >= limit) {
                    out->truncated = 1;
                    goto sort;
                }
                if (!(ok = try_add(c, o, pi, p, out)))
                    goto sort;
            }
        }
    }
sort:
    for (int32_t i = 0; i < c->ncands; i++)   /* empty the hash for the next level */
        c->hash[c->cands[i].slot] = 0;
    if (!ok)
        return 0;
    if (c->ncands > 1)   /* cands is NULL while empty */
        qsort_r(c->cands, (size_t)c->ncands, sizeof *c->cands, cmp_cand, c);
    for (int32_t i = 0; i < c->ncands; i++) {
        if (c->nitems >= o->max && c->cands[i].kind != 0) {
            out->truncated = 1;
            break;
        }
        const cand *x = &c->cands[i];
        if (x->kind == 0)
            continue;
        if (!push_choice(c, c->cnodes + x->off, c->croles + x->off, x->n, x->parent, x->kind))
            return 0;
    }
    return 1;
}

int fe_chooser_around(fe_chooser *c, int32_t anchor, const fe_choice_opts *o,
                      fe_choice_set *out, fe_error *err)
{
    *out = (fe_choice_set){0};
    if (anchor < 0 || anchor >= c->g->nnodes)
        return fe_error_set(err, FE_EINPUT, "the anchor is not a node of this graph");
    if (o->depth < 0 || o->depth > FE_CHOICE_MAX_DEPTH)
        return fe_error_set(err, FE_EINPUT, "depth must be an integer from 0 to %d, not %d",
                            FE_CHOICE_MAX_DEPTH, o->depth);
    if (o->max < 1 || o->max > FE_CHOICE_MAX_COUNT)
        return fe_error_set(err, FE_EINPUT, "max must be an integer from 1 to %d, not %d",
                            FE_CHOICE_MAX_COUNT, o->max);
    if (o->kinds & ~FE_CHOICE_ALL)
        return fe_error_set(err, FE_EINPUT, "kinds must be FE_CHOICE_* bits");
    c->nitems = 0;
    c->nnodes = 0;
    int32_t a = anchor;
    int8_t r = ROLE_ANCHOR;
    if (!push_choice(c, &a, &r, 1, -1, 0))
        return fe_error_set(err, FE_ENOMEM, "out of memory enumerating choices");
    int32_t from = 0;
    /* A level past max is still built: it says whether max cut anything. */
    for (int d = 1; d <= o->depth; d++) {
        int32_t to = c->nitems;
        if (!grow_level(c, o, from, to, out))
            return fe_error_set(err, FE_ENOMEM, "out of memory enumerating choices");
        if (c->nitems == to)
            break;
        from = to;
    }
    out->items = c->items;
    out->n = c->nitems;
    out->nodes = c->nodes;
    return FE_OK;
}
