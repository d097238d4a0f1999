/* versus.h: two ways to run one group timed against each other, once per
 * key in the process (the measured choices of group_pick.c). */
#ifndef FE_VERSUS_H
#define FE_VERSUS_H

#include <stdint.h>

#include "error.h"
#include "graph.h"
#include "ktensor.h"

typedef int (*fe_k_run_fn)(void *ctx, fe_k_tensor *bufs, fe_error *err);

/* Time a against b on buffers of their own for the group's inputs ins and
 * outputs outs (the best of up to 7 interleaved rounds after a warm-up,
 * about 300 ms at most), or take the times remembered under key; *a_ms and
 * *b_ms get them. Returns 1 when a is faster, 0 when b is, -1 when a run
 * fails or memory runs out. Thread-safe. */
int fe_k_versus(const char *key, const fe_graph *g, const int32_t *ins, int nins,
                const int32_t *outs, int nouts, fe_k_run_fn a, void *actx, fe_k_run_fn b,
                void *bctx, double *a_ms, double *b_ms);

#endif
