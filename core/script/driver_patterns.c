/* driver_patterns.c: the patterns driver, InfiniCore's find_fusable_subgraphs
 * (seed 000).
 *
 * Note on matching. Nodes are visited in topological order. At each node
 * the driver collects candidates from the policy's patterns:
 *
 *   chain patterns ("add -> rms_norm"): windows along producer -> consumer
 *     paths that start at the node, through nodes not yet fused, at most
 *     `window` nodes long (param, default 16; at most 64 paths per node);
 *     the pattern's longest match on each path is a candidate. A path stops
 *     growing once no pattern's automaton is alive on it (p:match's second
 *     result), so most paths end after a node or two. Any number of
 *     patterns: the walk keeps, for each depth of the path, each pattern's
 *     best length and whether it is alive (one row per depth). A match
 *     longer than the path it was given is a fault of the pattern (a
 *     hand-made one), reported at its match function;
 *   expression patterns ("silu(x) * y"): a match rooted at the node.
 *
 * A chain pattern sees only the ops and kinds of the path (the proxies
 * hold nothing else), so its answer for a sequence of them is kept: a
 * model of repeated blocks walks the same few sequences at every block,
 * and each is matched once per pattern. An expression pattern that names
 * its root op (root_op, as compiled ones do) is asked only at nodes of that
 * op, and whose root_needs says which ops must make the root's operands,
 * only at nodes whose inputs' producers have them: match_expr would say
 * no anywhere else.
 *
 * Candidates are tried largest first (then in pattern order); each goes
 * through the engine's legality check and then the policy's decide. The
 * first one accepted becomes a group; a rejected candidate is logged and
 * the next one tried, as InfiniCore asks should_fuse of every match.
 */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "cone_memo.h"
#include "drivers.h"
#include "lua_graph.h"
#include "ops.h"
#include "u64map.h"

#define MAX_PATHS 64

typedef struct cand {
    int32_t *nodes;
    int n;
    int order;          /* pattern index, then discovery order */
} cand;

typedef struct walk {
    fe_run *r;
    int seq;            /* stack slot of the Lua sequence table */
    int proxies;        /* stack slot: node id -> {op=, pattern=} for chain matching */
    int pats;           /* stack slot of the patterns list */
    int npats;
    int window;
    int32_t *path;      /* node ids along the current path */
    int paths;
    uint8_t *busy;      /* node already fused */
    uint8_t *chain;     /* [1..npats]: pattern i is a chain pattern */
    int *best;          /* rows 0..window of npats + 1: longest match of each chain
                           pattern on the path's first d nodes (row d) */
    uint8_t *alive;     /* same rows: may pattern i still grow along the path? */
    cand *cands;
    int ncands;
    int64_t cap;
    int *root;          /* [1..npats]: an expression pattern's root op id, -1 any,
                           -2 not an expression pattern */
    uint64_t *needs;    /* root_needs of pattern i: needs[need_at[i] .. need_at[i + 1]),
                           each a mask of the op ids one of the root's producers must have */
    int *need_at;
    uint64_t *seqkey;   /* [0..window]: the path's first d (op, kind)s hashed */
    fe_u64map known;    /* chain answers: sequence and pattern -> len << 1 | alive */
    int *height;        /* [1..npats]: an expression pattern's height, 0 if it has none */
    fe_cone_memo *cones;   /* matches by cone (cone_memo.h); NULL if no pattern has a height */
} walk;

/* The key of a sequence grown by token v (or of a sequence and a pattern). */
static uint64_t seq_mix(uint64_t h, uint64_t v)
{
    return fe_mix64(h ^ (v + (h << 6) + (h >> 2)));
}

/* Row d of best / alive (index i is pattern i, 1-based). */
static size_t row(const walk *w, int d)
{
    return (size_t)d * (size_t)(w->npats + 1);
}

static int add_cand(walk *w, const int32_t *nodes, int n, int order)
{
    for (int i = 0; i < w->ncands; i++) {
        if (w->cands[i].n == n && memcmp(w->cands[i].nodes, nodes, (size_t)n * 4) == 0)
            return 0;
    }
    cand *c = fe_run_grow(w->cands, &w->cap, w->ncands + 1, sizeof *c, 16);
    if (!c)
        return -1;
    w->cands = c;
    int32_t *copy = malloc((size_t)n * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, nodes, (size_t)n * sizeof *copy);
    w->cands[w->ncands++] = (cand){copy, n, order};
    return 0;
}

/* Chain patterns read only .op and .pattern: plain tables are much cheaper
 * to read than node userdata, so each node gets one, made once. */
static void push_proxy(walk *w, int32_t v)
{
    lua_State *L = w->r->L;
    if (lua_rawgeti(L, w->proxies, v + 1) != LUA_TNIL)
        return;
    lua_pop(L, 1);
    const fe_node *n = fe_graph_node(w->r->g, v);
    lua_createtable(L, 0, 2);
    lua_pushstring(L, fe_node_op_name(n));
    lua_setfield(L, -2, "op");
    lua_pushstring(L, fe_pattern_name(n->pattern));
    lua_setfield(L, -2, "pattern");
    lua_pushvalue(L, -1);
    lua_rawseti(L, w->proxies, v + 1);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Match chain pattern i on the path so far (seq[1..depth]): its longest
 * match (nil: none) and whether a longer path could still match more. -1
 * when the run is over (a fault, reported). */
static int match_one(walk *w, int i, int depth, int *len, int *alive)
{
    fe_run *r = w->r;
    lua_State *L = r->L;
    uint64_t key = seq_mix(w->seqkey[depth], (uint64_t)i) | 1;   /* a map key is nonzero */
    const uint64_t *answer = fe_u64map_get(&w->known, key);
    if (answer) {
        *len = (int)(*answer >> 1);
        *alive = (int)(*answer & 1);
        return 0;
    }
    lua_pushnil(L);
    lua_rawseti(L, w->seq, depth + 1);
    lua_rawgeti(L, w->pats, i);
    lua_pushvalue(L, w->seq);
    if (fe_run_method(r, -2, "match", 1, 2, "pattern match") != 0) {
        lua_pop(L, 1);
        return -1;
    }
    /* A length that fits the path (nil or 0: no match), or the fault. */
    int isint = 0;
    lua_Integer n = lua_type(L, -2) == LUA_TNUMBER ? lua_tointegerx(L, -2, &isint) : 0;
    int ok = lua_isnil(L, -2) || (isint && n >= 0 && n <= depth);
    if (!ok) {
        fe_run_rawfield(L, -3, "match");
        fe_run_fault(r, "pattern match", lua_gettop(L), "patterns[%d]: match returned %s for a path of "
                     "%d node%s; it must return a length from 0 to %d, or nil", i,
                     fe_sandbox_describe(L, -3), depth, depth == 1 ? "" : "s", depth);
        lua_pop(L, 4);
        return -1;
    }
    *len = (int)n;
    *alive = lua_toboolean(L, -1);
    lua_pop(L, 3);
    if (fe_u64map_put(&w->known, key, (uint64_t)*len << 1 | (uint64_t)(*alive != 0)) < 0)
        return fe_run_oom(r, "matching patterns");
    return 0;
}

/* Chain pattern i's best match on the path, len nodes, is a candidate. */
static int record(walk *w, int len, int i)
{
    if (len < 2)
        return FE_OK;
    int32_t ids[256];   /* len <= depth <= window <= 256 */
    memcpy(ids, w->path, (size_t)len * sizeof *ids);
    qsort(ids, (size_t)len, sizeof *ids, cmp_i32);
    if (add_cand(w, ids, len, i) != 0)
        return fe_run_oom(w->r, "matching patterns");
    return FE_OK;
}

/* Depth-first over consumers, the path so far being path[0..depth). Row
 * depth of best / alive starts as row depth - 1 and takes this node's
 * matches; a pattern's candidate is recorded when it dies or the path
 * ends. */
static int extend(walk *w, int depth)
{
    fe_run *r = w->r;
    const fe_graph *g = r->g;
    const int *best_in = w->best + row(w, depth - 1);
    const uint8_t *alive_in = w->alive + row(w, depth - 1);
    int *best = w->best + row(w, depth);
    uint8_t *alive = w->alive + row(w, depth);
    int any = 0;
    const fe_node *last = fe_graph_node(g, w->path[depth - 1]);
    w->seqkey[depth] = seq_mix(w->seqkey[depth - 1], (uint64_t)last->op << 8 | last->pattern);
    for (int i = 1; i <= w->npats; i++) {
        best[i] = best_in[i];
        alive[i] = alive_in[i];
        if (!alive[i])
            continue;
        int len, live;
        if (match_one(w, i, depth, &len, &live) != 0)
            return -1;
        if (len > best[i])
            best[i] = len;
        if (!live) {
            alive[i] = 0;
            if (record(w, best[i], i) != FE_OK)
                return -1;
        }
        any |= alive[i];
    }
    int extended = 0;
    if (any && depth < w->window) {
        int32_t v = w->path[depth - 1];
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nout && w->paths < MAX_PATHS; k++) {
            const fe_tensor *t = fe_graph_tensor(g, fe_node_output(g, n, k));
            for (int32_t c = 0; c < t->ncons && w->paths < MAX_PATHS; c++) {
                int32_t u = fe_tensor_consumer(g, t, c);
                if (w->busy[u])
                    continue;
                w->path[depth] = u;
                push_proxy(w, u);
                lua_rawseti(r->L, w->seq, depth + 1);
                extended = 1;
                if (extend(w, depth + 1) != FE_OK)
                    return -1;
            }
        }
    }
    if (!extended) {
        /* The path ends here: patterns still alive have their best. */
        w->paths++;
        for (int i = 1; i <= w->npats; i++)
            if (alive[i] && record(w, best[i], i) != FE_OK)
                return -1;
    }
    return FE_OK;
}

/* A match of pattern i at nodes ids[0..n) (sorted here) as a candidate,
 * unless one of them is fused already. 0, or -1 out of memory. */
static int matched(walk *w, int32_t *ids, int n, int i)
{
    for (int k = 0; k < n; k++)
        if (w->busy[ids[k]])
            return 0;
    qsort(ids, (size_t)n, sizeof *ids, cmp_i32);
    return add_cand(w, ids, n, i);
}

/* Expression patterns rooted at v. A pattern with a height is matched
 * once per cone signature (cone_memo.h). */
static int match_exprs(walk *w, int32_t v)
{
    fe_run *r = w->r;
    lua_State *L = r->L;
    const fe_node *nd = fe_graph_node(r->g, v);
    int cone = -1;       /* v's cone: not made yet (-1), too large (0), current (1) */
    uint64_t made = 0;   /* the ops of v's inputs' producers */
    for (int k = 0; k < nd->nin; k++) {
        int32_t p = fe_graph_tensor(r->g, fe_node_input(r->g, nd, k))->producer;
        if (p >= 0)
            made |= (uint64_t)1 << fe_graph_node(r->g, p)->op;
    }
    for (int i = 1; i <= w->npats; i++) {
        if (w->root[i] == -2 || (w->root[i] >= 0 && w->root[i] != nd->op))
            continue;
        int missing = 0;
        for (int k = w->need_at[i]; k < w->need_at[i + 1] && !missing; k++)
            missing = !(w->needs[k] & made);
        if (missing)
            continue;
        int32_t ids[FE_CONE_MAX > 256 ? FE_CONE_MAX : 256];
        if (w->height[i] > 0 && cone < 0)
            cone = fe_cone_memo_at(w->cones, v);
        int n = w->height[i] > 0 && cone > 0 ? fe_cone_memo_get(w->cones, i, ids) : -1;
        if (n >= 0) {
            r->stats.hook_memo++;
            if (n >= 2 && matched(w, ids, n, i) != 0)
                return fe_run_oom(r, "matching patterns");
            continue;
        }
        lua_rawgeti(L, w->pats, i);
        fe_lg_push_node(L, r->gidx, v);
        if (fe_run_method(r, -2, "match_expr", 1, 2, "pattern match") != 0)
            return -1;
        lua_remove(L, -3);   /* the pattern */
        int ok = 1;
        n = 0;   /* no match */
        if (lua_type(L, -1) == LUA_TTABLE) {
            n = (int)lua_rawlen(L, -1);
            ok = n >= 2 && n <= 256;
            for (int k = 1; ok && k <= n; k++) {
                lua_rawgeti(L, -1, k);
                ids[k - 1] = fe_lg_to_node(L, -1, r->g);
                ok = ids[k - 1] >= 0;
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 2);
        /* Remembered before matched() sorts and checks: the same nodes, in
         * the order the pattern gave them. */
        if (ok && w->height[i] > 0 && cone > 0 && fe_cone_memo_put(w->cones, i, ids, n) < 0)
            return fe_run_oom(r, "matching patterns");
        if (ok && n >= 2 && matched(w, ids, n, i) != 0)
            return fe_run_oom(r, "matching patterns");
    }
    return FE_OK;
}

static int by_size(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->n != b->n)
        return b->n - a->n;
    if (a->order != b->order)
        return a->order - b->order;
    return memcmp(a->nodes, b->nodes, (size_t)a->n * 4);
}

_Static_assert(FE_NOPS <= 64, "op ids must fit the masks of root_needs");

/* Pattern i's root_needs (the pattern table is at stack slot pat) into
 * w->needs; an op name the registry does not know, or anything that is
 * not a list of names, constrains nothing. 0, or -1 when out of memory. */
static int needs_of(walk *w, int i, int pat)
{
    lua_State *L = w->r->L;
    int top = lua_gettop(L);
    if (fe_run_rawfield(L, pat, "root_needs") != LUA_TTABLE) {
        lua_settop(L, top);
        return 0;
    }
    int list = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, list);
    for (lua_Integer k = 1; k <= n; k++) {
        uint64_t mask = 0;
        int known = lua_rawgeti(L, list, k) == LUA_TTABLE;
        lua_Integer m = known ? (lua_Integer)lua_rawlen(L, -1) : 0;
        for (lua_Integer j = 1; known && j <= m; j++) {
            int op = lua_rawgeti(L, -1, j) == LUA_TSTRING ? fe_op_find(lua_tostring(L, -1)) : -1;
            lua_pop(L, 1);
            if (op < 0)
                known = 0;
            else
                mask |= (uint64_t)1 << op;
        }
        lua_pop(L, 1);
        if (!known || !m)
            continue;
        uint64_t *grown = realloc(w->needs, ((size_t)w->need_at[i + 1] + 1) * sizeof *grown);
        if (!grown) {
            lua_settop(L, top);
            return -1;
        }
        w->needs = grown;
        w->needs[w->need_at[i + 1]++] = mask;
    }
    lua_settop(L, top);
    return 0;
}

int fe_drive_patterns(fe_run *r)
{
    const fe_graph *g = r->g;
    lua_State *L = r->L;
    walk w = {.r = r, .window = 16};
    char why[512];
    int hmax = 0;

    if (fe_run_rawfield(L, r->ptab, "params") == LUA_TTABLE &&
        fe_run_rawfield(L, -1, "window") == LUA_TNUMBER)
        w.window = (int)lua_tonumber(L, -1);
    lua_settop(L, r->ctx);
    if (w.window < 2)
        w.window = 2;
    if (w.window > 256)
        w.window = 256;
    fe_run_rawfield(L, r->ptab, "patterns");
    w.pats = lua_gettop(L);
    w.npats = lua_istable(L, w.pats) ? (int)lua_rawlen(L, w.pats) : 0;
    lua_createtable(L, w.window, 0);
    w.seq = lua_gettop(L);
    lua_createtable(L, g->nnodes, 0);
    w.proxies = lua_gettop(L);
    w.path = malloc((size_t)w.window * sizeof *w.path);
    w.busy = calloc(g->nnodes > 0 ? (size_t)g->nnodes : 1u, 1);
    w.chain = calloc((size_t)w.npats + 1, 1);
    w.best = calloc(row(&w, w.window + 1), sizeof *w.best);
    w.alive = calloc(row(&w, w.window + 1), 1);
    w.root = calloc((size_t)w.npats + 1, sizeof *w.root);
    w.seqkey = calloc((size_t)w.window + 1, sizeof *w.seqkey);
    w.need_at = calloc((size_t)w.npats + 2, sizeof *w.need_at);
    w.height = calloc((size_t)w.npats + 1, sizeof *w.height);
    if (!w.path || !w.busy || !w.chain || !w.best || !w.alive || !w.root || !w.seqkey ||
        !w.need_at || !w.height) {
        fe_run_oom(r, "in the patterns driver");
        goto out;
    }
    for (int i = 1; i <= w.npats; i++) {
        lua_rawgeti(L, w.pats, i);
        fe_run_rawfield(L, -1, "kind");
        w.chain[i] = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "chain") == 0;
        int expr = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "expr") == 0;
        w.root[i] = expr ? -1 : -2;
        if (expr && fe_run_rawfield(L, -2, "root_op") == LUA_TSTRING)
            w.root[i] = fe_op_find(lua_tostring(L, -1));   /* unknown: -1, any */
        w.need_at[i + 1] = w.need_at[i];
        if (expr && w.root[i] >= 0 && needs_of(&w, i, w.proxies + 1) != 0) {
            fe_run_oom(r, "in the patterns driver");
            goto out;
        }
        if (expr && fe_run_rawfield(L, w.proxies + 1, "height") == LUA_TNUMBER &&
            lua_isinteger(L, -1) && lua_tointeger(L, -1) > 0 && lua_tointeger(L, -1) <= 64)
            w.height[i] = (int)lua_tointeger(L, -1);
        if (w.height[i] > hmax)
            hmax = w.height[i];
        lua_settop(L, w.proxies);
    }
    if (hmax > 0 && !(w.cones = fe_cone_memo_new(g, hmax, r->err))) {
        fe_run_oom(r, "in the patterns driver");
        goto out;
    }
    for (int32_t v = 0; v < g->nnodes && !fe_run_over(r); v++) {
        if (w.busy[v])
            continue;
        w.ncands = 0;
        w.paths = 0;
        w.path[0] = v;
        push_proxy(&w, v);
        lua_rawseti(L, w.seq, 1);
        for (int i = 1; i <= w.npats; i++) {   /* row 0: nothing matched, chains alive */
            w.best[i] = 0;
            w.alive[i] = w.chain[i];
        }
        if (extend(&w, 1) != FE_OK || match_exprs(&w, v) != FE_OK)
            break;
        if (w.ncands > 1)
            qsort(w.cands, (size_t)w.ncands, sizeof *w.cands, by_size);
        for (int i = 0; i < w.ncands; i++) {
            cand *c = &w.cands[i];
            int busy = 0;
            for (int k = 0; k < c->n && !busy; k++)
                busy = w.busy[c->nodes[k]];
            if (busy)
                continue;
            int32_t gids[256];
            for (int k = 0; k < c->n; k++)
                gids[k] = r->part->gid[c->nodes[k]];
            if (!fe_part_can_merge(r->part, gids, c->n, why, sizeof why)) {
                fe_run_reject(r, c->nodes, c->n, why);
                continue;
            }
            lua_pushinteger(L, c->order);   /* which pattern found it: ctx.pattern */
            lua_setfield(L, r->ctx, "pattern");
            int verdict = fe_run_decide(r, gids, c->n);
            if (verdict < 0 || fe_run_over(r))
                break;
            if (verdict == 1) {
                fe_part_merge(r->part, gids, c->n);
                for (int k = 0; k < c->n; k++)
                    w.busy[c->nodes[k]] = 1;
                break;
            }
        }
        for (int i = 0; i < w.ncands; i++)
            free(w.cands[i].nodes);
        w.ncands = 0;
    }
out:
    for (int i = 0; i < w.ncands; i++)
        free(w.cands[i].nodes);
    free(w.cands);
    free(w.path);
    free(w.busy);
    free(w.chain);
    free(w.best);
    free(w.alive);
    free(w.root);
    free(w.seqkey);
    free(w.needs);
    free(w.need_at);
    free(w.height);
    fe_cone_memo_free(w.cones);
    fe_u64map_free(&w.known);
    lua_settop(L, r->ctx);
    return r->status;
}

/* Is the value at idx a compiled pattern: a table of kind "chain" or "expr"? */
static int is_compiled(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE)
        return 0;
    lua_pushliteral(L, "kind");
    const char *k = lua_rawget(L, idx) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    int yes = strcmp(k, "chain") == 0 || strcmp(k, "expr") == 0;
    lua_pop(L, 1);
    return yes;
}

int fe_drive_patterns_check(lua_State *L, int t, char *why, size_t size)
{
    lua_pushliteral(L, "patterns");
    lua_rawget(L, t);
    int list = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, list), bad = 0;
    for (lua_Integer i = 1; !bad && i <= n; i++) {
        lua_rawgeti(L, list, i);
        if (!is_compiled(L, lua_gettop(L)))
            bad = i;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (n == 0)
        snprintf(why, size, "the patterns driver needs at least one pattern");
    else if (bad)
        snprintf(why, size, "patterns[%lld] is not a compiled pattern (give pattern strings to "
                 "fe.policy)", (long long)bad);
    return n == 0 || bad;
}
