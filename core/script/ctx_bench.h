/* ctx_bench.h: ctx:bench, measurement on the CPU kernels (ctx_bench.c);
 * ctx.c makes the method. */
#ifndef FE_CTX_BENCH_H
#define FE_CTX_BENCH_H

#include <lua.h>

#include "exec.h"

/* What ctx:bench keeps for one run: its session (inputs and weights of
 * the run's graph, made on the first call) and the time it spent. */
typedef struct fe_ctx_bench_state {
    fe_exec *exec;
    double seconds;
    int64_t measured;   /* items timed (fused groups and single ops) */
    int64_t cached;     /* calls answered from the kernel cache */
    int64_t refused;    /* calls refused: the budget was spent */
} fe_ctx_bench_state;

/* ctx:bench(group [, {split = k, kernel = "name"}]) on g, spending at most
 * budget seconds per run (0: 60), item seconds of repetitions per measured
 * item (0: 0.05): pushes the result table, or nil and why (no budget
 * left, a group this machine cannot run); other failures are Lua errors. */
int fe_ctx_bench(lua_State *L, const fe_graph *g, double budget, double item,
                 fe_ctx_bench_state *st);

/* Free st's session (the run is over). */
void fe_ctx_bench_end(fe_ctx_bench_state *st);

#endif
