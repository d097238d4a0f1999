/* measure.h: timing a plan's groups and nodes on a device's kernels
 * (fe_plan_time: fuseeng bench and profile). */
#ifndef FE_MEASURE_H
#define FE_MEASURE_H

#include "datafiles.h"
#include "exec.h"
#include "plan.h"
#include "group_timing.h"

typedef struct fe_measure_opts {
    uint64_t seed;        /* 0 means 1 */
    double budget;        /* seconds of repetitions per item; 0 means 0.2 */
    int totals;           /* also time the plan and the unfused plan end to end */
    const char *weights;  /* safetensors files of weights and of inputs (datafiles.h); */
    const char *inputs;   /*   NULL: seeded random values */
    int device;           /* FE_DEVICE_*: where groups, ops and totals run (CPU) */
} fe_measure_opts;

typedef struct fe_measured {
    fe_exec *ex;
    fe_df_files files;               /* what opts named, open while ex runs */
    int ngroups;
    fe_bench_group *groups;          /* per plan group: fused, and each member alone */
    fe_bench_stats *node_ms;         /* per node: alone (from its group's members) */
    int64_t *node_bytes;             /* per node: its tensors read + written once */
    int timed_totals;
    int interrupted;                /* Ctrl-C: groups [0, ngroups) were measured, no totals */
    fe_bench_stats plan_st, unfused_st;   /* over rounds that ran both interleaved */
    double speedup, lo, hi;               /* median of the rounds' unfused / plan, 95% interval */
    int device;                           /* FE_DEVICE_* it ran on */
    int timed_graphs;                     /* on the GPU: both replayed as CUDA graphs, */
    fe_bench_stats graph_plan_st, graph_unfused_st;
    double graph_speedup, graph_lo, graph_hi;
    char graph_why[240];                  /* else why not ("" when not tried) */
} fe_measured;

/* Time every group of plan (fused with its kernel choice and split, and
 * member by member) and, with o->totals, the plan and the unfused plan end
 * to end; on the GPU the totals again with both replayed as CUDA graphs
 * when both can be. FE_OK, or an error with nothing left to free. A progress line
 * goes to stderr when it is a terminal. */
int fe_measure_plan(const fe_plan *plan, const fe_measure_opts *o, fe_measured *m,
                   fe_error *err);
void fe_measured_free(fe_measured *m);

/* "2 threads, passive waits": how the kernels run here (the thread count
 * and OMP_WAIT_POLICY); static storage. The public fe_threads. */
const char *fe_exec_threads(void);

#endif
