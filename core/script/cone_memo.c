/* cone_memo.c: expression-pattern matches by cone signature (cone_memo.h).
 * A match is kept as the positions of its nodes among the cone's sorted
 * members, which name the same nodes in every cone of the signature. */
#include <stdlib.h>
#include <string.h>

#include "cone_memo.h"
#include "groupsig.h"
#include "run.h"
#include "u64map.h"

#define SALT 0xC0E5A17ull   /* cone signatures apart from hook memo keys */

typedef struct entry {
    uint64_t key1;     /* the signature's second word (the map holds the first) */
    int32_t off, n;    /* positions pos[off .. off+n) */
} entry;

struct fe_cone_memo {
    const fe_graph *g;
    fe_groupsig *sig;
    int height;
    int32_t *depth;    /* per node: its depth in the current cone (1: the root), 0 if out */
    int32_t cone[FE_CONE_MAX], n;   /* the current cone, sorted; n = 0: none */
    uint64_t key[2];
    fe_u64map index;   /* key[0] mixed with the pattern -> entries index + 1 */
    entry *entries;
    int64_t nentries, cap;
    int32_t *pos;
    int64_t npos, poscap;
};

fe_cone_memo *fe_cone_memo_new(const fe_graph *g, int height, fe_error *err)
{
    fe_cone_memo *m = fe_calloc(1, sizeof *m, err);
    if (!m)
        return NULL;
    m->g = g;
    m->height = height;
    m->depth = fe_calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, sizeof *m->depth, err);
    m->sig = m->depth ? fe_groupsig_new(g, err) : NULL;
    if (!m->sig) {
        fe_cone_memo_free(m);
        return NULL;
    }
    return m;
}

void fe_cone_memo_free(fe_cone_memo *m)
{
    if (!m)
        return;
    fe_groupsig_free(m->sig);
    fe_u64map_free(&m->index);
    free(m->depth);
    free(m->entries);
    free(m->pos);
    free(m);
}

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

int fe_cone_memo_at(fe_cone_memo *m, int32_t v)
{
    const fe_graph *g = m->g;
    for (int32_t i = 0; i < m->n; i++)
        m->depth[m->cone[i]] = 0;
    /* Breadth first from the root, so each node is reached at its least
     * depth and taken up to the full height from there. */
    int32_t n = 0, at = 0, fits = 1;
    m->cone[n++] = v;
    m->depth[v] = 1;
    while (at < n && fits) {
        int32_t u = m->cone[at++];
        if (m->depth[u] >= m->height)
            continue;
        const fe_node *nd = fe_graph_node(g, u);
        for (int k = 0; k < nd->nin && fits; k++) {
            int32_t p = fe_graph_tensor(g, fe_node_input(g, nd, k))->producer;
            if (p < 0 || m->depth[p])
                continue;
            if (n == FE_CONE_MAX) {
                fits = 0;
                break;
            }
            m->depth[p] = m->depth[u] + 1;
            m->cone[n++] = p;
        }
    }
    m->n = n;
    if (!fits) {
        for (int32_t i = 0; i < n; i++)
            m->depth[m->cone[i]] = 0;
        m->n = 0;
        return 0;
    }
    qsort(m->cone, (size_t)n, sizeof *m->cone, cmp_i32);
    fe_groupsig_of(m->sig, SALT, m->cone, n, NULL, NULL, 1, m->key);
    int32_t root = 0;
    while (m->cone[root] != v)
        root++;
    m->key[1] = fe_mix64(m->key[1] ^ (uint64_t)root);
    return 1;
}

static uint64_t slot_key(const fe_cone_memo *m, int p)
{
    return fe_mix64(m->key[0] ^ ((uint64_t)p << 40)) | 1;   /* a map key is nonzero */
}

int fe_cone_memo_get(const fe_cone_memo *m, int p, int32_t *out)
{
    if (!m->n)
        return -1;
    const uint64_t *e = fe_u64map_get(&m->index, slot_key(m, p));
    if (!e || m->entries[*e - 1].key1 != m->key[1])
        return -1;
    const entry *x = &m->entries[*e - 1];
    for (int32_t i = 0; i < x->n; i++)
        out[i] = m->cone[m->pos[x->off + i]];
    return x->n;
}

/* The position of node u in the current cone, or -1. */
static int32_t position(const fe_cone_memo *m, int32_t u)
{
    int32_t lo = 0, hi = m->n - 1;
    while (lo <= hi) {
        int32_t mid = (lo + hi) / 2;
        if (m->cone[mid] == u)
            return mid;
        if (m->cone[mid] < u)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int fe_cone_memo_put(fe_cone_memo *m, int p, const int32_t *nodes, int n)
{
    if (!m->n || n < 0 || n > m->n)
        return 1;
    uint64_t k = slot_key(m, p);
    const uint64_t *e = fe_u64map_get(&m->index, k);
    if (e)
        return 1;   /* held by another signature sharing the first word: keep it */
    int32_t *pos = fe_run_grow(m->pos, &m->poscap, m->npos + n, sizeof *pos, 64);
    if (!pos && n > 0)
        return -1;
    m->pos = pos;
    for (int i = 0; i < n; i++)
        if ((pos[m->npos + i] = position(m, nodes[i])) < 0)
            return 1;
    entry *en = fe_run_grow(m->entries, &m->cap, m->nentries + 1, sizeof *en, 64);
    if (!en)
        return -1;
    m->entries = en;
    if (fe_u64map_put(&m->index, k, (uint64_t)m->nentries + 1) < 0)
        return -1;
    en[m->nentries++] = (entry){m->key[1], (int32_t)m->npos, n};
    m->npos += n;
    return 0;
}
