/* groupsig.c: structural signatures of groups (see groupsig.h).
 *
 * A node's own part of the signature (op, attributes, cost figures, the
 * dtypes and shapes of its outputs) is hashed once, when a signature
 * first needs it. A group's signature then walks its members in order:
 * the node's hash, its part, where each input comes from (the output k of
 * the member at position i, or the j-th distinct external input, described
 * by kind, dtype, shape and producer op the first time it appears), and
 * whether each output escapes the group. Positions and external inputs are
 * found with visit stamps, so a signature costs O(members + their edges). */
#include <stdlib.h>
#include <string.h>

#include "groupsig.h"
#include "u64map.h"

struct fe_groupsig {
    const fe_graph *g;
    uint64_t (*own)[2];       /* node -> its own hash, valid where has_own */
    uint8_t *has_own;
    int32_t *slot, *nstamp;   /* node -> position in the group, valid at stamp */
    int32_t *ext, *tstamp;    /* tensor -> external input number, valid at stamp */
    int32_t stamp;
};

/* Two independent streams: a collision must happen in both. */
static void mix(uint64_t h[2], uint64_t v)
{
    h[0] = fe_mix64(h[0] ^ v);
    h[1] = fe_mix64(h[1] + v * 0xD6E8FEB86659FD93ull + 0x632BE59BD9B4E019ull);
}

static void mix_bytes(uint64_t h[2], const char *s, size_t len)
{
    uint64_t w;
    mix(h, len);
    for (; len >= 8; s += 8, len -= 8) {
        memcpy(&w, s, 8);
        mix(h, w);
    }
    w = 0;
    memcpy(&w, s, len);
    mix(h, w);
}

static void mix_tensor(uint64_t h[2], const fe_graph *g, const fe_tensor *t)
{
    const int64_t *d = fe_tensor_shape(g, t);
    mix(h, (uint64_t)t->dtype << 16 | (uint64_t)t->kind << 8 | t->rank);
    for (int i = 0; i < t->rank; i++)
        mix(h, (uint64_t)d[i]);
}

static void mix_attr(uint64_t h[2], const fe_graph *g, const fe_attr *a)
{
    mix(h, (uint64_t)a->key << 8 | (uint64_t)a->type);   /* strings are interned per graph */
    switch (a->type) {
    case FE_ATTR_NULL: break;
    case FE_ATTR_BOOL:
    case FE_ATTR_INT: mix(h, (uint64_t)a->v.i); break;
    case FE_ATTR_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &a->v.f, sizeof bits);
        mix(h, bits);
        break;
    }
    case FE_ATTR_STR: mix(h, (uint64_t)a->v.s); break;
    case FE_ATTR_INTS:
        mix(h, (uint64_t)a->n);
        for (int i = 0; i < a->n; i++)
            mix(h, (uint64_t)fe_graph_resolve(g, g->ints[a->v.off + i]));
        break;
    case FE_ATTR_JSON: mix_bytes(h, g->blob + a->v.off, (size_t)a->n); break;
    }
}

static const uint64_t *own(fe_groupsig *s, int32_t v)
{
    if (!s->has_own[v]) {
        const fe_graph *g = s->g;
        const fe_node *n = fe_graph_node(g, v);
        uint64_t h[2] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull};
        mix(h, (uint64_t)n->op << 32 | (uint64_t)n->pattern << 16 | (uint64_t)n->live);
        mix(h, (uint64_t)n->nin << 16 | n->nout);
        mix(h, (uint64_t)n->flops);
        mix(h, (uint64_t)n->bytes_read);
        mix(h, (uint64_t)n->bytes_written);
        for (int i = 0; i < n->nattr; i++)
            mix_attr(h, g, &g->attrs[n->attr_off + i]);
        for (int k = 0; k < n->nout; k++)
            mix_tensor(h, g, fe_graph_tensor(g, fe_node_output(g, n, k)));
        s->own[v][0] = h[0];
        s->own[v][1] = h[1];
        s->has_own[v] = 1;
    }
    return s->own[v];
}

fe_groupsig *fe_groupsig_new(const fe_graph *g, fe_error *err)
{
    fe_groupsig *s = fe_calloc(1, sizeof *s, err);
    if (!s)
        return NULL;
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u, t = g->ntensors > 0 ? (size_t)g->ntensors : 1u;
    s->g = g;
    s->own = malloc(n * sizeof *s->own);
    s->has_own = calloc(n, 1);
    s->slot = malloc(n * sizeof *s->slot);
    s->nstamp = calloc(n, sizeof *s->nstamp);
    s->ext = malloc(t * sizeof *s->ext);
    s->tstamp = calloc(t, sizeof *s->tstamp);
    if (!s->own || !s->has_own || !s->slot || !s->nstamp || !s->ext || !s->tstamp) {
        fe_groupsig_free(s);
        fe_error_set(err, FE_ENOMEM, "out of memory for group signatures");
        return NULL;
    }
    return s;
}

void fe_groupsig_free(fe_groupsig *s)
{
    if (!s)
        return;
    free(s->own);
    free(s->has_own);
    free(s->slot);
    free(s->nstamp);
    free(s->ext);
    free(s->tstamp);
    free(s);
}

/* A fresh stamp; the arrays are cleared when the counter would wrap. */
static int32_t next_stamp(fe_groupsig *s)
{
    if (s->stamp == INT32_MAX) {
        memset(s->nstamp, 0, (size_t)(s->g->nnodes > 0 ? s->g->nnodes : 1) * sizeof *s->nstamp);
        memset(s->tstamp, 0, (size_t)(s->g->ntensors > 0 ? s->g->ntensors : 1) * sizeof *s->tstamp);
        s->stamp = 0;
    }
    return ++s->stamp;
}

static int member_at(const fe_groupsig *s, int32_t v, int32_t stamp)
{
    return v >= 0 && s->nstamp[v] == stamp ? s->slot[v] : -1;
}

/* Part p's rank among the parts, by first member. */
static int32_t part_rank(const int32_t *part_len, const int32_t *part_nodes, int nparts, int p)
{
    int32_t rank = 0, at = 0;
    for (int q = 0; q < p; q++)
        at += part_len[q];
    for (int q = 0, at2 = 0; q < nparts; at2 += part_len[q], q++)
        rank += part_nodes[at2] < part_nodes[at];
    return rank;
}

uint64_t fe_groupsig_part_order(const int32_t *part_len, const int32_t *part_nodes, int nparts)
{
    uint64_t order = 0;
    for (int p = 0; nparts > 1 && p < nparts; p++)
        order = fe_mix64(order + (uint64_t)part_rank(part_len, part_nodes, nparts, p) + 1);
    return order;
}

void fe_groupsig_of(fe_groupsig *s, uint64_t salt, const int32_t *nodes, int n,
                    const int32_t *part_len, const int32_t *part_nodes, int nparts, uint64_t out[2])
{
    const fe_graph *g = s->g;
    int32_t stamp = next_stamp(s), next_ext = 0;
    uint64_t h[2] = {salt, ~salt};
    mix(h, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        s->nstamp[nodes[i]] = stamp;
        s->slot[nodes[i]] = i;
    }
    /* Each part by its rank among the parts (by first member, as the
     * driver may hand them in any order), length and members' positions;
     * the parts' hashes are summed, so their order does not matter. */
    mix(h, (uint64_t)(nparts > 1 ? nparts : 1));
    for (int p = 0, at = 0; nparts > 1 && p < nparts; at += part_len[p], p++) {
        uint64_t ph[2] = {(uint64_t)part_rank(part_len, part_nodes, nparts, p),
                          (uint64_t)part_len[p]};
        for (int k = 0; k < part_len[p]; k++)
            mix(ph, (uint64_t)s->slot[part_nodes[at + k]]);
        h[0] += fe_mix64(ph[0]);
        h[1] += fe_mix64(ph[1] ^ 0xA0761D6478BD642Full);
    }
    for (int i = 0; i < n; i++) {
        const fe_node *nd = fe_graph_node(g, nodes[i]);
        const uint64_t *o = own(s, nodes[i]);
        mix(h, o[0]);
        mix(h, o[1]);
        for (int q = 0; q < nd->nin; q++) {
            int32_t t = fe_node_input(g, nd, q);
            const fe_tensor *ts = fe_graph_tensor(g, t);
            int at = member_at(s, ts->producer, stamp);
            if (at >= 0) {
                const fe_node *p = fe_graph_node(g, ts->producer);
                int k = 0;
                while (k < p->nout && fe_node_output(g, p, k) != t)
                    k++;
                mix(h, (uint64_t)1 << 62 | (uint64_t)at << 16 | (uint64_t)k);
            } else if (s->tstamp[t] == stamp) {
                mix(h, (uint64_t)2 << 62 | (uint64_t)s->ext[t]);
            } else {
                s->tstamp[t] = stamp;
                s->ext[t] = next_ext++;
                mix(h, (uint64_t)3 << 62 | (uint64_t)s->ext[t]);
                mix(h, ts->producer >= 0 ? fe_graph_node(g, ts->producer)->op + 1u : 0u);
                mix(h, ts->flags);
                mix_tensor(h, g, ts);
            }
        }
        for (int k = 0; k < nd->nout; k++) {
            const fe_tensor *ts = fe_graph_tensor(g, fe_node_output(g, nd, k));
            int escapes = (ts->flags & FE_T_OUTPUT) != 0;
            /* More consumers than members: one of them is outside. */
            if (ts->ncons > n)
                escapes = 1;
            for (int32_t c = 0; c < ts->ncons && !escapes; c++)
                escapes = member_at(s, fe_tensor_consumer(g, ts, c), stamp) < 0;
            mix(h, (uint64_t)escapes << 8 | (uint64_t)ts->ncons);
        }
    }
    out[0] = h[0];
    out[1] = h[1];
}
