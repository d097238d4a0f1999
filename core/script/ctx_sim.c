/* ctx_sim.c: the simulator as policies see it: ctx.machine and
 *
 *   ctx:simulate(group [, {split = n}])    the group run as one kernel
 *   ctx:simulate_unfused(group)            its nodes run one kernel each
 *   ctx:simulate_parts(group [, {split = n or function(part) -> n}])
 *                                          its parts (group.parts) run one
 *                                          kernel each: what the candidate
 *                                          costs if not fused
 *
 * A group is a group object, or a list of nodes (objects, names or 1-based
 * indices); a group that merges no parts, or a list, is its own only part.
 * Each returns a table: time (seconds), l3_bytes, l2_peak (what a tile
 * needs on chip), l2_occupancy (the same, at most the L2), working_set,
 * regs, spill_regs (registers over the machine's), spill_bytes, spill
 * (seconds of spill traffic), split, split_default, fits, overflow_bytes,
 * reread_bytes, intermediate_bytes, l2_bytes (the group's on-chip traffic,
 * fe_sim_group_result's l2_traffic; ctx.machine.l2_bytes is the L2's
 * size), flops, compute, memory, launch (seconds). The sums of unfused
 * and parts follow fe_sim_unfused: times, bytes and FLOPs add up, peaks,
 * registers and splits are the largest, fits holds if every kernel fits;
 * parts adds `parts`, their count. A split of 0 or nil is the simulator's default (the smallest
 * that fits the L2), as the unfused plan runs a node. Cheap enough for
 * policy loops (bench_sim measures the calls per second). A wrong
 * argument -- options that are not a table, an unknown option, a split out
 * of range -- is an error at the policy's line. */
#include <lauxlib.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ctx_sim.h"
#include "lua_fields.h"
#include "lua_graph.h"
#include "sandbox.h"
#include "sim.h"

#define R(name, f, t) {name, offsetof(fe_sim_group_result, f), t}
static const fe_lf_member RESULT[] = {
    R("time", time_s, FE_LF_NUM), R("l3_bytes", l3_bytes, FE_LF_I64),
    R("l2_peak", l2_peak, FE_LF_I64), R("l2_occupancy", l2_occupancy, FE_LF_I64),
    R("working_set", working_set, FE_LF_I64), R("regs", regs, FE_LF_I32),
    R("spill_bytes", spill_bytes, FE_LF_I64), R("split", split, FE_LF_I32),
    R("split_default", split_default, FE_LF_I32), R("fits", fits, FE_LF_BOOL8),
    R("overflow_bytes", overflow_bytes, FE_LF_I64), R("reread_bytes", reread_bytes, FE_LF_I64),
    R("intermediate_bytes", intermediate_bytes, FE_LF_I64), R("l2_bytes", l2_traffic, FE_LF_I64),
    R("flops", flops, FE_LF_I64), R("compute", compute_s, FE_LF_NUM),
    R("memory", memory_s, FE_LF_NUM), R("launch", launch_s, FE_LF_NUM),
    R("spill_regs", spill_regs, FE_LF_I32), R("spill", spill_s, FE_LF_NUM),
};
#undef R

/* The machine file's numbers, by their names there. */
#define M(f, t) {#f, offsetof(fe_machine, f), t}
static const fe_lf_member MACHINE[] = {
    M(l2_bytes, FE_LF_I64), M(memory_bytes, FE_LF_I64), M(l2_bandwidth, FE_LF_NUM),
    M(l3_bandwidth, FE_LF_NUM), M(local_bandwidth, FE_LF_NUM), M(launch_us, FE_LF_NUM),
    M(tile_us, FE_LF_NUM), M(registers, FE_LF_I32), M(reserved_registers, FE_LF_I32),
    M(elements_per_thread, FE_LF_I32), M(link_bandwidth, FE_LF_NUM),
    M(link_latency_us, FE_LF_NUM), M(overlap, FE_LF_BOOL),
};
#undef M

static void push_result(lua_State *L, const fe_sim_group_result *s)
{
    lua_createtable(L, 0, 20);
    fe_lf_members(L, s, RESULT, sizeof RESULT / sizeof RESULT[0]);
}

/* A split argument at idx (or its top-of-stack value for messages): an
 * integer 0..FE_SIM_MAX_SPLIT, 0 the default. */
static int split_value(lua_State *L, int idx, const char *what)
{
    lua_Integer k;
    if (!fe_lf_integer(L, idx, &k) || k < 0 || k > FE_SIM_MAX_SPLIT)
        return luaL_error(L, "%s must be " FE_SIM_SPLIT_RULE " (or 0 / nil for the default), got %s",
                          what, fe_sandbox_describe(L, idx));
    return (int)k;
}

/* The options table at idx: nil, or a table whose only field is split.
 * Anything else is a mistake the policy author should hear about (a typo
 * such as {splt = 4} would otherwise price the default split). Leaves the
 * split value on the stack and returns its type (LUA_TNIL: none). */
static int split_option(lua_State *L, int idx, const char *method)
{
    if (lua_isnoneornil(L, idx)) {
        lua_pushnil(L);
        return LUA_TNIL;
    }
    if (!lua_istable(L, idx))
        return luaL_error(L, "%s: options must be a table such as {split = 4}, got %s", method,
                          fe_sandbox_describe(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "split") != 0)
            return luaL_error(L, "%s: unknown option %s (the only option is split)", method,
                              fe_sandbox_describe(L, -1));
    }
    lua_pushliteral(L, "split");
    return lua_rawget(L, idx);
}

/* Price the group argument at 2 (one kernel at split, or its nodes one
 * kernel each) into *res; a Lua error if the simulator refuses. */
static void price(lua_State *L, const fe_graph *g, const fe_machine *m, int idx, int unfused,
                  int split, fe_sim_group_result *res)
{
    int32_t buf[64], *heap;
    int n = fe_lg_group_arg(L, idx, g, buf, 64, &heap);
    fe_error err = {0};
    int rc = unfused ? fe_sim_unfused(g, m, heap ? heap : buf, n, res, &err)
                     : fe_sim_group(g, m, heap ? heap : buf, n, split, res, &err);
    free(heap);
    if (rc != FE_OK)
        luaL_error(L, "simulate: %s", err.message);
}

int fe_ctx_simulate(lua_State *L, const fe_graph *g, const fe_machine *m, fe_ctx_sim_tally *t)
{
    /* Options first: nothing to free yet if they are wrong. */
    int split = split_option(L, 3, "simulate") == LUA_TNIL ? 0 : split_value(L, -1, "simulate: split");
    fe_sim_group_result res;
    double t0 = fe_clock_s();
    price(L, g, m, 2, 0, split, &res);
    push_result(L, &res);
    t->calls++;
    t->seconds += fe_clock_s() - t0;
    return 1;
}

int fe_ctx_simulate_unfused(lua_State *L, const fe_graph *g, const fe_machine *m,
                            fe_ctx_sim_tally *t)
{
    if (!lua_isnoneornil(L, 3))
        return luaL_error(L, "simulate_unfused takes no options (got %s); each node runs at its "
                          "default split", fe_sandbox_describe(L, 3));
    fe_sim_group_result res;
    double t0 = fe_clock_s();
    price(L, g, m, 2, 1, 0, &res);
    push_result(L, &res);
    t->calls++;
    t->seconds += fe_clock_s() - t0;
    return 1;
}

int fe_ctx_simulate_parts(lua_State *L, const fe_graph *g, const fe_machine *m,
                          fe_ctx_sim_tally *t)
{
    int kind = split_option(L, 3, "simulate_parts");
    int opt = lua_gettop(L), fixed = 0;
    if (kind != LUA_TNIL && kind != LUA_TFUNCTION)
        fixed = split_value(L, opt, "simulate_parts: split (a number or a function(part))");
    /* The parts: group.parts of a group object; a list of nodes is one part. */
    int n;
    if (fe_lg_group_nodes(L, 2, g, &n)) {
        lua_getfield(L, 2, "parts");
    } else {
        lua_createtable(L, 1, 0);
        lua_pushvalue(L, 2);
        lua_rawseti(L, -2, 1);
    }
    int list = lua_gettop(L);
    lua_Integer np = (lua_Integer)lua_rawlen(L, list);
    fe_sim_group_result sum = {.fits = 1}, one;
    for (lua_Integer i = 1; i <= np; i++) {
        lua_rawgeti(L, list, i);
        int part = lua_gettop(L), split = fixed;
        if (kind == LUA_TFUNCTION) {
            lua_pushvalue(L, opt);
            lua_pushvalue(L, part);
            lua_call(L, 1, 1);
            split = lua_isnil(L, -1) ? 0 : split_value(L, -1, "simulate_parts: split(part)");
            lua_pop(L, 1);
        }
        double t0 = fe_clock_s();
        price(L, g, m, part, 0, split, &one);
        t->seconds += fe_clock_s() - t0;
        t->calls++;
        fe_sim_result_add(&sum, &one);
        if (one.split > sum.split)
            sum.split = one.split;
        if (one.split_default > sum.split_default)
            sum.split_default = one.split_default;
        lua_pop(L, 1);
    }
    double t0 = fe_clock_s();
    push_result(L, &sum);
    fe_lf_int(L, "parts", np);
    t->seconds += fe_clock_s() - t0;
    return 1;
}

void fe_ctx_push_machine(lua_State *L, const fe_machine *m)
{
    lua_createtable(L, 0, 20);
    fe_lf_str(L, "name", m->name);
    fe_lf_str(L, "description", m->description);
    fe_lf_members(L, m, MACHINE, sizeof MACHINE / sizeof MACHINE[0]);
    for (int t = 0; t < 2; t++) {
        const double *f = t ? m->vector_flops : m->matrix_flops;
        lua_createtable(L, 0, FE_NDTYPE);
        for (int d = 0; d < FE_NDTYPE; d++)
            if (f[d] > 0)
                fe_lf_num(L, fe_dtype_name(d), f[d]);
        lua_setfield(L, -2, t ? "vector_flops" : "matrix_flops");
    }
}
