/* ctx_optimal.c: ctx:optimal(opts), the optimal plan of a window under the
 * cost model, for the plan driver (see docs/policy-guide.md, "The optimal
 * plan"). The search is core/plan's: candidates.h lists the legal groups,
 * optimal.h chooses among them with milp.h's solver; this file reads the
 * options, prices the candidates, runs the rounds and builds the answer.
 *
 *   nodes           the window: a group or a list of nodes, convex (a
 *                   range of the topological order is); default the graph
 *   max_group       most nodes in an enumerated candidate, 1 to 64 (8)
 *   siblings        two readers of one tensor are neighbours (true)
 *   horizontal      any two nodes are: candidates need not be connected
 *                   (false; up to 2^n sets of a window: small ones only)
 *   candidates      more candidates: a list of groups, or a function of
 *                   the window (a group) returning one; each must be legal
 *   cost            "simulator" (default), "profile" (the run's profile:
 *                   fused times, single times for nodes alone; groups it
 *                   has no time for are left out), or function(group) ->
 *                   seconds [, split]
 *   grow            rounds of growing: after a solve, every legal union of
 *                   two chosen groups (sharing a tensor or not) that costs
 *                   less than the two becomes a candidate, and the search
 *                   runs again from the plan it had (0)
 *   max_candidates  more enumerated candidates is an answer of nil (1e6)
 *   time_limit      seconds for the whole call (the run's time left, and
 *                   never more); at the limit the best plan found comes
 *                   back with the gap the solver proved
 *
 * The simulator prices a group at split 1 and at the simulator's default
 * split and keeps the cheaper (time grows with the split past the
 * default, and below it the tile overflows whatever the split: sim.c),
 * so the plan's simulated time is the sum the solver minimised.
 *
 * The answer: {groups = {{node, ..., split = s, reason = "..."}, ...}
 * (every node of the window in one group, in a dependency order), time,
 * bound (seconds), gap (time - bound) / time, optimal (proven among the
 * candidates), status ("optimal" or "time_limit"), candidates (the
 * solver's columns), enumerated, dominated, grown, cuts, nodes (branch
 * and bound), rounds, seconds, max_group, window (nodes), solver}; or nil,
 * a message and "candidates" or "time_limit" when enumerating the
 * candidates passed max_candidates or the time limit (a smaller max_group
 * or window is the policy's decision; pricing them past the time limit is
 * the same "time_limit" answer). Each call is recorded in the run's
 * plan (its file's "optimal"), so a plan says which windows were proven
 * optimal.
 *
 * C memory lives in a box (a userdata with __gc) on the stack, so that a
 * Lua error raised midway, by a hook or a wrong answer, frees it.
 */
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ctx_optimal.h"
#include "lua_fields.h"
#include "lua_graph.h"
#include "ops.h"
#include "optimal.h"
#include "sandbox.h"
#include "sim.h"
#include "u64map.h"

#define MAX_GROUP 64
#define BOX_MT "fuseeng.optimal_box"

static const char *const OPTIONS[] = {"nodes", "max_group", "siblings", "horizontal", "candidates",
                                      "cost", "grow", "max_candidates", "time_limit", NULL};

enum { COST_SIM, COST_PROFILE, COST_HOOK };
static const char *const COST_NAMES[] = {"simulator", "profile", "hook"};

typedef struct box {
    int32_t *win, *nodes;   /* the window; scratch for one group (nnodes each) */
    int32_t *label;         /* window position -> group of the solution */
    fe_cands cands, more;
    double *cost;
    int32_t *split;
    int64_t ncost;          /* room in cost and split */
    int64_t *pairs, *start;
    fe_u64map known;        /* the candidates' sets by hash, for growing */
    int64_t nknown;         /* candidates in it */
    fe_opt_result res;
} box;

static void box_clear(box *b)
{
    free(b->win);
    free(b->nodes);
    free(b->label);
    fe_cands_free(&b->cands);
    fe_cands_free(&b->more);
    free(b->cost);
    free(b->split);
    free(b->pairs);
    free(b->start);
    free(b->res.chosen);
    fe_u64map_free(&b->known);
    memset(b, 0, sizeof *b);
}

static int box_gc(lua_State *L)
{
    box_clear(lua_touserdata(L, 1));
    return 0;
}

static box *new_box(lua_State *L)
{
    box *b = lua_newuserdatauv(L, sizeof *b, 0);
    memset(b, 0, sizeof *b);
    if (luaL_newmetatable(L, BOX_MT)) {
        lua_pushcfunction(L, box_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);
    return b;
}

/* ---- options ---- */

typedef struct opts {
    int max_group, siblings, horizontal, grow, cost;
    int64_t max_candidates;
    double time_limit;
    int nodes, candidates, hook;   /* stack slots, 0 if absent */
} opts;

/* opts[k] on the stack (nil if absent). */
static int field(lua_State *L, int t, const char *k)
{
    lua_pushstring(L, k);
    return lua_rawget(L, t);
}

static int64_t int_option(lua_State *L, int t, const char *k, int64_t lo, int64_t hi, int64_t dflt)
{
    lua_Integer v = dflt;
    if (field(L, t, k) != LUA_TNIL && (!fe_lf_integer(L, -1, &v) || v < lo || v > hi))
        luaL_error(L, "optimal: %s must be an integer from %I to %I, got %s", k, (lua_Integer)lo,
                   (lua_Integer)hi, fe_sandbox_describe(L, -1));
    lua_pop(L, 1);
    return v;
}

static int bool_option(lua_State *L, int t, const char *k, int dflt)
{
    int v = dflt;
    if (field(L, t, k) != LUA_TNIL) {
        if (!lua_isboolean(L, -1))
            luaL_error(L, "optimal: %s must be true or false, got %s", k, fe_sandbox_describe(L, -1));
        v = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    return v;
}

static void read_options(lua_State *L, fe_run *r, int t, opts *o)
{
    *o = (opts){.max_group = 8, .siblings = 1, .max_candidates = 1000000, .cost = COST_SIM};
    if (lua_isnoneornil(L, t))
        return;
    if (!lua_istable(L, t))
        luaL_error(L, "optimal: options must be a table such as {max_group = 8}, got %s",
                   fe_sandbox_describe(L, t));
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        int known = 0;
        for (int i = 0; OPTIONS[i] && !known; i++)
            known = lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), OPTIONS[i]);
        if (!known)
            luaL_error(L, "optimal: unknown option %s (the options are nodes, max_group, siblings, "
                       "horizontal, candidates, cost, grow, max_candidates and time_limit)",
                       fe_sandbox_describe(L, -1));
    }
    o->max_group = (int)int_option(L, t, "max_group", 1, MAX_GROUP, 8);
    o->grow = (int)int_option(L, t, "grow", 0, 1000, 0);
    o->max_candidates = int_option(L, t, "max_candidates", 1, 100000000, 1000000);
    o->siblings = bool_option(L, t, "siblings", 1);
    o->horizontal = bool_option(L, t, "horizontal", 0);
    if (field(L, t, "time_limit") != LUA_TNIL) {
        int isnum = 0;
        o->time_limit = lua_tonumberx(L, -1, &isnum);
        if (lua_type(L, -1) != LUA_TNUMBER || !isnum || !(o->time_limit > 0) || !isfinite(o->time_limit))
            luaL_error(L, "optimal: time_limit must be a number of seconds above 0, got %s",
                       fe_sandbox_describe(L, -1));
    }
    lua_pop(L, 1);
    int ct = field(L, t, "cost");
    if (ct == LUA_TFUNCTION) {
        o->cost = COST_HOOK;
        o->hook = lua_gettop(L);   /* stays on the stack */
    } else {
        const char *c = ct == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (ct != LUA_TNIL && (!c || (strcmp(c, "simulator") && strcmp(c, "profile"))))
            luaL_error(L, "optimal: cost must be \"simulator\", \"profile\" or a function(group) "
                       "returning seconds, got %s", fe_sandbox_describe(L, -1));
        if (c && !strcmp(c, "profile")) {
            if (!r->env.profile)
                luaL_error(L, "optimal: cost = \"profile\" needs a profile: run with --profile FILE "
                           "(fuseeng profile writes one)");
            o->cost = COST_PROFILE;
        }
        lua_pop(L, 1);
    }
    int nt = field(L, t, "nodes");
    if (nt == LUA_TNIL)
        lua_pop(L, 1);
    else
        o->nodes = lua_gettop(L);
    int kt = field(L, t, "candidates");
    if (kt == LUA_TNIL)
        lua_pop(L, 1);
    else if (kt != LUA_TTABLE && kt != LUA_TFUNCTION)
        luaL_error(L, "optimal: candidates must be a list of groups or a function returning one, "
                   "got %s", fe_sandbox_describe(L, -1));
    else
        o->candidates = lua_gettop(L);
}

/* A group at idx (a group object or a list of nodes) into out, sorted;
 * returns its size. what names it in messages. */
static int read_group(lua_State *L, int idx, const fe_graph *g, int32_t *out, const char *what)
{
    int n;
    const int32_t *nodes = fe_lg_group_nodes(L, idx, g, &n);
    if (nodes) {
        memcpy(out, nodes, (size_t)n * sizeof *out);
        return n;
    }
    if (!lua_istable(L, idx))
        return luaL_error(L, "optimal: %s must be a group or a list of nodes, got %s", what,
                          fe_sandbox_describe(L, idx));
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    if (len < 1 || len > g->nnodes)
        return luaL_error(L, "optimal: %s must list 1 to %d nodes, got %I", what, g->nnodes, len);
    for (lua_Integer i = 1; i <= len; i++) {
        lua_rawgeti(L, idx, i);
        int32_t v = fe_lg_to_node(L, -1, g);
        if (v < 0)
            return luaL_error(L, "optimal: %s: item %I (%s) is not a node of this graph", what, i,
                              fe_sandbox_describe(L, -1));
        lua_pop(L, 1);
        int32_t j = (int32_t)i - 1;
        while (j > 0 && out[j - 1] > v) {
            out[j] = out[j - 1];
            j--;
        }
        if (j > 0 && out[j - 1] == v)
            return luaL_error(L, "optimal: %s lists node '%s' twice", what,
                              fe_node_name(g, fe_graph_node(g, v)));
        out[j] = v;
    }
    return (int)len;
}

/* ---- candidates ---- */

/* Node v's place in the window (sorted), or -1 outside it. */
static int window_pos(const box *b, int nw, int32_t v)
{
    int lo = 0, hi = nw;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (b->win[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nw && b->win[lo] == v ? lo : -1;
}

/* The candidates option: a list of groups, or a function of the window
 * returning one; each legal, inside the window. */
static void add_candidates(lua_State *L, fe_run *r, int gidx, box *b, int nw, fe_cand_space *sp,
                           const opts *o)
{
    const fe_graph *g = r->g;
    char place[300] = "", why[512];
    int list = o->candidates;
    if (lua_type(L, list) == LUA_TFUNCTION) {
        if (!fe_sandbox_fn_place(L, list, place, sizeof place))
            snprintf(place, sizeof place, "%s", "candidates");
        lua_pushvalue(L, list);
        fe_lg_push_group(L, gidx, b->win, nw);
        lua_call(L, 1, 1);
        if (!lua_istable(L, -1))
            luaL_error(L, "optimal: candidates (%s) returned %s; it must return a list of groups",
                       place, fe_sandbox_describe(L, -1));
        list = lua_gettop(L);
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, list);
    for (lua_Integer i = 1; i <= n; i++) {
        char what[64];
        snprintf(what, sizeof what, "candidates[%lld]", (long long)i);   /* C's printf: %lld */
        lua_rawgeti(L, list, i);
        int m = read_group(L, lua_gettop(L), g, b->nodes, what);
        lua_pop(L, 1);
        for (int k = 0; k < m; k++)
            if (window_pos(b, nw, b->nodes[k]) < 0)
                luaL_error(L, "optimal: %s holds node '%s', which is outside the window", what,
                           fe_node_name(g, fe_graph_node(g, b->nodes[k])));
        if (!fe_cand_legal(sp, b->nodes, m, why, sizeof why))
            luaL_error(L, "optimal: %s is not a legal group: %s", what, why);
        if (fe_cands_push(&b->cands, b->nodes, m) != FE_OK)
            luaL_error(L, "optimal: out of memory");
    }
}

/* ---- prices ---- */

static void room(lua_State *L, box *b, int64_t n)
{
    if (n <= b->ncost)
        return;
    int64_t cap = b->ncost ? b->ncost : 1024;
    while (cap < n)
        cap *= 2;
    double *c = realloc(b->cost, (size_t)cap * sizeof *c);
    if (c)
        b->cost = c;
    int32_t *s = c ? realloc(b->split, (size_t)cap * sizeof *s) : NULL;
    if (!s)
        luaL_error(L, "optimal: out of memory");
    b->split = s;
    b->ncost = cap;
}

/* The group's cost into *cost and split, or 0 when it has none (a
 * profile without its time). */
static int price(lua_State *L, fe_run *r, int gidx, const opts *o, const int32_t *nodes, int n,
                 double *cost, int32_t *split, fe_ctx_sim_tally *t)
{
    const fe_graph *g = r->g;
    fe_error err = {0};
    if (o->cost == COST_SIM) {
        fe_sim_group_result whole, tiled;
        double t0 = fe_clock_s();
        if (fe_sim_group(g, r->env.machine, nodes, n, 1, &whole, &err) != FE_OK)
            luaL_error(L, "optimal: simulate: %s", err.message);
        tiled = whole;   /* the default split is 1 for most groups: no second call */
        if (whole.split_default > 1 &&
            fe_sim_group(g, r->env.machine, nodes, n, 0, &tiled, &err) != FE_OK)
            luaL_error(L, "optimal: simulate: %s", err.message);
        t->calls += 1 + (whole.split_default > 1);
        t->seconds += fe_clock_s() - t0;
        *split = tiled.time_s < whole.time_s ? tiled.split : 1;
        *cost = tiled.time_s < whole.time_s ? tiled.time_s : whole.time_s;
        return 1;
    }
    if (o->cost == COST_PROFILE) {
        fe_profile_lookup res;
        fe_profile_lookup_group(r->env.profile, g, nodes, n, &res);
        *split = 0;
        if (n == 1 && !res.have_separate)
            luaL_error(L, "optimal: cost = \"profile\": the profile has no time for op '%s' (node "
                       "'%s'), and every node alone needs one: profile the model (fuseeng profile)",
                       fe_node_op_name(fe_graph_node(g, nodes[0])),
                       fe_node_name(g, fe_graph_node(g, nodes[0])));
        if (n > 1 && !res.have_fused)
            return 0;
        *cost = (n == 1 ? res.separate_ms : res.fused_ms) * 1e-3;
        if (!(*cost >= 0) || !isfinite(*cost))
            luaL_error(L, "optimal: cost = \"profile\": the profile's time for node '%s'%s is %f ms",
                       fe_node_name(g, fe_graph_node(g, nodes[0])), n > 1 ? "'s group" : "", *cost * 1e3);
        return 1;
    }
    lua_pushvalue(L, o->hook);
    fe_lg_push_group(L, gidx, nodes, n);
    lua_call(L, 1, 2);
    int isnum = 0;
    *cost = lua_tonumberx(L, -2, &isnum);
    if (lua_type(L, -2) != LUA_TNUMBER || !isnum || !(*cost >= 0) || !isfinite(*cost)) {
        char place[300];
        if (!fe_sandbox_fn_place(L, o->hook, place, sizeof place))
            snprintf(place, sizeof place, "%s", "the hook");
        luaL_error(L, "optimal: cost (%s) returned %s for a group of %d nodes (first '%s'); it "
                   "must return the group's time in seconds, a finite number >= 0", place,
                   fe_sandbox_describe(L, -2), n, fe_node_name(g, fe_graph_node(g, nodes[0])));
    }
    lua_Integer s = 0;
    if (!lua_isnil(L, -1) && (!fe_lf_integer(L, -1, &s) || s < 1 || s > FE_PLAN_MAX_SPLIT))
        luaL_error(L, "optimal: cost's second answer, the split, must be nil or " FE_PLAN_SPLIT_RULE
                   ", got %s", fe_sandbox_describe(L, -1));
    *split = (int32_t)s;
    lua_pop(L, 2);
    return 1;
}

/* Price candidates from..c->n, dropping those without a price (the
 * list is compacted in place). 0, or -1 past the deadline (a machine
 * whose groups are dear to price: one with a CUDA executor). */
static int price_all(lua_State *L, fe_run *r, int gidx, const opts *o, box *b, int64_t from,
                     double deadline, fe_ctx_sim_tally *t)
{
    fe_cands *c = &b->cands;
    room(L, b, c->n);
    int64_t kept = from, at = c->off[from];
    for (int64_t j = from; j < c->n; j++) {
        if ((j & 255) == 255 && fe_clock_s() > deadline)
            return -1;
        int n = (int)(c->off[j + 1] - c->off[j]);
        memcpy(b->nodes, c->nodes + c->off[j], (size_t)n * sizeof *b->nodes);
        if (!price(L, r, gidx, o, b->nodes, n, &b->cost[kept], &b->split[kept], t))
            continue;
        memcpy(c->nodes + at, b->nodes, (size_t)n * sizeof *b->nodes);
        c->off[kept] = at;
        at += n;
        c->off[++kept] = at;
    }
    c->n = kept;
    return 0;
}

/* ---- the rounds ---- */

/* A node set's key (nonzero): a collision only keeps a union out. */
static uint64_t set_key(const int32_t *nodes, int64_t n)
{
    uint64_t h = (uint64_t)n;
    for (int64_t i = 0; i < n; i++)
        h = fe_mix64(h ^ (uint64_t)(uint32_t)nodes[i]);
    return h | 1;
}

/* Grow: unions of two chosen groups that cost less than the two, and are
 * no candidate yet, become candidates. Returns how many. */
static int64_t grow(lua_State *L, fe_run *r, int gidx, const opts *o, box *b, fe_cand_space *sp,
                    fe_ctx_sim_tally *t)
{
    fe_error err = {0};
    fe_cands_clear(&b->more);
    free(b->pairs);
    b->pairs = NULL;
    if (fe_cands_unions(sp, &b->cands, b->res.chosen, b->res.nchosen, &b->more, &b->pairs, &err) !=
        FE_OK)
        luaL_error(L, "optimal: %s", err.message);
    for (; b->nknown < b->cands.n; b->nknown++) {
        int64_t j = b->nknown;
        if (fe_u64map_put(&b->known, set_key(b->cands.nodes + b->cands.off[j],
                                              b->cands.off[j + 1] - b->cands.off[j]), 0) < 0)
            luaL_error(L, "optimal: out of memory");
    }
    int64_t added = 0;
    for (int64_t u = 0; u < b->more.n; u++) {
        int n = (int)(b->more.off[u + 1] - b->more.off[u]);
        double cost;
        int32_t split;
        memcpy(b->nodes, b->more.nodes + b->more.off[u], (size_t)n * sizeof *b->nodes);
        if (fe_u64map_get(&b->known, set_key(b->nodes, n)))
            continue;
        if (!price(L, r, gidx, o, b->nodes, n, &cost, &split, t) ||
            !(cost < b->cost[b->pairs[2 * u]] + b->cost[b->pairs[2 * u + 1]]))
            continue;
        room(L, b, b->cands.n + 1);
        if (fe_cands_push(&b->cands, b->nodes, n) != FE_OK)
            luaL_error(L, "optimal: out of memory");
        b->cost[b->cands.n - 1] = cost;
        b->split[b->cands.n - 1] = split;
        added++;
    }
    return added;
}

static double time_left(double deadline)
{
    double left = deadline - fe_clock_s();
    return left > 1e-3 ? left : 1e-3;
}

/* ---- the answer ---- */

static void push_answer(lua_State *L, int gidx, box *b, int nw, const opts *o, int64_t enumerated,
                        int64_t grown, int rounds, double seconds)
{
    const fe_opt_result *res = &b->res;
    const fe_cands *c = &b->cands;
    int proven = res->status == FE_MILP_OPTIMAL;
    double gap = res->value > 0 ? (res->value - res->bound) / res->value : 0;
    char reason[400];
    char among[160];
    snprintf(among, sizeof among, "%lld candidate groups (every %slegal group of up to %d nodes%s; "
             "window of %d nodes)", (long long)res->columns, o->horizontal ? "" : "connected ",
             o->max_group, grown ? " and unions grown from solutions" : "", nw);
    if (proven)
        snprintf(reason, sizeof reason, "optimal: proven optimal among %s", among);
    else
        snprintf(reason, sizeof reason, "optimal: best plan found at the time limit, at most %.3g%% "
                 "above the optimum among %s", gap * 100, among);
    lua_createtable(L, 0, 20);
    lua_createtable(L, (int)res->nchosen, 0);
    for (int64_t i = 0; i < res->nchosen; i++) {
        int64_t j = res->chosen[i];
        int n = (int)(c->off[j + 1] - c->off[j]);
        lua_createtable(L, n, 2);
        for (int k = 0; k < n; k++) {
            fe_lg_push_node(L, gidx, c->nodes[c->off[j] + k]);
            lua_rawseti(L, -2, k + 1);
        }
        if (b->split[j] > 0)
            fe_lf_int(L, "split", b->split[j]);
        fe_lf_str(L, "reason", reason);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "groups");
    fe_lf_num(L, "time", res->value);
    fe_lf_num(L, "bound", res->bound);
    fe_lf_num(L, "gap", gap);
    fe_lf_bool(L, "optimal", proven);
    fe_lf_str(L, "status", proven ? "optimal" : "time_limit");
    fe_lf_int(L, "candidates", res->columns);
    fe_lf_int(L, "enumerated", enumerated);
    fe_lf_int(L, "dominated", res->dominated);
    fe_lf_int(L, "grown", grown);
    fe_lf_int(L, "cuts", res->cuts);
    fe_lf_int(L, "nodes", res->nodes);
    fe_lf_int(L, "rounds", rounds);
    fe_lf_num(L, "seconds", seconds);
    fe_lf_int(L, "max_group", o->max_group);
    fe_lf_int(L, "window", nw);
    fe_lf_str(L, "solver", fe_milp_solver());
}

/* The call into the plan's record (its file's "optimal"). */
static void record(lua_State *L, fe_run *r, box *b, int nw, const opts *o, double seconds)
{
    const fe_cands *c = &b->cands;
    for (int64_t i = 0; i < b->res.nchosen; i++) {
        int64_t j = b->res.chosen[i];
        for (int64_t e = c->off[j]; e < c->off[j + 1]; e++)
            b->label[window_pos(b, nw, c->nodes[e])] = (int32_t)i;
    }
    fe_solve s = {.n = nw, .max_group = o->max_group, .cost = fe_plan_str(r->log, COST_NAMES[o->cost]),
                  .candidates = b->res.columns, .optimal = b->res.status == FE_MILP_OPTIMAL,
                  .value = b->res.value, .bound = b->res.bound, .seconds = seconds};
    if (fe_plan_add_solve(r->log, &s, b->win, b->label) != FE_OK)
        luaL_error(L, "optimal: out of memory");
}

int fe_ctx_optimal(lua_State *L, fe_run *r, int gidx, fe_cand_space **space, fe_ctx_sim_tally *t)
{
    const fe_graph *g = r->g;
    double t0 = fe_clock_s();
    opts o;
    read_options(L, r, 2, &o);
    double left = fe_sandbox_seconds_left(r->env.sb);
    double limit = o.time_limit > 0 && o.time_limit < left ? o.time_limit : left;
    double deadline = t0 + limit;
    fe_error err = {0};
    if (!*space && !(*space = fe_cand_space_new(g, &err)))
        return luaL_error(L, "optimal: %s", err.message);
    fe_cand_space *sp = *space;
    box *b = new_box(L);
    size_t nn = (size_t)(g->nnodes > 0 ? g->nnodes : 1);
    b->win = malloc(nn * sizeof *b->win);
    b->nodes = malloc(nn * sizeof *b->nodes);
    b->label = malloc(nn * sizeof *b->label);
    if (!b->win || !b->nodes || !b->label)
        return luaL_error(L, "optimal: out of memory");
    int nw = g->nnodes;
    if (o.nodes) {
        nw = read_group(L, o.nodes, g, b->win, "nodes");
    } else {
        for (int32_t v = 0; v < g->nnodes; v++)
            b->win[v] = v;
    }
    if (nw < 1)
        return luaL_error(L, "optimal: the graph has no nodes");
    if (nw > FE_CAND_MAX_WINDOW)
        return luaL_error(L, "optimal: a window of %d nodes is more than the %d one search takes: "
                          "give nodes, a window of the graph (policies/optimal.lua solves large "
                          "graphs in windows)", nw, FE_CAND_MAX_WINDOW);
    char why[512];
    if (!fe_cand_window_ok(sp, b->win, nw, why, sizeof why))
        return luaL_error(L, "optimal: nodes is not a window (a convex set of nodes, such as a range "
                          "of the topological order): %s", why);

    fe_cand_opts co = {.max_group = o.max_group, .siblings = o.siblings, .horizontal = o.horizontal,
                       .max_candidates = o.max_candidates, .deadline = deadline};
    int64_t visited = 0;
    int rc = fe_cands_enumerate(sp, b->win, nw, &co, &b->cands, &visited, &err);
    if (rc == FE_EINPUT) {
        lua_pushnil(L);
        lua_pushfstring(L, "optimal: %s", err.message);
        lua_pushstring(L, strstr(err.message, "time limit") ? "time_limit" : "candidates");
        return 3;
    }
    if (rc != FE_OK)
        return luaL_error(L, "optimal: %s", err.message);
    int64_t enumerated = b->cands.n;
    if (o.candidates)
        add_candidates(L, r, gidx, b, nw, sp, &o);
    if (price_all(L, r, gidx, &o, b, 0, deadline, t) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "optimal: pricing %I candidate groups of up to %d nodes ran past the time "
                        "limit of %f s: lower max_group or solve smaller windows", (lua_Integer)b->cands.n,
                        o.max_group, limit);
        lua_pushliteral(L, "time_limit");
        return 3;
    }

    int64_t grown = 0;
    int rounds = 0;
    for (;;) {
        fe_opt_problem p = {.g = g, .win = b->win, .nw = nw, .cands = &b->cands, .cost = b->cost,
                            .start = b->start, .nstart = b->start ? b->res.nchosen : 0,
                            .time_limit = time_left(deadline)};
        fe_opt_result res;
        if (fe_opt_solve(&p, &res, &err) != FE_OK)
            return luaL_error(L, "optimal: %s", err.message);
        free(b->res.chosen);
        b->res = res;
        rounds++;
        if (rounds > o.grow || res.status != FE_MILP_OPTIMAL || fe_clock_s() > deadline)
            break;
        int64_t added = grow(L, r, gidx, &o, b, sp, t);
        if (added == 0)
            break;
        grown += added;
        /* the next round starts from this plan */
        free(b->start);
        if (!(b->start = malloc((size_t)res.nchosen * sizeof *b->start)))
            return luaL_error(L, "optimal: out of memory");
        memcpy(b->start, res.chosen, (size_t)res.nchosen * sizeof *b->start);
    }
    double seconds = fe_clock_s() - t0;
    record(L, r, b, nw, &o, seconds);
    push_answer(L, gidx, b, nw, &o, enumerated, grown, rounds, seconds);
    box_clear(b);
    return 1;
}
