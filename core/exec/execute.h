/* execute.h: a plan run on the CPU kernels against the unfused reference
 * (fe_plan_execute, fuseeng run --execute): numeric agreement and times. */
#ifndef FE_EXECUTE_H
#define FE_EXECUTE_H

#include <stdio.h>

#include "compare.h"
#include "datafiles.h"
#include "exec.h"
#include "jsonw.h"
#include "plan.h"
#include "timing.h"

/* Fewer paired rounds than this give no interval worth the name. */
#define FE_EXEC_FEW_ROUNDS 5

typedef struct fe_execution_opts {
    uint64_t seed;        /* 0 means 1 */
    double budget;        /* seconds of timed runs per measurement; 0 means 0.5 */
    int no_timing;        /* check numbers only */
    double rtol;          /* one tolerance for every output; 0 means each dtype's */
    const char *weights;  /* safetensors files of weights and of inputs (datafiles.h); */
    const char *inputs;   /*   NULL: seeded random values */
    const char *expect;   /* safetensors file of outputs both runs are compared with */
    double expect_rtol;   /* its tolerance; 0 means fe_cmp_rtol_expect per output */
    int device;           /* FE_DEVICE_*: where the plan (and the timed unfused plan) run */
} fe_execution_opts;

typedef struct fe_execution {
    uint64_t seed;
    int device;                    /* FE_DEVICE_*: where the plan and the timed unfused plan ran */
    fe_exec *ex;
    fe_df_files files;             /* what opts named, open while ex runs */
    fe_exec_result *ref, *got;     /* the reference's and the plan's first runs */
    fe_cmp cmp;
    int have_cmp;
    fe_cmp expect_got, expect_ref; /* the plan's and the reference's outputs against the */
    int have_expect;               /* expected ones (files.expect) */
    double expect_rtol;
    int timed;
    fe_bench_stats plan_st, base_st;   /* the plan, and every node as its own kernel, over
                                        * rounds that ran them interleaved (paired.h) */
    double speedup, lo, hi;        /* median of the rounds' unfused / plan, its 95% interval */
    double *group_ms;              /* median per plan group, over the same rounds */
    double library_ms;             /* the unfused plan's time in library ops (matmul, conv2d,
                                    * sdpa: FE_OPF_LIBRARY), which a plan runs on the same
                                    * kernels: sum of their medians over the same rounds */
    int64_t base_peak;             /* activations at peak, unfused plan */
    int timed_graphs;              /* on the GPU: both also replayed as CUDA graphs */
    fe_bench_stats graph_plan_st, graph_base_st;
    double graph_speedup, graph_lo, graph_hi;
    char graph_why[240];           /* else why not ("" when not tried) */
    int rounds;                    /* rounds that ran; under FE_EXEC_FEW_ROUNDS the interval
                                    * is no 95% interval (paired.h: a slow pass) */
    int plan_from_check;           /* the one round's plan sample is its correctness run
                                    * (paired.h: a pass too long to run again) */
    double check_ms;               /* the correctness pass's kernel time, reference + plan */
    int64_t peak_rss;              /* the process's peak resident bytes (getrusage) */
    int64_t floor_bytes;           /* what the model must hold: its inputs and weights plus
                                    * the unfused reference's activations at peak, each
                                    * tensor in its own dtype */
} fe_execution;

/* The most any plan on these kernels can gain over unfused if every op but
 * the library ops took no time (Amdahl's bound): unfused / library_ms, 0
 * when untimed or the model has none. */
double fe_execution_ceiling(const fe_execution *x);

/* Execute plan and its reference on seeded inputs, compare, and time them.
 * FE_OK whether or not the numbers agree (see fe_execution_check); an
 * error (a node without a kernel, memory) leaves nothing to free. */
int fe_execute_plan(const fe_plan *plan, const fe_execution_opts *o, fe_execution *x, fe_error *err);
void fe_execution_free(fe_execution *x);

/* FE_OK if every output is within tolerance (of the reference, and of the
 * expected outputs if given), else FE_ECHECK (exit 1) with a message naming
 * the first bad output and its worst element. */
int fe_execution_check(const fe_plan *plan, const fe_execution *x, fe_error *err);

/* The report as text lines, or as one JSON object. */
void fe_execution_text(const fe_plan *plan, const fe_execution *x, FILE *f);
void fe_execution_json(const fe_plan *plan, const fe_execution *x, fe_jw *w);

/* {"median_ms", "min_ms", "max_ms", "spread_ms", "reps"} under key. */
void fe_bench_stats_json(fe_jw *w, const char *key, const fe_bench_stats *s);

#endif
