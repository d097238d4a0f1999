/* legality.h: what may fuse, the one owner of the rule (legality.c opens
 * with the rules and their invariants).
 *
 * Two questions, one set of rules: may these groups of a partition become
 * one group (fe_part_can_merge, asked by drivers at every merge), and is
 * this plan legal (fe_plan_check, for plans made by hand or read from
 * files; plan_build.h's fe_plan_from_labels builds a plan only through
 * fe_part_can_merge). Nothing else in
 * the engine looks at op kinds to decide whether nodes may share a kernel.
 */
#ifndef FE_LEGALITY_H
#define FE_LEGALITY_H

#include <stddef.h>

#include "partition.h"

/* The class (fe_class) that takes a group with these counts, or -1 with
 * *why (if why is not NULL) saying what no kernel can hold (static
 * storage). */
int fe_kinds_class(const fe_kinds *k, const char **why);

/* May the groups gids[0..n) (distinct group ids of p) become one group?
 * 1 if yes; 0 with the reason in why (e.g. "not convex: a path leaves the
 * group through node 'x' and comes back into node 'y'", or a class rule),
 * unless why is NULL: a driver that drops illegal pairs silently skips
 * the formatting, most of the cost of a refusal. */
int fe_part_can_merge(fe_part *p, const int32_t *gids, int n, char *why, size_t size);

/* Rule 1 alone, for a set that need not be one kernel (a window of an
 * exact search, optimal.h): no path leaves the groups gids[0..n) and comes
 * back. 1 if so; 0 with the reason in why (if not NULL). */
int fe_part_convex(fe_part *p, const int32_t *gids, int n, char *why, size_t size);

/* Check a plan from scratch (tests, plans read from files): every node in
 * one group, members sorted, classes right, convex, acyclic, groups in
 * dependency order. FE_OK or FE_EINPUT with the first problem. */
int fe_plan_check(const fe_plan *p, fe_error *err);

#endif
