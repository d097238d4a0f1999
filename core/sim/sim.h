/* sim.h: the GCU simulator, a deterministic cost model of an accelerator
 * with a small fast L2 and a large slow L3 (device memory), described by a
 * machine file (machine.h). sim.c opens with the model, its formulas and its
 * limits; docs/simulator.md repeats them for users.
 *
 * Two entry points: fe_sim_group prices one candidate group from a node
 * list (cheap, allocation-free for small groups: policies call it in
 * loops), fe_sim_plan prices a whole plan and adds what only a schedule
 * has (start times, device-memory liveness). The writers for tables and
 * JSON are in sim_report.c, the Perfetto trace in trace.c.
 */
#ifndef FE_SIM_H
#define FE_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "graph.h"
#include "jsonw.h"
#include "launch.h"
#include "machine.h"
#include "plan.h"

/* The price of one group run as one kernel. Bytes are exact integers;
 * times are seconds. */
typedef struct fe_sim_group_result {
    int32_t nodes;              /* members */
    int32_t split;              /* tiles it ran in (>= 1) */
    int32_t split_default;      /* the split the simulator would choose */
    int32_t regs;               /* estimated registers per thread */
    int32_t spill_regs;         /* regs above the machine's limit */
    int8_t fits;                /* l2_peak <= L2: intermediates stay on chip */
    int8_t collective;          /* holds an all_reduce */
    int8_t launch;              /* fe_launch: a generated kernel, an extern library call,
                                   or nothing (a view group: every figure is zero) */

    int64_t flops;
    int64_t l3_read, l3_write;  /* device-memory traffic */
    int64_t l3_bytes;           /* l3_read + l3_write */
    int64_t reread_bytes;       /* part of l3_read: untiled operands read again per tile */
    int64_t overflow_bytes;     /* part of l3_bytes: intermediates written and read back
                                   because a tile did not fit L2 */
    int64_t intermediate_bytes; /* tensors produced and consumed only inside */
    int64_t l2_traffic;         /* on-chip traffic: every member's reads and writes, and
                                   the rereads ("l2_bytes" in reports and ctx:simulate,
                                   a name their formats keep: in the engine's code
                                   l2_bytes is the machine's L2 capacity) */
    int64_t working_set;        /* seed 004's memory peak: whole buffers, live in topo order */
    int64_t l2_peak;            /* the same per tile, with the split applied: what a tile
                                   needs on chip (fits = l2_peak <= L2) */
    int64_t l2_occupancy;       /* what the kernel holds in the L2: l2_peak, at most the L2
                                   (a tile that needs more streams or overflows the rest) */
    int64_t spill_bytes;        /* register-spill traffic to local memory */
    int64_t collective_bytes;   /* bytes each rank sends in its all_reduce rings */

    double time_s;              /* launch + tiles + collective + body */
    double launch_s, tile_s, collective_s;
    double compute_s;           /* FLOPs at the machine's peak per op and dtype */
    double memory_s;            /* l3_s + l2_s + spill_s */
    double l3_s, l2_s, spill_s;
} fe_sim_group_result;

/* The split limit is the plan's (FE_PLAN_MAX_SPLIT, plan.h); these names
 * stay for callers in core/script until they use the plan's. */
#define FE_SIM_MAX_SPLIT FE_PLAN_MAX_SPLIT
#define FE_SIM_SPLIT_RULE FE_PLAN_SPLIT_RULE

/* Price nodes[0..n) (node ids of g, any order, no duplicates) as one kernel
 * tiled split ways (0 = the simulator's default split). Needs no legality
 * check and allocates nothing for groups of up to 64 nodes. Returns FE_OK,
 * or FE_EINPUT with err set: an empty list, an id out of range, a
 * duplicate, a split outside 0..FE_PLAN_MAX_SPLIT, or a time that is not
 * finite (a machine filled in C without fe_machine_check). */
int fe_sim_group(const fe_graph *g, const fe_machine *m, const int32_t *nodes, int n, int split,
                 fe_sim_group_result *out, fe_error *err);

/* The same nodes run unfused, one kernel each: sums of the single-node
 * results (time, bytes, FLOPs), maxima of peaks and registers, nodes = n. */
int fe_sim_unfused(const fe_graph *g, const fe_machine *m, const int32_t *nodes, int n,
                   fe_sim_group_result *out, fe_error *err);

/* Add one kernel's figures to a sum of kernels run one after another
 * (unfused nodes, a candidate's parts): counts, traffic, FLOPs and times
 * add up; registers, working set and L2 peaks are the largest; the sum
 * fits only if every kernel does. The splits are the caller's to set. */
void fe_sim_result_add(fe_sim_group_result *sum, const fe_sim_group_result *one);

/* Group nodes[0..n) on a machine with an executor (m->executor), priced as
 * the kernels that executor makes of it (sim_executor.c): *done 0 when it
 * cannot plan the group, which is then the caller's to price whole. */
int fe_sim_executor_group(const fe_graph *g, const fe_machine *m, const int32_t *nodes, int n,
                          int split, fe_sim_group_result *out, int *done, fe_error *err);

/* A kernel that reads and writes bytes once through L3 and holds nothing on
 * chip (a layout copy, an executor's copy of a view), into *r. */
void fe_sim_copy(int64_t bytes, int32_t nodes, const fe_machine *m, fe_sim_group_result *r);

/* Whole-plan totals. */
typedef struct fe_sim_totals {
    int32_t kernels;            /* generated kernels (launch "kernel"), layout copies included */
    int32_t copies;             /* layout copies (plan.h's fe_copy), part of kernels */
    int32_t extern_calls;       /* library calls: lone matmul, conv2d, sdpa */
    int32_t views;              /* view groups: no launch */
    int32_t tiled;              /* groups with split > 1 */
    int32_t overflowing;        /* groups whose intermediates went through L3 */
    int32_t spilling;           /* groups with register spills */
    int64_t flops, l3_bytes, l2_traffic, reread_bytes, overflow_bytes, spill_bytes;
    int64_t l2_peak;            /* largest l2_occupancy of any group: at most the L2 */
    int64_t mem_peak;           /* device-memory peak over the schedule */
    int64_t weight_bytes;       /* resident weights, part of mem_peak */
    double time_s, launch_s, tile_s, collective_s, compute_s, memory_s;
} fe_sim_totals;

typedef struct fe_sim_report {
    const fe_graph *g;          /* not owned */
    const fe_plan *plan;        /* not owned */
    fe_machine machine;         /* copy */
    int32_t ngroups;
    fe_sim_group_result *groups;/* per plan group, in plan order */
    double *start_s;            /* when each group starts (kernels run back to back) */
    int64_t *mem_bytes;         /* device memory in use while each group runs */
    int32_t ncopies;
    fe_sim_group_result *copies;/* per plan copy (plan->copies), priced as a kernel; each runs
                                   just before the group that first reads its tensor */
    fe_sim_totals total;
} fe_sim_report;

/* Price every group of p (group split > 0 is used as given, 0 = default)
 * and the schedule. Fills *out (release with fe_sim_report_free) and
 * returns FE_OK, or FE_ENOMEM, or FE_EINPUT when a split is above
 * FE_PLAN_MAX_SPLIT or the total time is not finite, with err set (then
 * *out holds nothing). */
int fe_sim_plan(const fe_plan *p, const fe_machine *m, fe_sim_report *out, fe_error *err);
void fe_sim_report_free(fe_sim_report *r);

/* Give every group of p without a split (0, "auto") the simulator's
 * default on machine m, so the plan says how each group runs. */
int fe_sim_resolve_splits(fe_plan *p, const fe_machine *m, fe_error *err);

/* ---- output (sim_report.c) ---- */

/* "silu+mul": the members' op names joined with '+' in topological order
 * (InfiniCore's compat key), cut with "+...(N ops)" to fit size (at most
 * size - 1 characters), or, if its first name alone does not fit, cut
 * there and ended with "...". */
void fe_sim_group_label(const fe_graph *g, const int32_t *nodes, int n, char *buf, size_t size);

/* One group result as a JSON object (times in us). */
void fe_sim_group_json(const fe_sim_group_result *r, fe_jw *w);

/* The totals DESIGN.md's plan file puts in "summary" as an object:
 * kernels, sim_us, l3_bytes, l2_peak, mem_peak, spill_bytes. */
void fe_sim_report_summary_json(const fe_sim_report *r, fe_jw *w);

/* The same keys but kernels, written into an open object: the plan file's
 * "summary", whose writer counts the kernels itself and takes these
 * through fe_plan_extra's summary callback (plan_json.h). */
void fe_sim_report_plan_summary(const fe_sim_report *r, fe_jw *w);

/* Group i of the report as one JSON object: start_us, mem_bytes and its
 * fe_sim_group_json fields (a plan file's group "sim", through
 * fe_plan_extra's group callback). */
void fe_sim_report_group_json(const fe_sim_report *r, int32_t i, fe_jw *w);

/* The whole report as a JSON object: machine, totals and, if groups is
 * set, one object per group with its node names. */
void fe_sim_report_json(const fe_sim_report *r, fe_jw *w, int groups);

/* Plan against a baseline (normally the unfused plan), as the `fuseeng run`
 * table: kernels, time, L3 bytes, L2 peak, device-memory peak, spill
 * bytes, speedup = base time / plan time. */
void fe_sim_report_compare_table(const fe_sim_report *plan, const fe_sim_report *base, FILE *f);
void fe_sim_report_compare_json(const fe_sim_report *plan, const fe_sim_report *base, fe_jw *w);

/* One line per group (the --verbose table). */
void fe_sim_report_groups_table(const fe_sim_report *r, FILE *f);

#endif
