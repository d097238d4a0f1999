/* ctx_bench.h: ctx:bench, measurement on the CPU kernels (ctx_bench.c);
 * ctx.c makes the method. */
#ifndef FE_CTX_BENCH_H
#define FE_CTX_BENCH_H

#include <lua.h>

#include "datafiles.h"
#include "exec.h"
#include "machine.h"

/* How often the simulator agrees with measured times that fusing a group
 * is faster (ctx:bench's measurements, ctx.profile:lookup's profile). */
typedef struct fe_sim_agreement {
    int64_t compared;   /* groups with both times, priced by the simulator too */
    int64_t agreed;     /* of those, where both say the same: fused faster or not */
    char disagree[4][200];   /* the first disagreements, "ops: measured ..., simulated ..." */
} fe_sim_agreement;

/* The simulator's verdict on nodes[0..n) fused (split) and apart on m,
 * beside measured separate_ms and fused_ms: sim_fused and sim_separate
 * (ms) and sim_speedup set in the table on top of L's stack, and counted
 * in a. Nothing when either price fails or a time is not positive. */
void fe_ctx_sim_verdict(lua_State *L, const fe_graph *g, const fe_machine *m, const int32_t *nodes,
                        int n, int split, double separate_ms, double fused_ms,
                        fe_sim_agreement *a);

/* What ctx:bench keeps for one run: its session (inputs and weights of
 * the run's graph, made on the first call) and the time it spent. */
typedef struct fe_ctx_bench_state {
    fe_exec *exec;
    fe_df_files files;  /* the session's weights and inputs files, if any */
    double seconds;
    double cpu_seconds; /* process CPU time of the measuring (every core) */
    int64_t measured;   /* items timed (fused groups and single ops) */
    int64_t cached;     /* calls answered from the kernel cache */
    int64_t refused;    /* calls refused: the budget was spent */
    fe_sim_agreement agree;   /* its measurements against the simulator */
} fe_ctx_bench_state;

/* What one ctx:bench call may spend. */
typedef struct fe_ctx_bench_limits {
    double budget;      /* seconds per run (0: 60) */
    double item;        /* seconds of repetitions per measured item at most (0: 0.05) */
    int64_t pending;    /* candidates the driver has still to decide, this one included
                           (0: unknown); the budget left is shared among them */
    const char *weights, *inputs;   /* safetensors files the session fills from (NULL: random) */
    int device;                     /* FE_DEVICE_*: the CPU's kernels or the GPU's */
    const fe_machine *machine;      /* the run's simulated machine: its verdict beside */
} fe_ctx_bench_limits;

/* ctx:bench(group [, {split = n, kernel = "name"}]) on g within lim:
 * pushes the result table, or nil, why and what kind of refusal ("budget":
 * the run's budget is spent; "unmeasurable": a group this machine cannot
 * run); other failures are Lua errors. */
int fe_ctx_bench(lua_State *L, const fe_graph *g, const fe_ctx_bench_limits *lim,
                 fe_ctx_bench_state *st);

/* Free st's session (the run is over). */
void fe_ctx_bench_end(fe_ctx_bench_state *st);

#endif
