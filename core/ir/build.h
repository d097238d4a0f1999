/* build.h: building a graph (graph.h) from a model's declarations, in any
 * node order, as a model file lists them.
 *
 * Builders take names as NUL-terminated strings and copy them. A builder
 * records the first error and ignores calls after it; fe_builder_finish
 * reports it. Line numbers are only for messages (0 = unknown). Nodes are
 * checked against the op registry (ops.h) here, so that the graph itself
 * need not know it.
 */
#ifndef FE_BUILD_H
#define FE_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "graph.h"

typedef struct fe_builder fe_builder;

/* New builder; label names the model in messages (usually its path). */
fe_builder *fe_builder_new(const char *label, fe_error *err);
/* Discard a builder that will not be finished. */
void fe_builder_free(fe_builder *b);

int fe_builder_meta(fe_builder *b, const char *name, const char *source);
/* The model's weights_stamp (docs/formats.md): what the weights file made
 * with it records, so that a file of other weights is told apart. */
int fe_builder_weights_stamp(fe_builder *b, const char *stamp);
/* The first error the builder recorded, or NULL (fe_builder_finish
 * reports it too; an importer that stops early takes it from here). */
const fe_error *fe_builder_error(const fe_builder *b);
int fe_builder_dim(fe_builder *b, const char *name, int64_t value, int line);
/* Override a dim's default (--dim NAME=V); the dim must exist by finish. */
int fe_builder_set_dim(fe_builder *b, const char *name, int64_t value);
/* Declare a tensor. shape items are sizes or FE_SYM(dim id) where dim id
 * comes from fe_builder_dim_id. Returns its id or -1. */
int32_t fe_builder_tensor(fe_builder *b, const char *name, int dtype, int kind,
                          int rank, const int64_t *shape, int line);
/* Id of a dim name for FE_SYM, declared or not yet declared; -1 on error. */
int32_t fe_builder_dim_id(fe_builder *b, const char *name);
/* Add a node; returns its builder index (for attributes) or -1. */
int32_t fe_builder_node(fe_builder *b, const char *name, const char *op,
                        const char *const *inputs, int nin,
                        const char *const *outputs, int nout, int line);
int fe_builder_attr_null(fe_builder *b, int32_t node, const char *key);
int fe_builder_attr_bool(fe_builder *b, int32_t node, const char *key, int v);
int fe_builder_attr_int(fe_builder *b, int32_t node, const char *key, int64_t v);
int fe_builder_attr_float(fe_builder *b, int32_t node, const char *key, double v);
int fe_builder_attr_str(fe_builder *b, int32_t node, const char *key, const char *v);
int fe_builder_attr_ints(fe_builder *b, int32_t node, const char *key,
                         const int64_t *v, int n);
int fe_builder_attr_json(fe_builder *b, int32_t node, const char *key,
                         const char *json, size_t len);
int fe_builder_output(fe_builder *b, const char *tensor, int line);

/* Resolve names, sort topologically, infer and check shapes and dtypes,
 * count FLOPs and bytes. Consumes the builder (also on failure). Returns
 * the graph (caller frees with fe_graph_free) or NULL with err set. */
fe_graph *fe_builder_finish(fe_builder *b, fe_error *err);

#endif
