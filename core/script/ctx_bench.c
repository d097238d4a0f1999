/* ctx_bench.c: measurement on real kernels (the CPU's, or the GPU's with
 * the engine's bench device) for benchmark-driven policies:
 *
 *   ctx:bench(group [, {split = n, kernel = "name"}])
 *
 * times the group as one kernel (its kernel choice and split) and its
 * members one by one, and returns a table: fused, separate (ms, medians),
 * speedup (separate / fused), min, max, spread (of the fused runs, ms),
 * reps, kernel (the choice that ran it), fused_kernel (true when it ran as
 * one kernel; false when the executor had to run it op by op), how, bytes
 * (read once + written once), separate_bytes, cached, members_cached,
 * device ("cpu" or "cuda": the engine's bench device, `--device`), and on
 * the GPU what its compiler and driver report of the fused group's
 * kernels: registers (the most a thread), spill_bytes (local bytes a
 * thread: spills), blocks_per_sm (the fewest resident), cuda_kernels and
 * host_steps (ops it ran on the host).
 *
 * Note on the kernel cache and the budget (seed 000's kernel cache,
 * InfiniCore's exact keys). Real graphs repeat: every layer of a
 * transformer offers the same candidates. So
 *
 *   - every result is cached in the engine by the group's exact key,
 *     split and kernel (the key covers ops, attributes, edges, dtypes and
 *     shapes, so a result holds for any graph): a group measured once is
 *     never measured again; cached = true says a result came from there;
 *   - the members timed alone are cached too, each under the key of its
 *     group of one: an op alone is timed once however many candidates hold
 *     it (a 7B layer's matmul is not re-timed for each of its epilogues);
 *     members_cached counts the members a result took from there.
 *
 * Measuring takes real time, so a run spends at most the engine's bench
 * budget (--bench-budget). A candidate gets a share of what is left: the
 * budget left divided by the candidates the driver has still to decide
 * (fe_run.pending; the greedy driver counts its sorted list, stale pairs
 * included, which keeps a reserve for later rounds), split over the items
 * it still has to time (the group, and its members not in the cache), at
 * most 50 ms of repetitions each. The minimum repetitions rule
 * (fe_bench_opts.bounded): three timed calls after a warm-up; one timed
 * call after it when three would outlast the item's share; and when the
 * first call alone outlasts it, that call is the measurement. So every
 * item costs at least one call. Candidates are measured in the driver's
 * order (for the greedy driver, most memory saved first: the largest
 * expected benefits while the budget is fullest). Past the budget a call
 * returns nil, a message and "budget" (cached results are still
 * returned), and the policy decides without a measurement
 * (benchmark_fusion asks the simulator); a group this machine cannot run
 * gives nil, why and "unmeasurable". The session (inputs, weights) is made
 * on the first call of a run and fills only what the measured groups
 * read. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "clock.h"
#include "ctx_bench.h"
#include "gpu_exec.h"
#include "groupkey.h"
#include "lua_fields.h"
#include "lua_graph.h"
#include "sandbox.h"
#include "sim.h"
#include "group_timing.h"

#define BENCH_CACHE "fuseeng.bench_cache"

/* The result table from a measurement. */
static void push_result(lua_State *L, const fe_bench_group *b)
{
    lua_createtable(L, 0, 14);
    fe_lf_num(L, "fused", b->fused.median_ms);
    fe_lf_num(L, "separate", b->members_ms);
    /* only a group of views costs nothing, and so do its members: neither
     * way is faster */
    fe_lf_num(L, "speedup", b->fused.median_ms > 0 ? b->members_ms / b->fused.median_ms : 1);
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
    fe_lf_str(L, "device", b->device == FE_DEVICE_CUDA ? "cuda" : "cpu");
    if (b->device == FE_DEVICE_CUDA) {   /* what the card's compiler and driver report */
        fe_lf_int(L, "registers", b->regs);
        fe_lf_int(L, "spill_bytes", b->spill_bytes);
        fe_lf_int(L, "blocks_per_sm", b->blocks_per_sm);
        fe_lf_int(L, "cuda_kernels", b->kernels);
        fe_lf_int(L, "host_steps", b->host_steps);
    }
}

void fe_ctx_sim_verdict(lua_State *L, const fe_graph *g, const fe_machine *m, const int32_t *nodes,
                        int n, int split, double separate_ms, double fused_ms,
                        fe_sim_agreement *a)
{
    fe_sim_group_result f, s;
    fe_error err = {0};
    if (!m || separate_ms <= 0 || fused_ms <= 0 ||
        fe_sim_group(g, m, nodes, n, split, &f, &err) != FE_OK ||
        fe_sim_unfused(g, m, nodes, n, &s, &err) != FE_OK || f.time_s <= 0)
        return;
    double sim = s.time_s / f.time_s, meas = separate_ms / fused_ms;
    fe_lf_num(L, "sim_fused", f.time_s * 1e3);
    fe_lf_num(L, "sim_separate", s.time_s * 1e3);
    fe_lf_num(L, "sim_speedup", sim);
    a->compared++;
    if ((sim > 1) == (meas > 1)) {
        a->agreed++;
        return;
    }
    for (int i = 0; i < 4; i++)
        if (!a->disagree[i][0]) {
            char ops[120];
            fe_sim_group_label(g, nodes, n, ops, sizeof ops);
            snprintf(a->disagree[i], sizeof a->disagree[i], "%s: measured %.2fx, simulated %.2fx",
                     ops, meas, sim);
            break;
        }
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
/* nil, why and the kind of refusal. */
static int refuse(lua_State *L, const char *kind, const char *why)
{
    lua_pushnil(L);
    lua_pushstring(L, why);
    lua_pushstring(L, kind);
    return 3;
}

static int unmeasurable(lua_State *L, const fe_error *err)
{
    if (err->code != FE_EINPUT)
        return luaL_error(L, "bench: %s", err->message);
    return refuse(L, "unmeasurable", err->message);
}

/* A member's time alone from the cache (the slot of its group of one at
 * split 1, auto kernel), or -1. */
static double cached_single(lua_State *L, int cache, const fe_graph *g, int32_t node)
{
    char key[17], slot[64];
    double ms = -1;
    if (fe_group_exact_key(g, &node, 1, key) != FE_OK)
        return -1;
    snprintf(slot, sizeof slot, "%s/1/0", key);
    if (lua_getfield(L, cache, slot) == LUA_TTABLE && lua_getfield(L, -1, "fused") == LUA_TNUMBER)
        ms = lua_tonumber(L, -1);
    lua_settop(L, cache);
    return ms;
}

/* Cache member i of b, timed alone just now, as its group of one. */
static void cache_single(lua_State *L, int cache, const fe_graph *g, const fe_bench_group *b,
                         int i)
{
    char key[17], slot[64];
    if (fe_group_exact_key(g, &b->nodes[i], 1, key) != FE_OK)
        return;
    snprintf(slot, sizeof slot, "%s/1/0", key);
    fe_bench_group one = {.fused = b->members[i], .kernel = 0, .is_fused = 1, .n = 1,
                          .members_ms = b->members[i].median_ms, .bytes = b->member_bytes[i],
                          .members_bytes = b->member_bytes[i]};
    push_result(L, &one);
    lua_setfield(L, cache, slot);
}

int fe_ctx_bench(lua_State *L, const fe_graph *g, const fe_ctx_bench_limits *lim,
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
    int cache = lua_gettop(L);
    if (lua_getfield(L, cache, slot) == LUA_TTABLE) {
        free(heap);
        st->cached++;
        push_copy(L, -1);
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "cached");
        return 1;
    }
    lua_pop(L, 1);

    double budget = lim->budget > 0 ? lim->budget : 60.0, left = budget - st->seconds;
    if (left <= 0) {
        free(heap);
        st->refused++;
        lua_pushfstring(L, "this run has spent its %f s measuring budget (--bench-budget)",
                        (lua_Number)budget);
        return refuse(L, "budget", lua_tostring(L, -1));
    }
    /* Members timed before (alone, or in another candidate) are not timed
     * again: the kernel cache holds single ops under their own keys. */
    double *known = malloc((size_t)n * sizeof *known);
    if (!known) {
        free(heap);
        return luaL_error(L, "bench: out of memory");
    }
    int items = 1;
    for (int i = 0; i < n; i++) {
        known[i] = n > 1 ? cached_single(L, cache, g, nodes[i]) : -1;
        items += n > 1 && known[i] < 0;
    }
    int nknown = n > 1 ? n + 1 - items : 0;
    fe_error err = {0};
    if (!st->exec) {
        fe_exec_opts eo = {.seed = 1, .lazy = 1};
        /* Files that do not fit the graph are the caller's error, not the
         * group's: the run stops (the CLI checks them before planning). */
        if (fe_df_open(&st->files, g, lim->weights, lim->inputs, NULL, &err) != FE_OK) {
            free(heap);
            free(known);
            return luaL_error(L, "bench: %s", err.message);
        }
        eo.weights = st->files.weights;
        eo.inputs = st->files.inputs;
        if (!(st->exec = fe_exec_new(g, &eo, &err))) {
            fe_df_close(&st->files);
            free(heap);
            free(known);
            return unmeasurable(L, &err);
        }
        /* a GPU asked for and missing stops the run: it is the caller's
         * setting, not a property of one group */
        if (lim->device == FE_DEVICE_CUDA && fe_gpu_exec_attach(st->exec, &err) != FE_OK) {
            fe_ctx_bench_end(st);
            free(heap);
            free(known);
            return luaL_error(L, "bench: %s", err.message);
        }
    }
    /* This candidate's share of what is left, split over its items; a
     * call longer than its item's share is timed once (bounded). */
    double share = left / (double)(lim->pending > 1 ? lim->pending : 1);
    double per_item = share / items, item = lim->item > 0 ? lim->item : 0.05;
    fe_bench_opts bo = {.budget_s = per_item < item ? (per_item > 1e-3 ? per_item : 1e-3) : item,
                        .bounded = 1, .known_ms = known};
    fe_bench_group b;
    double t0 = fe_clock_s(), c0 = fe_clock_cpu_s();
    int rc = fe_bench_group_run(st->exec, nodes, n, split, kernel, &bo, &b, &err);
    st->seconds += fe_clock_s() - t0;
    st->cpu_seconds += fe_clock_cpu_s() - c0;
    free(heap);
    free(known);
    if (rc != FE_OK)
        return unmeasurable(L, &err);
    st->measured += items;
    for (int i = 0; n > 1 && i < n; i++)
        if (b.members[i].reps > 0)
            cache_single(L, cache, g, &b, i);
    push_result(L, &b);
    if (n > 1 && lim->machine)
        fe_ctx_sim_verdict(L, g, lim->machine, nodes, n, split, b.members_ms, b.fused.median_ms,
                           &st->agree);
    fe_bench_group_free(&b);
    lua_pushvalue(L, -1);
    lua_setfield(L, cache, slot);
    push_copy(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "cached");
    fe_lf_int(L, "members_cached", nknown);
    return 1;
}

void fe_ctx_bench_end(fe_ctx_bench_state *st)
{
    fe_exec_free(st->exec);
    st->exec = NULL;
    fe_df_close(&st->files);
}
