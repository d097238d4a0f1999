/* group_timing.h: a group of a session's graph timed as one kernel and
 * member by member, on the session's device: the CPU's kernels, or the
 * GPU's for a session attached there (gpu_exec.h). `fuseeng bench`,
 * `fuseeng profile` and ctx:bench(group) are built on it.
 */
#ifndef FE_GROUP_TIMING_H
#define FE_GROUP_TIMING_H

#include "exec.h"
#include "timing.h"

/* A group timed as one kernel and member by member, on the session's
 * device (the CPU, or the GPU for a session attached there: gpu_exec.h). */
typedef struct fe_bench_group {
    fe_bench_stats fused;      /* the group with its kernel choice and split */
    int kernel;                /* the choice that ran it (choice.h); 0 (auto) on the GPU */
    int device;                /* FE_DEVICE_* it ran on; on the GPU, its kernels': */
    int kernels, regs, spill_bytes, blocks_per_sm, host_steps;   /* gpu_exec.h fe_gpu_kinfo */
    int is_fused;              /* it ran as one kernel (else op by op: see how) */
    char how[2048];
    int n;
    int32_t *nodes;            /* members, topological order (owned) */
    fe_bench_stats *members;   /* each member alone, its own best kernel (owned) */
    double members_ms;         /* sum of the members' medians */
    int64_t bytes;             /* external inputs read once + outputs written once */
    int64_t members_bytes;     /* the same summed over the members run alone */
    int64_t *member_bytes;     /* each member's (owned) */
} fe_bench_group;

/* Time the group of nodes[0..n) in session ex (on its device; the GPU
 * ignores split and kernel, which are CPU choices): external inputs that are not
 * graph inputs or weights get random values (exec.h rules); members are
 * timed on the intermediates the group itself computes (a group of one is
 * timed once: its member time is its fused time). A member whose time
 * opts->known_ms gives is not run: its outputs get random values instead. Buffers it needed
 * are released before return. Free the result with fe_bench_group_free. */
int fe_bench_group_run(fe_exec *ex, const int32_t *nodes, int n, int split, int kernel,
                       const fe_bench_opts *opts, fe_bench_group *out, fe_error *err);
void fe_bench_group_free(fe_bench_group *b);

/* Time one node alone (a group of one, auto kernel). */
int fe_bench_node(fe_exec *ex, int32_t node, const fe_bench_opts *opts, fe_bench_stats *st,
                  fe_error *err);

#endif
