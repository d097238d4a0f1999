/* plan_json.h: fuseeng.plan/1 files (see plan_json.c for the format). */
#ifndef FE_PLAN_JSON_H
#define FE_PLAN_JSON_H

#include <stdio.h>

#include "jsonw.h"
#include "plan.h"

/* Counts for summaries. */
typedef struct fe_plan_counts {
    int32_t kernels, fused_groups, fused_nodes, largest, tiled_groups;
    int32_t yes, no, none, rejected, notes;
} fe_plan_counts;

void fe_plan_summary_counts(const fe_plan *p, fe_plan_counts *c);

/* Extra summary fields another module writes (the simulator's figures):
 * summary(w, ctx) is called inside the "summary" object. */
typedef struct fe_plan_extra {
    void (*summary)(fe_jw *w, void *ctx);
    void *ctx;
} fe_plan_extra;

/* Write p as JSON to f; extra may be NULL. FE_OK or FE_ERUNTIME. */
int fe_plan_write(const fe_plan *p, FILE *f, int indent, const fe_plan_extra *extra, fe_error *err);

/* The "groups" and "decisions" members, for other writers. */
void fe_plan_write_groups(fe_jw *w, const fe_plan *p);
void fe_plan_write_decisions(fe_jw *w, const fe_plan *p);

/* Read a plan file for graph g; legality is checked. Caller frees with
 * fe_plan_free. NULL with FE_EINPUT naming the file and what is wrong. */
fe_plan *fe_plan_read(const fe_graph *g, const char *path, fe_error *err);

#endif
