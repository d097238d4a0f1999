/* group_views.h: a group of views only whose outputs differ in shape, run
 * as one program per output (group.c's MODE_VIEWS).
 */
#ifndef FE_GROUP_VIEWS_H
#define FE_GROUP_VIEWS_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "fused.h"
#include "graph.h"
#include "ktensor.h"

/* For a group of nodes[0..n) that are all views (fused_views.h), one fused
 * program per output tensor outs[k], compiled from the chain of members
 * that output is made through; returns the array of nouts programs (free
 * with fe_k_views_free), or NULL with why set: FE_EINPUT when a member is
 * no view or a chain cannot compile, FE_ENOMEM. */
fe_k_prog **fe_k_views_new(const fe_graph *g, const int32_t *nodes, int n, const int32_t *outs,
                           int nouts, fe_error *why);
/* Run each program once; bufs as for fe_k_group_run. */
int fe_k_views_run(fe_k_prog **views, int nouts, fe_k_tensor *bufs, fe_error *err);
/* Each output's name and program listing, for a reader (fe_k_prog_show). */
void fe_k_views_show(fe_k_prog **views, int nouts, const fe_graph *g, const int32_t *outs,
                     const char *indent, FILE *f);
void fe_k_views_free(fe_k_prog **views, int nouts);

#endif
