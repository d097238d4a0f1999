/* planning.h: planning a graph with a policy (planning.c), the top of the
 * script layer: fe_engine_plan's work, and the CLI's with stats. */
#ifndef FE_PLANNING_H
#define FE_PLANNING_H

#include "fuseeng.h"
#include "run.h"

/* Run policy p on g. Returns the plan (caller frees with fe_plan_free; it
 * refers to g) or NULL with err set. stats may be NULL. */
fe_plan *fe_run_policy(fe_engine *e, fe_policy *p, const fe_graph *g, fe_run_stats *stats,
                       fe_error *err);

#endif
