/* exec.h: executing a graph on the CPU: a session owns its inputs and
 * weights (seeded random values, or a model's own from safetensors files),
 * runs the unfused reference (every node with its reference
 * kernel) or a plan (every group as one kernel, group.h), allocating
 * activations by liveness in execution order with buffer reuse, and reports
 * peak memory. The CLI's `run --execute`, `bench`, `profile` and Lua's
 * ctx:bench sit on top of this and timing.h.
 */
#ifndef FE_EXEC_H
#define FE_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "graph.h"
#include "ktensor.h"
#include "plan.h"
#include "safetensors.h"

/* Where a session's plans run: the reference always runs on the CPU. The
 * public fuseeng.h defines the same under the same guard (api_abi.c
 * checks that they agree). */
#ifndef FE_DEVICE_DEFINED
#define FE_DEVICE_DEFINED
enum { FE_DEVICE_CPU = 0, FE_DEVICE_CUDA = 1 };
#endif

typedef struct fe_exec_opts {
    uint64_t seed;         /* random inputs and weights; 0 means 1 */
    double mem_fraction;   /* refuse runs needing more than this fraction of
                              physical memory; 0 means 0.85 */
    int lazy;              /* fill inputs and weights when first needed (a
                              session that benchmarks a few groups of a big
                              model), not in fe_exec_new */
    const fe_st_file *weights;   /* every tensor of kind weight from this file (not owned;
                                    must match the graph, datafiles.h); NULL: random */
    const fe_st_file *inputs;    /* every graph input from this file likewise */
} fe_exec_opts;

typedef struct fe_exec fe_exec;

/* Put g's file in front of err's message unless it is there already: a
 * kernel names the node, the caller adds which run; the reader needs the
 * model file too. */
void fe_exec_name_file(const fe_graph *g, fe_error *err);

/* The tensor a group of nodes[0..n) is a view of, or -1: a group of
 * reshapes reading one tensor of their dtype, which the executor runs as
 * no kernel at all (its outputs are that tensor's memory). */
int32_t fe_exec_view_source(const fe_graph *g, const int32_t *nodes, int n);
/* How such a group runs, in a result's "how" lines and --show-kernels. */
#define FE_EXEC_VIEW_HOW "view: its output is its input's memory (no kernel, no copy)"

/* FE_OK if every node of g has a kernel; else FE_EINPUT naming the first
 * node that cannot run (custom ops: by their aten attr), so a command can
 * refuse before it allocates anything. Groups without such nodes can still
 * be run and benchmarked in a session of that graph. */
int fe_exec_executable(const fe_graph *g, fe_error *err);

/* A session for graph g (not owned; must outlive the session). Checks up
 * front that inputs, weights and the reference run's activation peak fit
 * in memory (FE_EINPUT naming the sizes otherwise), then allocates and
 * fills inputs and weights: floats uniform in [-1, 1], except matmul and
 * conv weights in [-1/sqrt(fan_in), 1/sqrt(fan_in)] as PyTorch initialises
 * them (activations keep their scale through deep models) and batch_norm
 * running variances in [0.5, 1.5] so they stay valid; bools true with probability
 * 3/4, integers in the range that keeps every index they reach valid
 * (gather / embedding and exported index.Tensor and gather, followed back
 * through every op: ranges.h), else in [0, 16); an integer input or weight
 * that reaches an index through a node whose values cannot be followed
 * back is FE_EINPUT naming it, unless a file gives its values. Values
 * depend only on the seed and the tensor's name.
 * With opts->weights or opts->inputs, those tensors hold the file's values
 * instead; a file that does not match g is FE_EINPUT naming the file and
 * the tensor (checked here, lazy or not). Caller frees with fe_exec_free. */
fe_exec *fe_exec_new(const fe_graph *g, const fe_exec_opts *opts, fe_error *err);
void fe_exec_free(fe_exec *ex);
const fe_graph *fe_exec_graph(const fe_exec *ex);

/* What a run produced. Outputs are the graph outputs in g->outputs order,
 * owned by the result. */
typedef struct fe_exec_result {
    int noutputs;
    int32_t *tensors;          /* graph output tensor ids */
    fe_k_tensor *outputs;      /* their values */
    int64_t static_bytes;      /* inputs and weights */
    int64_t peak_bytes;        /* peak of live activations (incl. group temporaries) */
    int64_t pool_bytes;        /* peak of activation memory held (live + reusable) */
    double ms;                 /* wall time of the kernels */
    int ngroups;               /* plan runs: one line per group, how it ran, */
    char **how;
    double *group_ms;          /* and its wall time */
    int nfused;                /* groups that ran as one kernel */
} fe_exec_result;

void fe_exec_result_free(fe_exec_result *r);

/* Run every node with its reference kernel, in topological order. Returns
 * FE_OK with *out set (caller frees), or the failing node's error. */
int fe_exec_reference(fe_exec *ex, fe_exec_result **out, fe_error *err);

/* Another device's plan runner (gpu_exec.h): once set, fe_exec_plan and
 * fe_exec_plan_time hand plans to it, statics filled, with the same
 * contract; the reference stays on the CPU. state is the runner's, freed
 * with free_state when the session is. */
typedef int (*fe_exec_runner)(fe_exec *ex, void *state, const fe_plan *p, fe_exec_result **out,
                              double *ms, double *group_ms, fe_error *err);
void fe_exec_set_runner(fe_exec *ex, fe_exec_runner run, void *state, void (*free_state)(void *));
/* The state of runner run when it is the session's, else NULL (a device
 * finding its own session state). */
void *fe_exec_runner_state(const fe_exec *ex, fe_exec_runner run);

/* Run plan p (made for the session's graph), each group compiled with its
 * kernel choice and split. */
int fe_exec_plan(fe_exec *ex, const fe_plan *p, fe_exec_result **out, fe_error *err);

/* Run plan p for its times only: the kernels' wall time into *ms and each
 * group's into group_ms[0..p->ngroups) (may be NULL). The outputs stay in
 * the session's buffer pool, so repeated calls reuse memory (benchmarks). */
int fe_exec_plan_time(fe_exec *ex, const fe_plan *p, double *ms, double *group_ms, fe_error *err);

/* The peak of live activation bytes of the session's last run (timed or not). */
int64_t fe_exec_last_peak(const fe_exec *ex);

/* Bytes a run of plan p (NULL: the reference) needs beyond inputs and
 * weights, by liveness, plus the largest kernel scratch (packing, float
 * copies). A plan's group is counted as if its internal tensors were
 * materialised: an upper bound for fused groups. */
int64_t fe_exec_need_bytes(const fe_exec *ex, const fe_plan *p);

/* The buffer table of the session, indexed by tensor id: inputs and weights
 * always hold data; fe_exec_fill fills any other tensor with random values
 * by the same rules (benchmarks of a group in the middle of a graph), and
 * an input or weight with its file's values when the session has one. The
 * table is owned by the session. */
fe_k_tensor *fe_exec_buffers(fe_exec *ex);
int fe_exec_fill(fe_exec *ex, int32_t t, fe_error *err);
/* Allocate (uninitialised) or free the session buffer of an activation. */
int fe_exec_alloc(fe_exec *ex, int32_t t, fe_error *err);
void fe_exec_release(fe_exec *ex, int32_t t);

/* Physical memory of the machine and what is available now (sysconf). */
void fe_exec_machine_memory(int64_t *total, int64_t *avail);

#endif
