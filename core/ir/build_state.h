/* build_state.h: a graph builder's state, private to build.c (recording a
 * model's declarations) and build_finish.c (turning them into a graph, in
 * passes). Recording and finishing are two jobs of about 500 lines each,
 * so they are two files; this is what both see of the builder.
 */
#ifndef FE_BUILD_STATE_H
#define FE_BUILD_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "graph.h"

/* build.h's handle, named again rather than included: build.h is what the
 * rest of the engine sees, and this header, what build.c's own files
 * share, stays below it (C11 allows the repeated typedef). */
typedef struct fe_builder fe_builder;

typedef struct bnode {
    int32_t name, op, line, io_off;   /* io_off into b->bio (name ids) */
    uint16_t nin, nout;
    int32_t attr_off, nattr;
} bnode;

typedef struct bdim {
    int32_t name, line, declared;
    int64_t value;
    int overridden;
} bdim;

struct fe_builder {
    fe_error err;                 /* first error; later calls are ignored */
    fe_graph *g;                  /* filled as we go; handed out by finish */
    bnode *bn;
    int64_t nbn, cap_bn;
    int32_t *bio;
    int64_t nbio, cap_bio;
    bdim *bd;
    int64_t nbd, cap_bd;
    struct { int32_t name, line; } *outs;
    int64_t nouts, cap_outs;
    int64_t cap_tensors, cap_attrs, cap_ints, cap_blob, cap_shape;
    int32_t *op_of_str;           /* strtab id -> op id + 1 (0 = not looked up) */
    int64_t cap_op_of_str, nop_of_str;
    int64_t cap_names;            /* capacity of g->node_of_name / tensor_of_name */
    /* Totals checked to fit in 64 bits (size_tensor, finish_infer), so that any sum
     * of tensor bytes, node bytes or FLOPs is in range. */
    int64_t total_tensor_bytes, total_flops, total_bytes;
};

static inline int failed(const fe_builder *b) { return b->err.code != FE_OK; }

/* Record an error as "FILE:LINE: message" (the first one wins); returns
 * its code. */
int fe_build_err(fe_builder *b, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record running out of memory (unless an error came first); FE_ENOMEM. */
int fe_build_nomem(fe_builder *b);

/* Grow *p (of *cap elements of elem bytes) to hold need; 0, or -1 with *p
 * untouched when out of memory. */
int fe_build_reserve(void **p, int64_t *cap, int64_t need, size_t elem);
#define RESERVE(arr, cap, need) fe_build_reserve((void **)&(arr), &(cap), (need), sizeof *(arr))

/* Room for extra more shape items; 0, or -1 when out of memory. */
int fe_build_grow_shape(fe_builder *b, int extra);

#endif
