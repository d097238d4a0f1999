/* driver_priority.c: the priority driver, XLA's GPU priority fusion
 * (openxla/xla, xla/service/gpu/transforms/priority_fusion.cc).
 *
 * Note on the loop. Producers wait in a max-heap keyed by their priority,
 * the time saved by fusing the producer into all its consumers:
 *
 *     P ---> C1      apart:  t(P) + t(C1) + t(C2)
 *       \--> C2      fused:  t(P+C1+C2)           price = "merge" (default)
 *                         or t(P+C1) + t(P+C2)    price = "duplicate" (XLA's:
 *                                                 P recomputed in each consumer)
 *     priority = apart - fused (seconds, the simulator's times)
 *
 *   1. every group with consumers is priced: by the policy's
 *      priority(self, producer, consumers, ctx) if it has one and it
 *      returns a number, else as above. A producer is not queued when its
 *      priority is below min_priority (0: fusing must not lose time), when
 *      it has more than max_consumers consumer groups, or when the fused
 *      group would hold more than max_nodes nodes ("the fusion would be
 *      too large");
 *   2. pop the best (ties: the later group id first, as XLA's unique ids);
 *      an entry whose version stamp is old is skipped: its group was
 *      merged or re-priced since it was pushed (lazy invalidation);
 *   3. the producer and all its consumer groups become one group if the
 *      engine's legality check allows it (else the rejection is logged)
 *      and decide(self, group, ctx) agrees: group.parts[1] is the
 *      producer, the other parts its consumers, ctx.priority the price;
 *   4. the new group and the groups producing its inputs are re-priced:
 *      a priority depends only on a group and its consumers, and only
 *      their consumers changed. A producer popped and refused waits until
 *      a neighbour's merge re-prices it, as XLA re-runs CanFuse then.
 *
 * Plans are partitions (every node in one group), so a producer cannot
 * be duplicated into several consumers as XLA does: it joins them all in
 * one group (one kernel with several outputs). price = "duplicate" prices
 * the candidate as XLA would, so that the producers chosen are XLA's.
 *
 * Fixed groups. A policy's fixed(self, graph, ctx) hook returns groups in
 * the plan driver's form (lists of nodes, each with an optional reason):
 * fusions made before the loop, as passes before XLA's priority fusion
 * make them (its Triton GEMM fusions), which the loop never reopens. Each
 * is checked and merged first (a rejected one is logged, and its nodes
 * stay free); then it is sealed: never a producer, and a producer with a
 * sealed consumer joins none of them (with multi_output, it may join its
 * other consumers one by one). A fixed group of one node only seals it.
 *
 * priority_ops. The priority hook runs for every producer re-priced, which
 * made it most of a large model's planning time; a policy that prices
 * only some producers itself lists their ops (priority_ops = {"matmul"}),
 * and the hook is asked only about producers holding one of them.
 *
 * Multi-output fusion (multi_output = true). XLA recomputes a producer in
 * every consumer; where a plan cannot hold it in all of them (the group
 * of all would not be convex, or decide refused it) XLA's later
 * multi-output pass fuses it into one consumer and keeps its value as a
 * second output of that kernel. With the param, every re-priced producer
 * with two or more consumers also queues one pair per consumer, priced as
 * the merge of the two (the policy's priority hook sees that one
 * consumer); pairs are popped only when no all-consumer producer is left,
 * and decide sees ctx.multi_output = true. A merge re-prices as above, so
 * all-consumer fusions the pair made possible come first again.
 *
 * Cost. Pricing a producer reads its group, its consumer groups and their
 * members, at most max_nodes nodes; a merge re-prices the new group and
 * its producers and pushes one entry each (with multi_output, one more per
 * consumer). With max_nodes bounded, n nodes plan in O(n log n) heap work
 * plus the legality checks.
 *
 * Params (from the policy's params; out of range is bad input):
 * max_nodes (64), max_consumers (8), min_priority (0 s), price ("merge"),
 * multi_output (false).
 */
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "drivers.h"
#include "lua_fields.h"
#include "lua_graph.h"
#include "ops.h"
#include "sim.h"

typedef struct entry {
    double prio;
    int32_t gid;
    uint32_t ver;
    int32_t cons;        /* the one consumer of a pair entry, -1: all of them */
    uint32_t gen;        /* the consumer's merge count when it was queued */
} entry;

typedef struct heap {
    entry *e;
    int64_t n, cap;
} heap;

typedef struct pq {
    fe_run *r;
    heap all, pairs;     /* producers into all consumers; into one (multi-output) */
    uint32_t *ver;       /* group id -> version; an entry with another is stale */
    uint32_t *gen;       /* group id -> how often it was merged into */
    double *time;        /* group id -> its simulated time, NAN if unknown */
    uint32_t *seen, stamp;
    int32_t *cons;       /* consumer groups of the producer being priced */
    int32_t *buf;        /* members of a candidate, for the simulator */
    int32_t *nbrs;       /* the producers of a new group, to re-price */
    int32_t *pair;       /* the consumers of a producer queued pair by pair */
    int32_t max_nodes, max_consumers;
    double min_priority;
    int duplicate;       /* price = "duplicate" */
    int multi;           /* multi_output = true */
    uint8_t *sealed;     /* group id -> a fixed group, never merged again */
    uint8_t hook_op[FE_NOPS];   /* priority_ops; all zero: the hook prices every producer */
    int hook_some;       /* priority_ops was given */
    int hook;            /* stack slot of the priority hook, 0 if none */
} pq;

/* ---- the heap ---- */

static int better(const entry *a, const entry *b)
{
    return a->prio > b->prio || (a->prio == b->prio && a->gid > b->gid);
}

static int push(pq *q, heap *hp, entry e)
{
    entry *h = fe_run_grow(hp->e, &hp->cap, hp->n + 1, sizeof *h, 1024);
    if (!h)
        return fe_run_oom(q->r, "in the priority driver");
    hp->e = h;
    int64_t i = hp->n++;
    while (i > 0 && better(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
    return 0;
}

static entry pop(heap *hp)
{
    entry *h = hp->e, top = h[0], last = h[--hp->n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= hp->n)
            break;
        if (c + 1 < hp->n && better(&h[c + 1], &h[c]))
            c++;
        if (!better(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (hp->n > 0)
        h[i] = last;
    return top;
}

/* ---- params ---- */

/* params[key] into *out: absent keeps the default; a value that is not an
 * integer in lo..hi stops the run with a message naming it. */
static int param_int(pq *q, const char *key, int32_t lo, int32_t hi, int32_t *out)
{
    fe_run *r = q->r;
    lua_State *L = r->L;
    int rc = 0;
    if (fe_run_rawfield(L, r->ptab, "params") == LUA_TTABLE && fe_run_rawfield(L, -1, key) != LUA_TNIL) {
        lua_Integer v = 0;
        if (fe_lf_integer(L, -1, &v) && v >= lo && v <= hi) {
            *out = (int32_t)v;
        } else {
            fe_error_set(r->err, FE_EINPUT, "%s: policy '%s': params.%s must be an integer from %d "
                         "to %d, got %s (fix the policy's params or --param %s=N)", r->env.path,
                         r->env.policy, key, lo, hi, fe_sandbox_describe(L, -1), key);
            r->status = FE_EINPUT;
            rc = -1;
        }
    }
    lua_settop(L, r->ctx);
    return rc;
}

static int read_params(pq *q)
{
    fe_run *r = q->r;
    lua_State *L = r->L;
    q->max_nodes = 64;
    q->max_consumers = 8;
    q->min_priority = 0;
    if (param_int(q, "max_nodes", 1, INT32_MAX, &q->max_nodes) != 0 ||
        param_int(q, "max_consumers", 1, 1 << 20, &q->max_consumers) != 0)
        return -1;
    const char *bad = NULL;
    if (fe_run_rawfield(L, r->ptab, "params") == LUA_TTABLE) {
        int t = lua_gettop(L);
        int mt = fe_run_rawfield(L, t, "min_priority");
        if (mt == LUA_TNUMBER && !isnan(lua_tonumber(L, -1)))
            q->min_priority = lua_tonumber(L, -1);
        else if (mt != LUA_TNIL)
            bad = "min_priority must be a number of seconds (negative fuses losing producers too)";
        if (!bad) {
            lua_pop(L, 1);
            int pt = fe_run_rawfield(L, t, "price");
            const char *s = pt == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            if (s && strcmp(s, "duplicate") == 0)
                q->duplicate = 1;
            else if (pt != LUA_TNIL && !(s && strcmp(s, "merge") == 0))
                bad = "price must be \"merge\" or \"duplicate\"";
        }
        if (!bad) {
            lua_pop(L, 1);
            int bt = fe_run_rawfield(L, t, "multi_output");
            if (bt == LUA_TBOOLEAN)
                q->multi = lua_toboolean(L, -1);
            else if (bt != LUA_TNIL)
                bad = "multi_output must be true or false";
        }
    }
    if (bad) {
        fe_error_set(r->err, FE_EINPUT, "%s: policy '%s': params.%s, got %s", r->env.path,
                     r->env.policy, bad, fe_sandbox_describe(L, -1));
        r->status = FE_EINPUT;
    }
    lua_settop(L, r->ctx);
    return bad ? -1 : 0;
}

/* The policy's priority_ops (op names, checked by fe.policy; checked
 * again here, as a script can change the table) into q->hook_op. */
static int read_priority_ops(pq *q)
{
    fe_run *r = q->r;
    lua_State *L = r->L;
    if (fe_run_rawfield(L, r->ptab, "priority_ops") == LUA_TTABLE) {
        q->hook_some = 1;
        for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
            int op = lua_type(L, -1) == LUA_TSTRING ? fe_op_find(lua_tostring(L, -1)) : -1;
            if (op < 0) {
                fe_error_set(r->err, FE_EINPUT, "policy '%s': priority_ops[%lld] is not an op name "
                             "(see fuseeng ops)", r->env.policy, (long long)i);
                r->status = FE_EINPUT;
                lua_settop(L, r->ctx);
                return -1;
            }
            q->hook_op[op] = 1;
            lua_pop(L, 1);
        }
    }
    lua_settop(L, r->ctx);
    return 0;
}

/* The policy's fixed groups, merged and sealed (see the note). */
static int fix_groups(pq *q)
{
    fe_run *r = q->r;
    lua_State *L = r->L;
    if (fe_run_rawfield(L, r->ptab, "fixed") != LUA_TFUNCTION) {
        lua_settop(L, r->ctx);
        return 0;
    }
    int rc = -1;
    int32_t *made = NULL;
    int list = fe_drive_groups_hook(r, lua_gettop(L), "fixed");
    if (!list)
        goto out;
    size_t ng = lua_rawlen(L, list);
    made = malloc((ng > 0 ? ng : 1u) * sizeof *made);
    if (!made) {
        fe_run_oom(r, "in the priority driver");
        goto out;
    }
    if (fe_drive_groups(r, list, NULL, made, 0, "fixed by the policy") != FE_OK)
        goto out;
    for (size_t i = 0; i < ng; i++)
        if (made[i] >= 0)
            q->sealed[made[i]] = 1;
    rc = 0;
out:
    lua_settop(L, r->ctx);
    free(made);
    return rc;
}

/* ---- pricing ---- */

/* The distinct groups consuming outputs of group p, into q->cons; returns
 * their count, or max_consumers + 1 when there are more. */
static int consumers(pq *q, int32_t p)
{
    const fe_graph *g = q->r->g;
    const fe_part *part = q->r->part;
    if (++q->stamp == 0) {
        memset(q->seen, 0, (size_t)g->nnodes * sizeof *q->seen);
        q->stamp = 1;
    }
    q->seen[p] = q->stamp;
    int k = 0;
    for (int32_t v = part->head[p]; v >= 0; v = part->next[v]) {
        const fe_node *nd = fe_graph_node(g, v);
        for (int o = 0; o < nd->nout; o++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, nd, o));
            for (int32_t c = 0; c < t->ncons; c++) {
                int32_t d = part->gid[fe_tensor_consumer(g, t, c)];
                if (q->seen[d] == q->stamp)
                    continue;
                q->seen[d] = q->stamp;
                if (k == q->max_consumers)
                    return k + 1;
                q->cons[k++] = d;
            }
        }
    }
    return k;
}

/* Append the members of group gid to q->buf at *n. */
static void gather(pq *q, int32_t gid, int32_t *n)
{
    const fe_part *part = q->r->part;
    for (int32_t v = part->head[gid]; v >= 0; v = part->next[v])
        q->buf[(*n)++] = v;
}

/* The simulator's time for q->buf[0..n) as one kernel, or NAN with the
 * run stopped. */
static double sim_time(pq *q, int32_t n)
{
    fe_sim_group_result res;
    fe_error e = {0};
    if (fe_sim_group(q->r->g, q->r->env.machine, q->buf, n, 0, &res, &e) != FE_OK) {
        fe_error_set(q->r->err, e.code ? e.code : FE_EINPUT, "priority driver: %s", e.message);
        q->r->status = e.code ? e.code : FE_EINPUT;
        return NAN;
    }
    return res.time_s;
}

static double group_time(pq *q, int32_t gid)
{
    if (isnan(q->time[gid])) {
        int32_t n = 0;
        gather(q, gid, &n);
        q->time[gid] = sim_time(q, n);
    }
    return q->time[gid];
}

/* The simulator's saving for producer p and its k consumers in q->cons. */
static double default_priority(pq *q, int32_t p, int k)
{
    double apart = group_time(q, p), fused = 0;
    for (int i = 0; i < k; i++)
        apart += group_time(q, q->cons[i]);
    if (q->duplicate) {
        for (int i = 0; i < k; i++) {
            int32_t n = 0;
            gather(q, p, &n);
            gather(q, q->cons[i], &n);
            fused += sim_time(q, n);
        }
    } else {
        int32_t n = 0;
        gather(q, p, &n);
        for (int i = 0; i < k; i++)
            gather(q, q->cons[i], &n);
        fused = sim_time(q, n);
    }
    return apart - fused;
}

/* The policy's priority hook on producer p and its k consumers: 1 with its
 * number in *out, 0 when it returned nil (the default applies), -1 when
 * the run is over (a fault). */
static int hook_priority(pq *q, int32_t p, int k, double *out)
{
    fe_run *r = q->r;
    lua_State *L = r->L;
    int top = lua_gettop(L);
    lua_pushvalue(L, q->hook);
    lua_pushvalue(L, r->ptab);
    fe_lg_push_group(L, r->gidx, r->tmp, fe_part_members(r->part, p, r->tmp));
    lua_createtable(L, k, 0);
    for (int i = 0; i < k; i++) {
        fe_lg_push_group(L, r->gidx, r->tmp, fe_part_members(r->part, q->cons[i], r->tmp));
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushvalue(L, r->ctx);
    r->stats.hook_calls++;
    fe_error e = {0};
    double t0 = fe_clock_s();
    int rc = fe_sandbox_pcall(r->env.sb, 4, 1, "priority", &e);
    r->stats.hook_seconds += fe_clock_s() - t0;
    if (rc != FE_OK) {
        fe_run_fault(r, "priority", q->hook, "%s", e.message);
        return -1;
    }
    int t = lua_type(L, -1), got = 0;
    if (t == LUA_TNUMBER && !isnan(lua_tonumber(L, -1))) {
        *out = lua_tonumber(L, -1);
        got = 1;
    } else if (t != LUA_TNIL) {
        fe_run_fault(r, "priority", q->hook, "priority returned %s; it must return a number (the "
                     "seconds fusing saves; larger fuses first) or nil for the simulator's estimate",
                     t == LUA_TNUMBER ? "NaN" : fe_sandbox_describe(L, -1));
        got = -1;
    }
    lua_settop(L, top);
    return got;
}

/* The priority of producer p into its k consumers in q->cons: the hook's,
 * else the simulator's. NAN when the run is over. */
static double price(pq *q, int32_t p, int k)
{
    double prio = 0;
    int ask = q->hook != 0;
    if (ask && q->hook_some) {
        ask = 0;
        const fe_part *part = q->r->part;
        for (int32_t v = part->head[p]; v >= 0 && !ask; v = part->next[v])
            ask = q->hook_op[fe_graph_node(q->r->g, v)->op];
    }
    int got = ask ? hook_priority(q, p, k, &prio) : 0;
    if (got < 0 || fe_run_over(q->r))
        return NAN;
    if (!got) {
        prio = default_priority(q, p, k);
        if (q->r->status != FE_OK)
            return NAN;
    }
    return prio;
}

/* With multi_output: queue producer p into each of its k consumers alone. */
static int queue_pairs(pq *q, int32_t p, int k)
{
    memcpy(q->pair, q->cons, (size_t)k * sizeof *q->pair);
    for (int i = 0; i < k; i++) {
        int32_t c = q->pair[i];
        if (q->sealed[c] || q->r->part->size[p] + q->r->part->size[c] > q->max_nodes)
            continue;
        q->cons[0] = c;
        double prio = price(q, p, 1);
        if (isnan(prio))
            return -1;
        entry e = {prio, p, q->ver[p], c, q->gen[c]};
        if (prio >= q->min_priority && push(q, &q->pairs, e) != 0)
            return -1;
    }
    return 0;
}

/* Re-price group gid and queue it if it qualifies; -1 if the run is over. */
static int reprice(pq *q, int32_t gid)
{
    q->ver[gid]++;
    if (q->sealed[gid])
        return 0;
    int k = consumers(q, gid);
    if (k == 0 || k > q->max_consumers)
        return 0;
    if (q->multi && k >= 2) {
        if (queue_pairs(q, gid, k) != 0)
            return -1;
        memcpy(q->cons, q->pair, (size_t)k * sizeof *q->cons);
    }
    for (int i = 0; i < k; i++)
        if (q->sealed[q->cons[i]])
            return 0;
    int64_t size = q->r->part->size[gid];
    for (int i = 0; i < k; i++)
        size += q->r->part->size[q->cons[i]];
    if (size > q->max_nodes)
        return 0;
    double prio = price(q, gid, k);
    if (isnan(prio))
        return -1;
    entry e = {prio, gid, q->ver[gid], -1, 0};
    return prio >= q->min_priority ? push(q, &q->all, e) : 0;
}

/* The groups producing inputs of group m (m excluded), re-priced. */
static int reprice_producers(pq *q, int32_t m)
{
    const fe_graph *g = q->r->g;
    const fe_part *part = q->r->part;
    int32_t n = 0;
    if (++q->stamp == 0) {
        memset(q->seen, 0, (size_t)g->nnodes * sizeof *q->seen);
        q->stamp = 1;
    }
    q->seen[m] = q->stamp;
    for (int32_t v = part->head[m]; v >= 0; v = part->next[v]) {
        const fe_node *nd = fe_graph_node(g, v);
        for (int i = 0; i < nd->nin; i++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_input(g, nd, i));
            if (t->producer < 0 || q->seen[part->gid[t->producer]] == q->stamp)
                continue;
            q->seen[part->gid[t->producer]] = q->stamp;
            q->nbrs[n++] = part->gid[t->producer];
        }
    }
    int rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++)
        rc = reprice(q, q->nbrs[i]);
    return rc;
}

/* Try the popped producer: into all its consumers, or into the one of a
 * pair entry; legality, decide, merge, re-price. */
static int try_fuse(pq *q, entry e)
{
    fe_run *r = q->r;
    lua_State *L = r->L;
    int k = 1;
    if (e.cons < 0) {
        k = consumers(q, e.gid);
        if (k == 0 || k > q->max_consumers)
            return 0;
    } else {
        q->cons[0] = e.cons;
    }
    int32_t *gids = malloc((size_t)(k + 1) * sizeof *gids);
    if (!gids)
        return fe_run_oom(r, "in the priority driver");
    gids[0] = e.gid;
    memcpy(gids + 1, q->cons, (size_t)k * sizeof *gids);
    char why[512];
    int rc = 0;
    if (!fe_part_can_merge(r->part, gids, k + 1, why, sizeof why)) {
        fe_run_reject(r, r->tmp, fe_run_members(r, gids, k + 1), why);
        goto out;
    }
    lua_pushliteral(L, "priority");
    lua_pushnumber(L, e.prio);
    lua_rawset(L, r->ctx);
    if (q->multi) {
        lua_pushliteral(L, "multi_output");
        lua_pushboolean(L, e.cons >= 0);
        lua_rawset(L, r->ctx);
    }
    int v = fe_run_decide(r, gids, k + 1);
    if (v < 0 || fe_run_over(r)) {
        rc = -1;
        goto out;
    }
    if (v == 1) {
        for (int i = 0; i <= k; i++) {
            q->ver[gids[i]]++;
            q->gen[gids[i]]++;
        }
        int32_t m = fe_part_merge(r->part, gids, k + 1);
        q->gen[m]++;
        q->time[m] = NAN;
        rc = reprice(q, m);
        if (rc == 0)
            rc = reprice_producers(q, m);
    }
out:
    free(gids);
    return rc;
}

/* Whether entry e still stands: its producer was not merged or re-priced
 * since, nor, for a pair, its consumer merged. */
static int live(const pq *q, entry e)
{
    const fe_part *part = q->r->part;
    if (e.ver != q->ver[e.gid] || part->gid[e.gid] != e.gid)
        return 0;
    return e.cons < 0 || (part->gid[e.cons] == e.cons && q->gen[e.cons] == e.gen);
}

int fe_drive_priority(fe_run *r)
{
    const fe_graph *g = r->g;
    lua_State *L = r->L;
    size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 1u;
    pq q = {.r = r};
    int rc = 0;
    if (read_params(&q) != 0)
        return r->status;
    q.ver = calloc(n, sizeof *q.ver);
    q.gen = calloc(n, sizeof *q.gen);
    q.sealed = calloc(n, sizeof *q.sealed);
    q.pair = malloc(((size_t)q.max_consumers + 1) * sizeof *q.pair);
    q.time = malloc(n * sizeof *q.time);
    q.seen = calloc(n, sizeof *q.seen);
    q.cons = malloc(((size_t)q.max_consumers + 1) * sizeof *q.cons);
    q.buf = malloc(n * sizeof *q.buf);
    q.nbrs = malloc(n * sizeof *q.nbrs);
    if (!q.ver || !q.gen || !q.sealed || !q.pair || !q.time || !q.seen || !q.cons || !q.buf || !q.nbrs) {
        fe_run_oom(r, "in the priority driver");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        q.time[i] = NAN;
    if (read_priority_ops(&q) != 0 || fix_groups(&q) != 0)
        goto out;
    q.hook = fe_run_rawfield(L, r->ptab, "priority") == LUA_TFUNCTION ? lua_gettop(L) : 0;
    if (!q.hook)
        lua_pop(L, 1);
    for (int32_t v = 0; v < g->nnodes && rc == 0; v++)
        rc = reprice(&q, v);   /* every node is its own group yet */
    while (rc == 0 && (q.all.n > 0 || q.pairs.n > 0) && !fe_run_over(r)) {
        entry e = q.all.n > 0 ? pop(&q.all) : pop(&q.pairs);
        if (live(&q, e))
            rc = try_fuse(&q, e);
    }
out:
    lua_settop(L, r->ctx);
    free(q.all.e);
    free(q.pairs.e);
    free(q.ver);
    free(q.gen);
    free(q.sealed);
    free(q.pair);
    free(q.time);
    free(q.seen);
    free(q.cons);
    free(q.buf);
    free(q.nbrs);
    return r->status;
}
