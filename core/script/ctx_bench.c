/* ctx_bench.c: measurement on the real CPU kernels for benchmark-driven
 * policies:
 *
 *   ctx:bench(group [, {split = k, kernel = "name"}])
 *
 * times the group as one kernel (its kernel choice and split) and its
 * members one by one, and returns a table: fused, separate (ms, medians),
 * speedup (separate / fused), min, max, spread (of the fused runs, ms),
 * reps, kernel (the choice that ran it), fused_kernel (true when it ran as
 * one kernel; false when the executor had to run it op by op), how, bytes
 * (read once + written once), separate_bytes, cached.
 *
 * Results are cached in the engine per exact key, split and kernel (the
 * exact key covers ops, attributes, edges, dtypes and shapes, so a result
 * holds for any graph). The session (inputs, weights) is made on the first
 * call of a run and fills only what the measured groups read. Measuring
 * takes real time, so a run may spend at most the engine's bench budget
 * in ctx:bench; past it the call returns nil and a message (cached results
 * are still returned), and the policy decides without a measurement. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "choice.h"
#include "ctx_bench.h"
#include "groupkey.h"
#include "lua_fields.h"
#include "lua_graph.h"
#include "sandbox.h"
#include "sim.h"
#include "timing.h"

#define BENCH_CACHE "fuseeng.bench_cache"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The result table from a measurement. */
static void push_result(lua_State *L, const fe_bench_group *b)
{
    lua_createtable(L, 0, 14);
    fe_lf_num(L, "fused", b->fused.median_ms);
    fe_lf_num(L, "separate", b->members_ms);
    fe_lf_num(L, "speedup", b->fused.median_ms > 0 ? b->members_ms / b->fused.median_ms : 0);
    fe_lf_num(L, "min", b->fused.min_ms);
    fe_lf_num(L, "max", b->fused.max_ms);
    fe_lf_num(L, "spread", b->fused.spread_ms);
    fe_lf_int(L, "reps", b->fused.reps);
    const fe_k_choice *c = fe_k_choice_get(b->kernel);
    fe_lf_str(L, "kernel", c ? c->name : "auto");
    fe_lf_bool(L, "fused_kernel", b->is_fused);
    fe_lf_str(L, "how", b->how);
    fe_lf_int(L, "bytes", b->bytes);
    fe_lf_int(L, "separate_bytes", b->members_bytes);
}

/* A shallow copy of the table at idx, so scripts cannot edit the cache. */
static void push_copy(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    lua_createtable(L, 0, 14);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
}

/* The optional {split =, kernel =} table at idx. */
static void bench_opts(lua_State *L, int idx, int *split, int *kernel)
{
    *split = 1;
    *kernel = 0;
    if (lua_isnoneornil(L, idx))
        return;
    luaL_checktype(L, idx, LUA_TTABLE);
    if (lua_getfield(L, idx, "split") != LUA_TNIL) {
        lua_Integer k;
        if (!fe_lf_integer(L, -1, &k) || k < 1 || k > FE_SIM_MAX_SPLIT)
            luaL_error(L, "bench: split must be " FE_SIM_SPLIT_RULE ", got %s",
                       fe_sandbox_describe(L, -1));
        *split = (int)k;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "kernel") != LUA_TNIL) {
        const char *name = lua_tostring(L, -1);
        int id = name && lua_type(L, -1) == LUA_TSTRING ? fe_k_choice_find(name) : -1;
        if (id < 0)
            luaL_error(L, "bench: unknown kernel %s (choices: %s)", fe_sandbox_describe(L, -1),
                       fe_k_choice_names());
        *kernel = id;
    }
    lua_pop(L, 1);
}

/* A group this machine cannot run (a custom op without a kernel, a model
 * too large for its memory) has no measurement: nil and why, as for a spent
 * budget, so that the policy decides what that means. Other failures are
 * errors. */
static int unmeasurable(lua_State *L, const fe_error *err)
{
    if (err->code != FE_EINPUT)
        return luaL_error(L, "bench: %s", err->message);
    lua_pushnil(L);
    lua_pushstring(L, err->message);
    return 2;
}

int fe_ctx_bench(lua_State *L, const fe_graph *g, double budget, double item,
                 fe_ctx_bench_state *st)
{
    int split, kernel;
    bench_opts(L, 3, &split, &kernel);
    int32_t buf[64], *heap;
    int n = fe_lg_group_arg(L, 2, g, buf, 64, &heap);
    const int32_t *nodes = heap ? heap : buf;

    char key[17], slot[64];
    if (fe_group_exact_key(g, nodes, n, key) != FE_OK) {
        free(heap);
        return luaL_error(L, "bench: out of memory");
    }
    snprintf(slot, sizeof slot, "%s/%d/%d", key, split, kernel);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, BENCH_CACHE);
    if (lua_getfield(L, -1, slot) == LUA_TTABLE) {
        free(heap);
        push_copy(L, -1);
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "cached");
        return 1;
    }
    lua_pop(L, 1);

    fe_error err = {0};
    if (budget <= 0)
        budget = 60.0;
    if (st->seconds >= budget) {
        free(heap);
        lua_pushnil(L);
        lua_pushfstring(L, "this run has spent its %f s measuring budget (--bench-budget)",
                        (lua_Number)budget);
        return 2;
    }
    if (!st->exec) {
        fe_exec_opts eo = {.seed = 1, .lazy = 1};
        if (!(st->exec = fe_exec_new(g, &eo, &err))) {
            free(heap);
            return unmeasurable(L, &err);
        }
    }
    fe_bench_opts bo = {.budget_s = item > 0 ? item : 0.05};
    fe_bench_group b;
    double t0 = now_s();
    int rc = fe_bench_group_run(st->exec, nodes, n, split, kernel, &bo, &b, &err);
    st->seconds += now_s() - t0;
    free(heap);
    if (rc != FE_OK)
        return unmeasurable(L, &err);
    push_result(L, &b);
    fe_bench_group_free(&b);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, slot);
    push_copy(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "cached");
    return 1;
}

void fe_ctx_bench_end(fe_ctx_bench_state *st)
{
    fe_exec_free(st->exec);
    st->exec = NULL;
}
