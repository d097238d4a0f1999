/* plan_json.h: fuseeng.plan/1 files (see plan_json.c for the format). */
#ifndef FE_PLAN_JSON_H
#define FE_PLAN_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "jsonw.h"
#include "plan.h"

/* Counts for summaries: kernels are generated kernels (layout copies
 * included, also counted in copies), extern_calls the library calls and
 * views the groups that launch nothing (launch.h). */
typedef struct fe_plan_counts {
    int32_t kernels, copies, extern_calls, views, fused_groups, fused_nodes, largest, tiled_groups;
    int32_t yes, no, none, rejected, notes;
} fe_plan_counts;

void fe_plan_summary_counts(const fe_plan *p, fe_plan_counts *c);

/* What a plan file carries besides the plan, written by its callers
 * (plan files are this layer's; the figures in them come from above, e.g.
 * the simulator's). group, if set, writes group gi's "sim" value (one JSON
 * value); summary, if set, adds fields inside "summary" after its counts:
 * for a simulated plan DESIGN.md's sim_us, l3_bytes, l2_peak, mem_peak and
 * spill_bytes (fe_sim_report_plan_summary) come first. Both get ctx. */
typedef struct fe_plan_extra {
    void (*group)(fe_jw *w, int32_t gi, void *ctx);
    void (*summary)(fe_jw *w, void *ctx);
    void *ctx;
} fe_plan_extra;

/* Write p as JSON to f; extra may be NULL. FE_OK or FE_ERUNTIME. */
int fe_plan_write(const fe_plan *p, FILE *f, int indent, const fe_plan_extra *extra, fe_error *err);

/* A plan file parsed and its header read, not yet matched to a model: what
 * it was made for ("model", "machine", "dims"), so that a reader can load
 * the model and the machine the plan records before building the plan. */
#define FE_PLAN_FILE_MAX_DIMS 64
typedef struct fe_plan_file {
    const char *path;          /* not copied */
    const char *model;         /* "model"; NULL if absent, null or "" */
    const char *machine;       /* "machine"; NULL if absent or null */
    int ndims;                 /* "dims": name -> value, in file order */
    const char *dim_names[FE_PLAN_FILE_MAX_DIMS];
    int64_t dim_values[FE_PLAN_FILE_MAX_DIMS];
    void *doc;                 /* the parsed file; the strings above live in it */
    void *plan_doc;            /* the plan object read: the file's root, or a picked bucket's */
    /* A dispatch table (fuseeng.dispatch/1): a plan per bucket of one dim,
     * bucket i serving the values buckets[i-1] + 1 .. buckets[i]. */
    const char *dispatch_dim;  /* NULL for a plain plan file */
    int nbuckets;
    int64_t buckets[FE_PLAN_FILE_MAX_DIMS];
    int picked;                /* the bucket fe_plan_file_pick chose, or -1 */
} fe_plan_file;

/* Parse path and check its format and header. FE_OK, or FE_EINPUT with
 * err naming the file and the place ("p.json: cannot open: ...",
 * "p.json:3:7: ...", "p.json: \"dims\": ..."); release with
 * fe_plan_file_close either way. */
int fe_plan_file_open(const char *path, fe_plan_file *pf, fe_error *err);

/* For a dispatch table: make the plan of the bucket that serves dim value
 * `value` the one pf holds (its header and groups). FE_OK, or FE_EINPUT
 * when no bucket serves it. */
int fe_plan_file_pick(fe_plan_file *pf, int64_t value, fe_error *err);

/* The plan the file holds, for graph g; legality is checked. Caller frees
 * with fe_plan_free. NULL with FE_EINPUT naming the file and what is wrong. */
fe_plan *fe_plan_file_plan(const fe_plan_file *pf, const fe_graph *g, fe_error *err);

void fe_plan_file_close(fe_plan_file *pf);

/* Open, plan and close in one: for readers that take the model and the
 * machine as they are. */
fe_plan *fe_plan_read(const fe_graph *g, const char *path, fe_error *err);

#endif
