/* planning.h: planning a graph with a policy (planning.c), the top of the
 * script layer: the work of core/api's fe_engine_plan and fe_policy_plan. */
#ifndef FE_PLANNING_H
#define FE_PLANNING_H

#include "policy.h"
#include "run.h"

/* Run policy p on g in p's planner. Returns the plan (caller frees with
 * fe_plan_free; it refers to g) or NULL with err set. stats may be NULL. */
fe_plan *fe_run_policy(fe_policy_ref *p, const fe_graph *g, fe_run_stats *stats, fe_error *err);

#endif
