/* boundary.h: what a group of nodes reads from outside it and what it
 * must leave behind, for every device's group driver. */
#ifndef FE_BOUNDARY_H
#define FE_BOUNDARY_H

#include <stdint.h>

#include "error.h"
#include "graph.h"

/* The external inputs (tensors the members read that no member makes) and
 * outputs (tensors a member makes that a non-member reads, or graph
 * outputs) of the group nodes[0..n) (sorted ascending, as a group's
 * members are), each listed once, in member order. *ins and *outs are new arrays (caller frees), also
 * when empty. FE_OK or FE_ENOMEM. */
int fe_k_boundary(const fe_graph *g, const int32_t *nodes, int n, int32_t **ins, int *nins,
                  int32_t **outs, int *nouts, fe_error *err);

#endif
