/* driver_greedy.c: the greedy driver, Inductor's fuse_nodes loop (seed 003).
 *
 * Note on the loop. Each round:
 *
 *   1. candidates: pairs of groups that share a buffer (one writes it and
 *      the other reads it, or both read it), within a window of +-window
 *      positions in the topological order of groups (Inductor checks 64
 *      neighbours in its node list: O(64 n), not O(n^2));
 *   2. gates: the engine's legality check (partition.c); illegal pairs are
 *      dropped silently, as can_fuse's failures are in Inductor (before
 *      scoring when a score hook would see them, else only at step 4);
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
 * A node whose op is in the policy's solo_ops (Inductor's extern kernels:
 * nothing fuses into or out of a matmul) is in no candidate at all: it is
 * logged once as staying alone, instead of being scored and refused in
 * every pair its tensors make.
 *
 * Rounds repeat (at most max_rounds, 10 by default) until the number of
 * groups stops shrinking. window and max_rounds are read from the policy's
 * params when it has them; their defaults are drivers.c's FE_GREEDY_PARAMS.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "drivers.h"
#include "ops.h"
#include "radix.h"

typedef struct cand {
    int32_t a, b;
    int32_t lo, hi;    /* positions, for deterministic ties */
    double score;
} cand;

/* A pair of group ids as a map key: (a+1) << 32 | (b+1) with a < b, never 0. */
static uint64_t pair_key(int32_t a, int32_t b)
{
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    return ((uint64_t)(uint32_t)(a + 1) << 32) | (uint32_t)(b + 1);
}

/* A round's candidates: the pairs' keys as found (a pair sharing several
 * tensors is found once per tensor), then each pair once in key order.
 * Sorting the keys costs a few passes over memory; a hash set of a
 * million pairs cost a cache miss per pair (radix.h). */
typedef struct pairset {
    fe_kv *keys, *tmp;
    int64_t nkeys, keycap, tmpcap;
    cand *list;
    int64_t n, listcap;
} pairset;

/* Append {key, val} to the array *items of *n (room *cap). 0, or -1 out of
 * memory. */
static int kv_push(fe_kv **items, int64_t *n, int64_t *cap, uint64_t key, uint64_t val)
{
    fe_kv *k = fe_run_grow(*items, cap, *n + 1, sizeof *k, 4096);
    if (!k)
        return -1;
    *items = k;
    k[(*n)++] = (fe_kv){key, val};
    return 0;
}

static int pair_add(pairset *s, int32_t a, int32_t b)
{
    return kv_push(&s->keys, &s->nkeys, &s->keycap, pair_key(a, b), 0);
}

/* s->list: the found pairs, each once, by key. 0, or -1 out of memory. */
static int pairs_unique(pairset *s)
{
    s->n = 0;
    if (s->nkeys == 0)
        return 0;
    fe_kv *t = fe_run_grow(s->tmp, &s->tmpcap, s->nkeys, sizeof *t, 4096);
    cand *l = t ? fe_run_grow(s->list, &s->listcap, s->nkeys, sizeof *l, 1024) : NULL;
    if (!t || !l)
        return -1;
    s->tmp = t;
    s->list = l;
    fe_radix_sort_kv(s->keys, s->tmp, (size_t)s->nkeys);
    for (int64_t i = 0; i < s->nkeys; i++)
        if (i == 0 || s->keys[i].key != s->keys[i - 1].key)
            s->list[s->n++] = (cand){.a = (int32_t)(s->keys[i].key >> 32) - 1,
                                     .b = (int32_t)(uint32_t)s->keys[i].key - 1};
    return 0;
}

/* The pairs decide refused, with the round it did: a sorted array of the
 * rounds before (read in step with the candidates, which come by key) and
 * this round's, merged in when it ends. */
typedef struct refusals {
    fe_kv *old, *fresh, *tmp;
    int64_t nold, nfresh, oldcap, freshcap, tmpcap;
} refusals;

/* Merge this round's refusals into the sorted ones (a pair refused again
 * keeps its latest round). 0, or -1 out of memory. */
static int refusals_merge(refusals *f)
{
    if (f->nfresh == 0)
        return 0;
    fe_kv *t = fe_run_grow(f->tmp, &f->tmpcap, f->nfresh + f->nold, sizeof *t, 1024);
    if (!t)
        return -1;
    f->tmp = t;
    fe_radix_sort_kv(f->fresh, f->tmp, (size_t)f->nfresh);
    int64_t i = 0, j = 0, n = 0;
    while (i < f->nold || j < f->nfresh) {
        if (j == f->nfresh || (i < f->nold && f->old[i].key < f->fresh[j].key))
            t[n++] = f->old[i++];
        else {
            if (i < f->nold && f->old[i].key == f->fresh[j].key)
                i++;
            t[n++] = f->fresh[j++];
        }
    }
    /* The merged list becomes old; old's room becomes scratch. */
    fe_kv *o = f->old;
    int64_t ocap = f->oldcap;
    f->old = t;
    f->oldcap = f->tmpcap;
    f->nold = n;
    f->tmp = o;
    f->tmpcap = ocap;
    f->nfresh = 0;
    return 0;
}

/* The round pair key was refused in (0: never), for keys asked in
 * ascending order (*at is where the last one was looked up). */
static int32_t refused_in(const refusals *f, uint64_t key, int64_t *at)
{
    while (*at < f->nold && f->old[*at].key < key)
        (*at)++;
    return *at < f->nold && f->old[*at].key == key ? (int32_t)f->old[*at].val : 0;
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

static int64_t param_int(fe_run *r, const fe_driver_param *p)
{
    lua_State *L = r->L;
    int64_t v = p->value;
    if (fe_run_rawfield(L, r->ptab, "params") == LUA_TTABLE &&
        fe_run_rawfield(L, -1, p->name) == LUA_TNUMBER)
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

/* Mark the groups of nodes whose op is in the policy's solo_ops (a list of
 * op names, checked by fe.policy; checked again here, as a script can
 * change the table) in solo[gid] and log each such node as alone. 0, or
 * -1 after an error (r->err set). */
static int mark_solo(fe_run *r, uint8_t *solo)
{
    lua_State *L = r->L;
    uint8_t op_solo[FE_NOPS] = {0};
    int any = 0;
    if (fe_run_rawfield(L, r->ptab, "solo_ops") == LUA_TTABLE) {
        for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
            int op = lua_type(L, -1) == LUA_TSTRING ? fe_op_find(lua_tostring(L, -1)) : -1;
            if (op < 0) {
                fe_error_set(r->err, FE_EINPUT, "policy '%s': solo_ops[%lld] is not an op name "
                             "(see fuseeng ops)", r->env.policy, (long long)i);
                lua_settop(L, r->ctx);
                return -1;
            }
            op_solo[op] = 1;
            any = 1;
            lua_pop(L, 1);
        }
    }
    lua_settop(L, r->ctx);
    if (!any)
        return 0;
    const fe_graph *g = r->g;
    char why[160];
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        if (!op_solo[n->op])
            continue;
        solo[r->part->gid[v]] = 1;
        snprintf(why, sizeof why, "alone: %s is one of the policy's solo_ops", fe_node_op_name(n));
        fe_run_alone(r, v, why);
    }
    return r->status == FE_OK ? 0 : -1;
}

/* Candidate pairs for this round into s. A tensor's groups are made
 * distinct with a visit stamp per tensor (not by comparing each with the
 * ones before: rope tables and masks feed every layer, so that was
 * quadratic in the model's depth). */
static int candidates(fe_run *r, pairset *s, int64_t window, int32_t *buf, const uint8_t *solo)
{
    const fe_graph *g = r->g;
    fe_part *p = r->part;
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *ts = fe_graph_tensor(g, t);
        int32_t n = 0, seen = fe_part_stamps(p);
        if (ts->producer >= 0 && !solo[p->gid[ts->producer]]) {
            buf[n++] = p->gid[ts->producer];
            p->mark[buf[0]] = seen;
        }
        for (int32_t c = 0; c < ts->ncons; c++) {
            int32_t gid = p->gid[fe_tensor_consumer(g, ts, c)];
            if (p->mark[gid] != seen && !solo[gid]) {
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

/* The positions of groups a and b, the lower first. */
static void span(const fe_part *p, int32_t a, int32_t b, int32_t *lo, int32_t *hi)
{
    *lo = p->pos[a] < p->pos[b] ? p->pos[a] : p->pos[b];
    *hi = p->pos[a] < p->pos[b] ? p->pos[b] : p->pos[a];
}

/* Was a position between groups a and b (inclusive) re-laid by a merge of
 * this round? A pair that was legal when scored can only have become
 * illegal through a group made this round that now lies on a path from one
 * to the other, and such a group sits between them in the order of groups
 * at a position its merge re-laid (a merge re-lays the span of its parts,
 * and moves nothing outside it). So when nothing between them was re-laid,
 * the check made before scoring still holds. */
static int relaid_between(const fe_part *p, const int32_t *relaid, int32_t a, int32_t b,
                          int32_t round)
{
    int32_t lo, hi;
    span(p, a, b, &lo, &hi);
    for (int32_t at = lo; at <= hi; at++)
        if (relaid[at] == round)
            return 1;
    return 0;
}

int fe_drive_greedy(fe_run *r)
{
    const fe_graph *g = r->g;
    fe_part *p = r->part;
    lua_State *L = r->L;
    int64_t window = param_int(r, &FE_GREEDY_PARAMS[FE_GREEDY_WINDOW]);
    int64_t rounds = param_int(r, &FE_GREEDY_PARAMS[FE_GREEDY_MAX_ROUNDS]);
    pairset s = {0};
    refusals refused = {0};
    int reask = fe_run_rawfield(L, r->ptab, "reask") == LUA_TBOOLEAN && lua_toboolean(L, -1);
    lua_settop(L, r->ctx);
    int32_t *touched = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, sizeof *touched);
    int32_t *relaid = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, sizeof *relaid);   /* by position */
    int32_t *buf = malloc(((size_t)g->nnodes + 1) * sizeof *buf);
    uint8_t *solo = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, 1);   /* by group id */
    int rc = FE_OK;
    if (!touched || !relaid || !buf || !solo) {
        rc = fe_error_set(r->err, FE_ENOMEM, "out of memory in the greedy driver");
        goto out;
    }
    if (mark_solo(r, solo) != 0) {
        rc = r->status != FE_OK ? r->status : FE_EINPUT;
        goto out;
    }
    for (int32_t round = 1; round <= rounds && rc == FE_OK && !fe_run_over(r); round++) {
        int32_t before = p->ngroups, merged = 0;
        lua_pushinteger(L, round);
        lua_setfield(L, r->ctx, "round");
        r->stats.rounds = round;

        s.nkeys = 0;
        if ((rc = candidates(r, &s, window, buf, solo)) != FE_OK || pairs_unique(&s) != 0) {
            rc = fe_error_set(r->err, FE_ENOMEM, "out of memory in the greedy driver");
            break;
        }
        /* Gates, then scores. */
        int64_t keep = 0, ri = 0;
        for (int64_t i = 0; i < s.n; i++) {
            cand *c = &s.list[i];
            /* A pair refused in an earlier round whose groups have not
             * changed since is the same question: not asked again. */
            int32_t when = reask ? 0 : refused_in(&refused, pair_key(c->a, c->b), &ri);
            if (when && touched[c->a] < when && touched[c->b] < when) {
                r->stats.decide_reused++;
                continue;
            }
            /* Without a score hook nothing sees a pair before decide, and
             * the try below checks legality anyway: an illegal pair stays
             * illegal as groups merge (paths only join), so checking it
             * here too would only repeat the search. */
            int32_t gids[2] = {c->a, c->b};
            if (r->score && !fe_part_can_merge(p, gids, 2, NULL, 0))
                continue;
            if (fe_run_score(r, c->a, c->b, &c->score) != 0 || fe_run_over(r)) {
                rc = r->status;
                break;
            }
            span(p, c->a, c->b, &c->lo, &c->hi);
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
            if ((!r->score || relaid_between(p, relaid, c->a, c->b, round)) &&
                !fe_part_can_merge(p, gids, 2, NULL, 0))
                continue;
            r->pending = keep - i;
            int v = fe_run_decide(r, gids, 2);
            if (v < 0 || fe_run_over(r)) {
                rc = r->status;
                break;
            }
            if (v == 1) {
                int32_t lo, hi;
                span(p, c->a, c->b, &lo, &hi);
                for (int32_t at = lo; at <= hi; at++)
                    relaid[at] = round;   /* fe_part_merge re-lays just this span */
                int32_t m = fe_part_merge(p, gids, 2);
                touched[m] = touched[c->a] = touched[c->b] = round;
                merged++;
            } else if (!reask && kv_push(&refused.fresh, &refused.nfresh, &refused.freshcap,
                                         pair_key(c->a, c->b), (uint64_t)round) != 0) {
                rc = fe_error_set(r->err, FE_ENOMEM, "out of memory in the greedy driver");
                break;
            }
        }
        if (rc == FE_OK && refusals_merge(&refused) != 0)
            rc = fe_error_set(r->err, FE_ENOMEM, "out of memory in the greedy driver");
        if (rc != FE_OK || merged == 0 || p->ngroups >= before)
            break;
    }
out:
    r->pending = 0;
    lua_settop(L, r->ctx);
    free(s.keys);
    free(s.tmp);
    free(refused.old);
    free(refused.fresh);
    free(refused.tmp);
    free(s.list);
    free(touched);
    free(relaid);
    free(buf);
    free(solo);
    return rc != FE_OK ? rc : r->status;
}
