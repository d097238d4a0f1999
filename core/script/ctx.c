/* ctx.c: the ctx a policy's hooks receive, built here and only here.
 *
 *   ctx.graph, ctx.policy (name), ctx.driver, ctx.params (the policy's)
 *   ctx.round          the greedy driver's round (it updates the field)
 *   ctx.pattern        the patterns driver's pattern that found the candidate
 *   ctx.state          the policy's scratch table for this run
 *   ctx.machine        the machine file's fields (ctx_sim.c)
 *   ctx.profile        :lookup(group) in the engine's profile; nil without one
 *   ctx:log(...)       a note in the decision log
 *   ctx:simulate(group [, {split = n}])           ctx_sim.c
 *   ctx:simulate_unfused(group)                   ctx_sim.c
 *   ctx:simulate_parts(group [, {split = n | fn}]) ctx_sim.c
 *   ctx:bench(group [, {split = n, kernel = name}]) ctx_bench.c
 *   ctx:choices(anchor [, {depth, max, kinds}])    ctx_choices.c
 *   ctx:optimal([{nodes, max_group, cost, ...}])   ctx_optimal.c
 *   ctx:signature(group)  the group's structure as 32 hex digits (groupsig.h)
 *
 * ctx is a table whose metatable refuses new fields (registered here on
 * first use, so an engine opens nothing). Its methods are closures over a
 * handle of the run that fe_ctx_end cuts, so a ctx kept by a script
 * cannot reach a finished run.
 */
#include <lauxlib.h>
#include <string.h>
#include <stdlib.h>

#include "ctx.h"
#include "ctx_bench.h"
#include "ctx_choices.h"
#include "ctx_optimal.h"
#include "ctx_sim.h"
#include "groupsig.h"
#include "lua_fields.h"
#include "lua_graph.h"
#include "ops.h"

#define CTX_MT "fuseeng.ctx"

/* The upvalue of every method: the run, until it ends. */
typedef struct handle {
    fe_run *r;
    fe_ctx_bench_state bench;
    fe_sim_agreement profile;   /* profile:lookup's times against the simulator */
    fe_chooser *chooser;   /* ctx:choices', made on its first call */
    fe_ctx_sim_tally sim;
    fe_groupsig *sig;      /* ctx:signature's, made on its first call */
    fe_cand_space *space;  /* ctx:optimal's, made on its first call */
} handle;

static handle *live_handle(lua_State *L)
{
    handle *h = lua_touserdata(L, lua_upvalueindex(1));
    if (!h || !h->r)
        luaL_error(L, "this ctx belongs to a finished run");
    return h;
}

static fe_run *live_run(lua_State *L)
{
    return live_handle(L)->r;
}

static int l_log(lua_State *L)
{
    fe_run *r = live_run(L);
    int n = lua_gettop(L);
    /* One string, the usual call: logged as it is, without the copy a
     * joined note needs (a plan hook may log once per choice it prices). */
    if (n == 2 && lua_type(L, 2) == LUA_TSTRING) {
        fe_run_note(r, NULL, 0, lua_tostring(L, 2));
        return 0;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 2; i <= n; i++) {   /* 1 is ctx (method call) */
        if (i > 2)
            luaL_addchar(&b, ' ');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    fe_run_note(r, NULL, 0, lua_tostring(L, -1));
    return 0;
}

static int l_simulate(lua_State *L)
{
    handle *h = live_handle(L);
    return fe_ctx_simulate(L, h->r->g, h->r->env.machine, &h->sim);
}

static int l_simulate_unfused(lua_State *L)
{
    handle *h = live_handle(L);
    return fe_ctx_simulate_unfused(L, h->r->g, h->r->env.machine, &h->sim);
}

static int l_simulate_parts(lua_State *L)
{
    handle *h = live_handle(L);
    return fe_ctx_simulate_parts(L, h->r->g, h->r->env.machine, &h->sim);
}

static int l_bench(lua_State *L)
{
    handle *h = live_handle(L);
    fe_ctx_bench_limits lim = {.budget = h->r->env.bench_budget, .item = h->r->env.bench_item,
                               .pending = h->r->pending, .weights = h->r->env.weights,
                               .inputs = h->r->env.inputs, .device = h->r->env.bench_device,
                               .machine = h->r->env.machine};
    return fe_ctx_bench(L, h->r->g, &lim, &h->bench);
}

/* ctx:signature(group): equal strings for groups of the same structure
 * (ops, attributes, shapes, wiring, what escapes; never names), so a plan
 * hook can keep what it learnt about one block for the next. */
static int l_signature(lua_State *L)
{
    handle *h = live_handle(L);
    const fe_graph *g = h->r->g;
    if (!h->sig) {
        fe_error err = {0};
        if (!(h->sig = fe_groupsig_new(g, &err)))
            return luaL_error(L, "signature: %s", err.message);
    }
    int32_t buf[64], *heap;
    int n = fe_lg_group_arg(L, 2, g, buf, 64, &heap);
    uint64_t key[2];
    fe_groupsig_of(h->sig, 0, heap ? heap : buf, n, NULL, NULL, 1, key);
    free(heap);
    static const char digits[] = "0123456789abcdef";
    char hex[32];
    for (int i = 0; i < 32; i++)
        hex[i] = digits[(key[i / 16] >> (60 - 4 * (i % 16))) & 15];
    lua_pushlstring(L, hex, sizeof hex);
    return 1;
}

/* Upvalues: the handle and the run's graph object (its groups' owner). */
static int l_choices(lua_State *L)
{
    handle *h = live_handle(L);
    lua_settop(L, 3);   /* ctx, anchor, options */
    lua_pushvalue(L, lua_upvalueindex(2));
    return fe_ctx_choices(L, h->r->g, lua_gettop(L), &h->chooser);
}

/* Upvalues: the handle and the run's graph object. */
static int l_optimal(lua_State *L)
{
    handle *h = live_handle(L);
    lua_settop(L, 2);   /* ctx, options */
    lua_pushvalue(L, lua_upvalueindex(2));
    return fe_ctx_optimal(L, h->r, 3, &h->space, &h->sim);
}

/* ctx.profile:lookup(group), InfiniCore's stage 2: the members' single
 * times summed, and the fused time by exact key, then compat key. Returns
 * a table: separate (ms, or nil if some member has no time: then missing
 * = its op), fused (ms, or nil), key ("exact" or "compat": which key gave
 * the fused time); with both times, the simulator's verdict beside them
 * (sim_fused, sim_separate, sim_speedup), counted for run --stats. */
static int l_profile_lookup(lua_State *L)
{
    handle *h = live_handle(L);
    fe_run *r = h->r;
    int n;
    const int32_t *nodes = fe_lg_group_nodes(L, 2, r->g, &n);
    if (!nodes)
        return luaL_error(L, "profile:lookup expects a group (call it as ctx.profile:lookup(group))");
    fe_profile_lookup res;
    fe_profile_lookup_group(r->env.profile, r->g, nodes, n, &res);
    lua_createtable(L, 0, 4);
    if (res.have_separate)
        fe_lf_num(L, "separate", res.separate_ms);
    else
        fe_lf_str(L, "missing", fe_node_op_name(fe_graph_node(r->g, res.missing)));
    if (res.have_fused) {
        fe_lf_num(L, "fused", res.fused_ms);
        fe_lf_str(L, "key", res.fused_exact ? "exact" : "compat");
    }
    if (res.have_fused && res.have_separate && n > 1)
        fe_ctx_sim_verdict(L, r->g, r->env.machine, nodes, n, 0, res.separate_ms, res.fused_ms,
                           &h->profile);
    return 1;
}

static const luaL_Reg METHODS[] = {
    {"log", l_log},
    {"simulate", l_simulate},
    {"simulate_unfused", l_simulate_unfused},
    {"simulate_parts", l_simulate_parts},
    {"bench", l_bench},
    {"signature", l_signature},
    {NULL, NULL},
};

static int ctx_newindex(lua_State *L)
{
    return luaL_error(L, "ctx is read-only; keep per-run data in ctx.state");
}

void fe_ctx_push(fe_run *r)
{
    lua_State *L = r->L;
    lua_createtable(L, 0, 16);
    lua_pushvalue(L, r->gidx);
    lua_setfield(L, -2, "graph");
    fe_lf_str(L, "policy", r->env.policy);
    fe_run_rawfield(L, r->ptab, "params");
    lua_setfield(L, -2, "params");
    fe_lf_str(L, "driver", r->env.driver);
    fe_lf_int(L, "round", 0);
    fe_lf_int(L, "pattern", 0);
    lua_newtable(L);
    lua_setfield(L, -2, "state");
    fe_ctx_push_machine(L, r->env.machine);
    lua_setfield(L, -2, "machine");
    handle *h = lua_newuserdatauv(L, sizeof *h, 0);
    *h = (handle){.r = r};
    if (r->env.profile) {
        lua_createtable(L, 0, 1);
        lua_pushvalue(L, -2);
        lua_pushcclosure(L, l_profile_lookup, 1);
        lua_setfield(L, -2, "lookup");
        lua_setfield(L, -3, "profile");
    }
    lua_pushvalue(L, -1);
    lua_pushvalue(L, r->gidx);
    lua_pushcclosure(L, l_choices, 2);
    lua_setfield(L, -3, "choices");
    lua_pushvalue(L, -1);
    lua_pushvalue(L, r->gidx);
    lua_pushcclosure(L, l_optimal, 2);
    lua_setfield(L, -3, "optimal");
    luaL_setfuncs(L, METHODS, 1);   /* pops the handle */
    if (luaL_newmetatable(L, CTX_MT)) {
        lua_pushcfunction(L, ctx_newindex);
        lua_setfield(L, -2, "__newindex");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_setmetatable(L, -2);
    r->ctx = lua_gettop(L);
}

void fe_ctx_end(fe_run *r)
{
    if (!r->ctx)
        return;
    /* The handle is the upvalue of ctx.log; cutting it cuts every method. */
    lua_State *L = r->L;
    lua_pushliteral(L, "log");
    lua_rawget(L, r->ctx);
    if (lua_getupvalue(L, -1, 1)) {
        handle *h = lua_touserdata(L, -1);
        if (h) {
            h->r = NULL;
            r->stats.sim_calls = h->sim.calls;
            r->stats.sim_seconds = h->sim.seconds;
            r->stats.bench_measured = h->bench.measured;
            r->stats.bench_cached = h->bench.cached;
            r->stats.bench_fallbacks = h->bench.refused;
            r->stats.bench_agree = h->bench.agree;
            r->stats.profile_agree = h->profile;
            r->stats.bench_seconds = h->bench.seconds;
            r->stats.bench_cpu_seconds = h->bench.cpu_seconds;
            fe_ctx_bench_end(&h->bench);
            fe_chooser_free(h->chooser);
            h->chooser = NULL;
            fe_groupsig_free(h->sig);
            h->sig = NULL;
            fe_cand_space_free(h->space);
            h->space = NULL;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}
