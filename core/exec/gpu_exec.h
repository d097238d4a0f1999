/* gpu_exec.h: a session's plans run on the GPU (fe_gpu_exec_attach): the
 * executor's plan runs and timed runs come here, the
 * unfused reference stays on the CPU, so every --execute compares the
 * card's numbers with the CPU's reference kernels.
 *
 * Note on memory. A session copies its inputs and weights to the card once.
 * A plan is compiled once per session (its groups, cuda_group.h) and gets
 * one arena for every activation that crosses groups: offsets planned by
 * liveness in execution order (a tensor's bytes are reused once its last
 * reader has run), allocated when the plan is compiled, never per launch.
 * Views alias their source, as on the CPU.
 *
 * Note on timing. Times are CUDA events around each group and the plan,
 * after the plan has run once (compilation, module loading and first-touch
 * costs are not counted). A run is launched one kernel at a time from the
 * host, unless the session replays graphs (fe_gpu_exec_graphs): then the
 * plan's launches are captured once into a CUDA graph and each timed run
 * is one graph launch, as PyTorch's CUDA-graph modes do; a graph has no
 * per-group times, and a plan with a step on the host cannot be captured.
 */
#ifndef FE_GPU_EXEC_H
#define FE_GPU_EXEC_H

#include "exec.h"
#include "timing.h"

/* Make session ex run its plans on the GPU (fe_exec_set_runner): FE_OK,
 * or FE_EINPUT naming what is missing (driver, NVRTC, a GPU). */
int fe_gpu_exec_attach(fe_exec *ex, fe_error *err);

/* 1 when ex runs its plans on the GPU. */
int fe_gpu_exec_is(const fe_exec *ex);

/* Timed plan runs (fe_exec_plan_time) replay CUDA graphs when on; runs
 * with outputs never do. 0 when ex does not run on the GPU. */
int fe_gpu_exec_graphs(fe_exec *ex, int on);
/* Whether plan p can be replayed as a graph: compiles, runs and captures
 * it once; FE_OK with why[] empty when it can, else naming the group that
 * cannot be captured. */
int fe_gpu_exec_capturable(fe_exec *ex, const fe_plan *p, char *why, size_t n, fe_error *err);

/* base against plan end to end, both replayed as CUDA graphs in paired
 * rounds (fe_paired_versus with graphs on). FE_OK with why[] empty when
 * they ran, else why[] names the plan that cannot be captured. */
int fe_gpu_exec_versus_graphs(fe_exec *ex, const fe_plan *base, const fe_plan *plan, double budget,
                              fe_bench_stats *base_st, fe_bench_stats *plan_st, double v[3],
                              char *why, size_t n, fe_error *err);

/* Single groups timed alone on the card (timing.c: bench, profile,
 * ctx:bench). Every tensor a timed group reads or writes gets a device
 * buffer of the session's bench set: fe_gpu_tensor (fill: the session's
 * values for t, made on the host and copied; inputs and weights always
 * hold theirs), all freed by fe_gpu_release. */
typedef struct fe_gpu_group fe_gpu_group;
typedef struct fe_gpu_kinfo {
    int kernels, host_steps;
    int regs;                 /* the most registers a thread of its kernels uses */
    int spill_bytes;          /* the most local (spill) bytes a thread */
    int blocks_per_sm;        /* the fewest resident blocks a multiprocessor */
} fe_gpu_kinfo;

int fe_gpu_tensor(fe_exec *ex, int32_t t, int fill, fe_error *err);
void fe_gpu_release(fe_exec *ex);
/* The group compiled for the card; free with fe_gpu_group_free. */
fe_gpu_group *fe_gpu_group_new(fe_exec *ex, const int32_t *nodes, int n, fe_error *err);
void fe_gpu_group_free(fe_gpu_group *b);
const char *fe_gpu_group_how(const fe_gpu_group *b);
int fe_gpu_group_is_fused(const fe_gpu_group *b);
int fe_gpu_group_inputs(const fe_gpu_group *b, const int32_t **ids);
int fe_gpu_group_outputs(const fe_gpu_group *b, const int32_t **ids);
void fe_gpu_group_kernels(const fe_gpu_group *b, fe_gpu_kinfo *ki);
/* One run on the bench set's buffers; *ms its time by CUDA events. */
int fe_gpu_group_time(fe_gpu_group *b, double *ms, fe_error *err);

#endif
