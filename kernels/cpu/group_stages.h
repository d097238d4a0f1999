/* group_stages.h: a group whose column reductions, concats, or views or
 * broadcasts of computed values are read by later members, or whose
 * outputs differ in shape, run as a few fused programs in turn (group.c's
 * MODE_STAGES).
 */
#ifndef FE_GROUP_STAGES_H
#define FE_GROUP_STAGES_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "fused.h"
#include "graph.h"
#include "ktensor.h"

typedef struct fe_k_stages fe_k_stages;

/* The group nodes[0..n) (sorted, so topological) with outputs outs as
 * programs in turn, each ending at the cut values the next reads, and
 * one per shape of output where a stage's outputs differ; returns them
 * (free with fe_k_stages_free), or NULL with why set: FE_EINPUT when a
 * program cannot compile, FE_ENOMEM. */
fe_k_stages *fe_k_stages_new(const fe_graph *g, const int32_t *nodes, int n, const int32_t *outs,
                             int nouts, fe_error *why);
/* Run the programs in turn, each in split tiles; bufs as for
 * fe_k_group_run (the cut values only the group reads get scratch
 * buffers of their own for the run). */
int fe_k_stages_run(fe_k_stages *s, fe_k_tensor *bufs, int split, fe_error *err);
/* "2 programs in turn (...)": one line for the group's description. */
char *fe_k_stages_describe(const fe_k_stages *s, char *buf, size_t size);
/* Each program's listing, for a reader (fe_k_prog_show). */
void fe_k_stages_show(const fe_k_stages *s, const char *indent, FILE *f);
/* Bytes of the buffers a run holds for cut values only the group reads. */
int64_t fe_k_stages_temp_bytes(const fe_k_stages *s);
void fe_k_stages_free(fe_k_stages *s);

#endif
