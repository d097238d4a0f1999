/* driver_greedy.c: the greedy driver, Inductor's fuse_nodes loop (seed 003).
 *
 * Note on the loop. Each round:
 *
 *   1. candidates: pairs of groups that share a buffer (one writes it and
 *      the other reads it, or both read it), within a window of +-window
 *      positions in the topological order of groups (Inductor checks 64
 *      neighbours in its node list: O(64 n), not O(n^2));
 *   2. gates: the engine's legality check (partition.c); illegal pairs are
 *      dropped silently, as can_fuse's failures are in Inductor;
 *   3. score: the policy's score(self, a, b, ctx), or the bytes the pair
 *      shares (Inductor's "memory saved"); sort by score, highest first,
 *      ties by position so results are deterministic;
 *   4. try in order: a pair whose group was already fused this round is
 *      stale and skipped (fusing (A, B) first invalidates (B, C)); the
 *      rest are re-checked for legality, then decide(self, group, ctx)
 *      is asked; true merges.
 *
 * decide judges a group, so a pair it refused is not asked again (nor
 * scored) in later rounds while neither of its groups has changed: the
 * same question would get the same answer. Without this, most of a big
 * model's decide calls re-ask the pairs of round 1 once per round. A
 * policy whose verdicts depend on more than the group (ctx.round, state
 * it keeps) sets reask = true.
 *
 * Rounds repeat (at most max_rounds, 10 by default) until the number of
 * groups stops shrinking. window and max_rounds are read from the policy's
 * params when it has them.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "drivers.h"

typedef struct cand {
    int32_t a, b;
    int32_t lo, hi;    /* positions, for deterministic ties */
    double score;
} cand;

/* Pairs of group ids (a < b) in open addressing: key (a+1) << 32 | (b+1),
 * 0 for an empty slot, with an int32 value per pair. */
typedef struct pairmap {
    uint64_t *keys;
    int32_t *vals;
    uint64_t cap, n;
} pairmap;

static uint64_t pair_key(int32_t a, int32_t b)
{
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    return ((uint64_t)(uint32_t)(a + 1) << 32) | (uint32_t)(b + 1);
}

static uint64_t pair_home(uint64_t key, uint64_t cap)
{
    return (key * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

/* The slot of key, or the empty slot where it would go. */
static uint64_t pair_slot(const pairmap *m, uint64_t key)
{
    uint64_t h = pair_home(key, m->cap);
    while (m->keys[h] && m->keys[h] != key)
        h = (h + 1) & (m->cap - 1);
    return h;
}

/* The value of (a, b), or -1 when absent. */
static int32_t pair_get(const pairmap *m, int32_t a, int32_t b)
{
    if (!m->cap)
        return -1;
    uint64_t h = pair_slot(m, pair_key(a, b));
    return m->keys[h] ? m->vals[h] : -1;
}

/* Sets (a, b) to v; 1 if the pair is new, 0 if it was there, -1 on
 * out-of-memory. */
static int pair_put(pairmap *m, int32_t a, int32_t b, int32_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        uint64_t cap = m->cap ? m->cap * 2 : 1024;
        uint64_t *keys = calloc(cap, sizeof *keys);
        int32_t *vals = malloc(cap * sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return -1;
        }
        pairmap grown = {keys, vals, cap, m->n};
        for (uint64_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            uint64_t h = pair_slot(&grown, m->keys[i]);
            keys[h] = m->keys[i];
            vals[h] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        *m = grown;
    }
    uint64_t key = pair_key(a, b), h = pair_slot(m, key);
    int fresh = !m->keys[h];
    if (fresh) {
        m->keys[h] = key;
        m->n++;
    }
    m->vals[h] = v;
    return fresh;
}

static void pair_clear(pairmap *m)
{
    if (m->keys)
        memset(m->keys, 0, m->cap * sizeof *m->keys);
    m->n = 0;
}

static void pair_free(pairmap *m)
{
    free(m->keys);
    free(m->vals);
}

/* A round's candidates: each pair once, in the order found. */
typedef struct pairset {
    pairmap seen;
    cand *list;
    int64_t n, listcap;
} pairset;

static int pair_add(pairset *s, int32_t a, int32_t b)
{
    int fresh = pair_put(&s->seen, a, b, 0);
    if (fresh <= 0)
        return fresh;
    cand *l = fe_run_grow(s->list, &s->listcap, s->n + 1, sizeof *l, 1024);
    if (!l)
        return -1;
    s->list = l;
    s->list[s->n++] = (cand){.a = a < b ? a : b, .b = a < b ? b : a};
    return 0;
}

static int by_score(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->hi > b->hi) - (a->hi < b->hi);
}

static int64_t param_int(fe_run *r, const char *key, int64_t dflt)
{
    lua_State *L = r->L;
    int64_t v = dflt;
    if (fe_run_rawfield(L, r->ptab, "params") == LUA_TTABLE &&
        fe_run_rawfield(L, -1, key) == LUA_TNUMBER)
        v = (int64_t)lua_tonumber(L, -1);
    lua_settop(L, r->ctx);
    return v;
}

/* Positions of the groups touching a tensor, sorted. */
static int cmp_pos(const void *x, const void *y, void *ctx)
{
    const int32_t *pos = ctx;
    int32_t a = pos[*(const int32_t *)x], b = pos[*(const int32_t *)y];
    return (a > b) - (a < b);
}

/* Candidate pairs for this round into s. A tensor's groups are made
 * distinct with a visit stamp per tensor (not by comparing each with the
 * ones before: rope tables and masks feed every layer, so that was
 * quadratic in the model's depth). */
static int candidates(fe_run *r, pairset *s, int64_t window, int32_t *buf)
{
    const fe_graph *g = r->g;
    fe_part *p = r->part;
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *ts = fe_graph_tensor(g, t);
        int32_t n = 0, seen = fe_part_stamps(p);
        if (ts->producer >= 0) {
            buf[n++] = p->gid[ts->producer];
            p->mark[buf[0]] = seen;
        }
        for (int32_t c = 0; c < ts->ncons; c++) {
            int32_t gid = p->gid[fe_tensor_consumer(g, ts, c)];
            if (p->mark[gid] != seen) {
                p->mark[gid] = seen;
                buf[n++] = gid;
            }
        }
        if (n < 2)
            continue;
        qsort_r(buf, (size_t)n, sizeof *buf, cmp_pos, p->pos);
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = i + 1; j < n && p->pos[buf[j]] - p->pos[buf[i]] <= window; j++)
                if (pair_add(s, buf[i], buf[j]) != 0)
                    return FE_ENOMEM;
    }
    return FE_OK;
}

int fe_drive_greedy(fe_run *r)
{
    const fe_graph *g = r->g;
    fe_part *p = r->part;
    lua_State *L = r->L;
    int64_t window = param_int(r, "window", 64);
    int64_t rounds = param_int(r, "max_rounds", 10);
    pairset s = {0};
    pairmap refused = {0};   /* pair -> the round decide refused it in */
    int reask = fe_run_rawfield(L, r->ptab, "reask") == LUA_TBOOLEAN && lua_toboolean(L, -1);
    lua_settop(L, r->ctx);
    int32_t *touched = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, sizeof *touched);
    int32_t *buf = malloc(((size_t)g->nnodes + 1) * sizeof *buf);
    int rc = FE_OK;
    char why[512];

    if (!touched || !buf) {
        rc = fe_error_set(r->err, FE_ENOMEM, "out of memory in the greedy driver");
        goto out;
    }
    for (int32_t round = 1; round <= rounds && rc == FE_OK && !fe_run_over(r); round++) {
        int32_t before = p->ngroups, merged = 0;
        lua_pushinteger(L, round);
        lua_setfield(L, r->ctx, "round");
        r->stats.rounds = round;

        pair_clear(&s.seen);
        s.n = 0;
        if ((rc = candidates(r, &s, window, buf)) != FE_OK) {
            fe_error_set(r->err, FE_ENOMEM, "out of memory in the greedy driver");
            break;
        }
        /* Gates, then scores. */
        int64_t keep = 0;
        for (int64_t i = 0; i < s.n; i++) {
            cand *c = &s.list[i];
            /* A pair refused in an earlier round whose groups have not
             * changed since is the same question: not asked again. */
            int32_t when = reask ? -1 : pair_get(&refused, c->a, c->b);
            if (when > 0 && touched[c->a] < when && touched[c->b] < when) {
                r->stats.decide_reused++;
                continue;
            }
            int32_t gids[2] = {c->a, c->b};
            if (!fe_part_can_merge(p, gids, 2, why, sizeof why))
                continue;
            if (fe_run_score(r, c->a, c->b, &c->score) != 0 || fe_run_over(r)) {
                rc = r->status;
                break;
            }
            c->lo = p->pos[c->a] < p->pos[c->b] ? p->pos[c->a] : p->pos[c->b];
            c->hi = p->pos[c->a] < p->pos[c->b] ? p->pos[c->b] : p->pos[c->a];
            s.list[keep++] = *c;
        }
        if (rc != FE_OK || fe_run_over(r))
            break;
        if (keep > 1)
            qsort(s.list, (size_t)keep, sizeof *s.list, by_score);

        for (int64_t i = 0; i < keep; i++) {
            cand *c = &s.list[i];
            if (touched[c->a] == round || touched[c->b] == round)
                continue;   /* stale: a group of this pair was fused already */
            int32_t gids[2] = {c->a, c->b};
            if (!fe_part_can_merge(p, gids, 2, why, sizeof why))
                continue;
            r->pending = keep - i;
            int v = fe_run_decide(r, gids, 2);
            if (v < 0 || fe_run_over(r)) {
                rc = r->status;
                break;
            }
            if (v == 1) {
                int32_t m = fe_part_merge(p, gids, 2);
                touched[m] = touched[c->a] = touched[c->b] = round;
                merged++;
            } else if (!reask && pair_put(&refused, c->a, c->b, round) < 0) {
                rc = fe_error_set(r->err, FE_ENOMEM, "out of memory in the greedy driver");
                break;
            }
        }
        if (merged == 0 || p->ngroups >= before)
            break;
    }
out:
    r->pending = 0;
    lua_settop(L, r->ctx);
    pair_free(&s.seen);
    pair_free(&refused);
    free(s.list);
    free(touched);
    free(buf);
    return rc != FE_OK ? rc : r->status;
}
