/* gen.h: random valid fuseeng.model/1 graphs for the differential tester.
 *
 * A seed gives one model, always the same: every op of the registry with
 * its attributes (absent, default, negative and extreme forms), every
 * dtype an op accepts, broadcasting, view chains (reshape, transpose,
 * slice, expand, concat, pad), shapes near the limits (dims of 1, odd
 * sizes, rank 0 to 8, huge slice bounds and steps) and DAGs where values
 * are shared by several readers and several are graph outputs.
 */
#ifndef FE_DIFFTEST_GEN_H
#define FE_DIFFTEST_GEN_H

#include <stdint.h>

typedef struct fe_gen_opts {
    int max_nodes;        /* nodes per graph (default 12) */
    int64_t max_numel;    /* elements per tensor, most of the time (default 4096) */
    const char *only_op;  /* generate mostly this op (NULL: all) */
} fe_gen_opts;

/* The model of seed as JSON text (caller frees with free); *custom_refused
 * is set when the graph holds a custom op without a CPU kernel, which
 * execution refuses by design (naming the node). NULL if out of memory. */
char *fe_gen_model(uint64_t seed, const fe_gen_opts *o, int *custom_refused);

#endif
