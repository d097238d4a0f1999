/* plan_build.h: plans built from a partition (a driver's, when a run
 * ends) and from labels (a plan file's groups, a test's), the labels'
 * groups made through the partition's legal merges (legality.h), so that
 * a plan built here is legal. */
#ifndef FE_PLAN_BUILD_H
#define FE_PLAN_BUILD_H

#include "partition.h"

/* A plan from labels (node -> any non-negative label; equal labels share a
 * group), built through legal merges, its groups in the labels' order when
 * that is a dependency order (a plan file's), else in the partition's
 * (the order of the merges). Caller frees with fe_plan_free.
 * NULL with FE_EINPUT and a message naming the offending group if the
 * partition is illegal. */
fe_plan *fe_plan_from_labels(const fe_graph *g, const int32_t *labels, fe_error *err);

/* The plan partition p describes (groups in dependency order, each with
 * its class). Caller frees with fe_plan_free. */
fe_plan *fe_part_to_plan(const fe_part *p, fe_error *err);

#endif
