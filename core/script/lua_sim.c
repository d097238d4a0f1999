/* lua_sim.c: the simulator as policies see it: ctx.machine and
 *
 *   ctx:simulate(group [, {split = k}])   the group run as one kernel
 *   ctx:simulate_unfused(group)           its nodes run one kernel each
 *
 * A group is a group object, or a list of nodes (objects, names or 1-based
 * indices). Both return a table: time (seconds), l3_bytes, l2_peak (what a
 * tile needs on chip), l2_occupancy (the same, at most the L2),
 * working_set, regs, spill_bytes, split, split_default, fits,
 * overflow_bytes, reread_bytes, intermediate_bytes, l2_bytes, flops,
 * compute, memory, launch (seconds). Cheap enough for policy loops
 * (bench_sim measures the calls per second). A wrong argument -- options
 * that are not a table, an unknown option, a split out of range -- is an
 * error at the policy's line. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lua_graph.h"
#include "lua_sim.h"
#include "run.h"
#include "sim.h"

static void set_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, int64_t v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static void push_result(lua_State *L, const fe_sim_group_result *s)
{
    lua_createtable(L, 0, 19);
    set_num(L, "time", s->time_s);
    set_int(L, "l3_bytes", s->l3_bytes);
    set_int(L, "l2_peak", s->l2_peak);
    set_int(L, "l2_occupancy", s->l2_occupancy);
    set_int(L, "working_set", s->working_set);
    set_int(L, "regs", s->regs);
    set_int(L, "spill_bytes", s->spill_bytes);
    set_int(L, "split", s->split);
    set_int(L, "split_default", s->split_default);
    lua_pushboolean(L, s->fits);
    lua_setfield(L, -2, "fits");
    set_int(L, "overflow_bytes", s->overflow_bytes);
    set_int(L, "reread_bytes", s->reread_bytes);
    set_int(L, "intermediate_bytes", s->intermediate_bytes);
    set_int(L, "l2_bytes", s->l2_bytes);
    set_int(L, "flops", s->flops);
    set_num(L, "compute", s->compute_s);
    set_num(L, "memory", s->memory_s);
    set_num(L, "launch", s->launch_s);
}

/* The options table of ctx:simulate: nil, or a table whose only field is
 * split. Anything else is a mistake the policy author should hear about
 * (a typo such as {splt = 4} would otherwise price the default split). */
static int split_option(lua_State *L, int idx)
{
    if (lua_isnoneornil(L, idx))
        return 0;
    if (!lua_istable(L, idx))
        return luaL_error(L, "simulate: options must be a table such as {split = 4}, got %s",
                          fe_run_describe(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "split") != 0)
            return luaL_error(L, "simulate: unknown option %s (the only option is split)",
                              fe_run_describe(L, -1));
    }
    int split = 0;
    if (fe_run_rawfield(L, idx, "split") != LUA_TNIL) {
        lua_Integer k = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
        if (k < 0 || k > FE_SIM_MAX_SPLIT)
            return luaL_error(L, "simulate: split must be " FE_SIM_SPLIT_RULE " (or 0 / nil for "
                              "the default), got %s", fe_run_describe(L, -1));
        split = (int)k;
    }
    lua_pop(L, 1);
    return split;
}

static int simulate(lua_State *L, int unfused)
{
    fe_run *r = fe_run_from_upvalue(L);
    int split = 0;
    /* Options first: nothing to free yet if they are wrong. */
    if (unfused && !lua_isnoneornil(L, 3))
        return luaL_error(L, "simulate_unfused takes no options (got %s); each node runs at its "
                          "default split", fe_run_describe(L, 3));
    if (!unfused)
        split = split_option(L, 3);
    int32_t buf[64], *heap;
    int n = fe_lg_group_arg(L, 2, r->g, buf, 64, &heap);
    fe_sim_group_result res;
    fe_error err = {0};
    int rc = unfused ? fe_sim_unfused(r->g, &r->e->machine, heap ? heap : buf, n, &res, &err)
                     : fe_sim_group(r->g, &r->e->machine, heap ? heap : buf, n, split, &res, &err);
    free(heap);
    if (rc != FE_OK)
        return luaL_error(L, "simulate: %s", err.message);
    push_result(L, &res);
    return 1;
}

static int l_simulate(lua_State *L) { return simulate(L, 0); }
static int l_simulate_unfused(lua_State *L) { return simulate(L, 1); }

void fe_lua_sim_open(lua_State *L)
{
    fe_run_add_ctx_method(L, "simulate", l_simulate);
    fe_run_add_ctx_method(L, "simulate_unfused", l_simulate_unfused);
}

void fe_lua_push_machine(lua_State *L, const fe_machine *m)
{
    lua_createtable(L, 0, 20);
    lua_pushstring(L, m->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, m->description);
    lua_setfield(L, -2, "description");
    set_int(L, "l2_bytes", m->l2_bytes);
    set_int(L, "memory_bytes", m->memory_bytes);
    set_num(L, "l2_bandwidth", m->l2_bandwidth);
    set_num(L, "l3_bandwidth", m->l3_bandwidth);
    set_num(L, "local_bandwidth", m->local_bandwidth);
    set_num(L, "launch_us", m->launch_us);
    set_num(L, "tile_us", m->tile_us);
    set_int(L, "registers", m->registers);
    set_int(L, "reserved_registers", m->reserved_registers);
    set_int(L, "elements_per_thread", m->elements_per_thread);
    set_num(L, "link_bandwidth", m->link_bandwidth);
    set_num(L, "link_latency_us", m->link_latency_us);
    lua_pushboolean(L, m->overlap);
    lua_setfield(L, -2, "overlap");
    for (int t = 0; t < 2; t++) {
        const double *f = t ? m->vector_flops : m->matrix_flops;
        lua_createtable(L, 0, FE_NDTYPE);
        for (int d = 0; d < FE_NDTYPE; d++) {
            if (f[d] > 0) {
                lua_pushnumber(L, f[d]);
                lua_setfield(L, -2, fe_dtype_name(d));
            }
        }
        lua_setfield(L, -2, t ? "vector_flops" : "matrix_flops");
    }
}
