/* aten_call.h: one call of an exported aten op's kernel, shared by the
 * kernel files (aten.c owns the table and dispatch; aten_copy.c the copy,
 * gather and hard-activation kernels): the call's context and the checks
 * and error messages every kernel words the same way (aten_call.c).
 * Internal to kernels/aten*.c; others use aten.h.
 */
#ifndef FE_ATEN_CALL_H
#define FE_ATEN_CALL_H

#include <jansson.h>
#include <stdint.h>

#include "error.h"
#include "graph.h"
#include "ktensor.h"

typedef struct fe_k_acall {
    const fe_graph *g;
    const fe_node *n;
    const char *aten;          /* attrs.aten as written */
    json_t *args;              /* attrs.args: an object, empty when absent */
    const fe_k_tensor *in;
    fe_k_tensor *out;          /* the one output */
    int op;                    /* the table entry's variant */
    int dry;                   /* validate only: tensors carry no data */
    struct fe_k_aten_plan *plan;   /* dry, when not NULL: what the kernel computes (aten.h) */
} fe_k_acall;

/* The aten op name without an "aten::" or "aten." prefix (points into aten). */
const char *fe_k_acall_bare(const char *aten);

/* FE_EINPUT with err "node 'N' (aten 'A'): <fmt ...>". */
int fe_k_acall_fail(const fe_k_acall *c, fe_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fails saying the op produces shape (rank, shape) but the graph's output differs. */
int fe_k_acall_out_mismatch(const fe_k_acall *c, fe_error *err, int rank, const int64_t *shape);

/* Fails unless the graph's output has that rank, shape and dtype. */
int fe_k_acall_out_is(const fe_k_acall *c, fe_error *err, int rank, const int64_t *shape,
                      int dtype);

/* Whether t has that rank and shape. */
int fe_k_acall_same_shape(const fe_k_tensor *t, int rank, const int64_t *shape);

/* t's shape as "[2,3]" in buf (size bytes); returns buf. */
const char *fe_k_acall_shape(const fe_k_tensor *t, char *buf, size_t size);

/* args[key] (borrowed), or NULL when absent or null (torch's None). */
json_t *fe_k_acall_arg(const fe_k_acall *c, const char *key);

/* *v = args[key], or dflt when absent or null; fails when not an integer. */
int fe_k_acall_int_arg(const fe_k_acall *c, const char *key, int64_t dflt, int64_t *v,
                       fe_error *err);

/* Kernels of aten_copy.c, for aten.c's table. */
int fe_k_aten_copy(const fe_k_acall *c, fe_error *err);      /* clone, contiguous */
int fe_k_aten_gather(const fe_k_acall *c, fe_error *err);    /* torch.gather */
int fe_k_aten_pointwise(const fe_k_acall *c, fe_error *err); /* c->op: an FE_OP_ elemwise op */
/* Kernel of aten_sort.c. */
int fe_k_aten_argsort(const fe_k_acall *c, fe_error *err);   /* argsort, argsort.stable */

#endif
