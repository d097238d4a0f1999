/* load.h: reading fuseeng.model/1 files into graphs. */
#ifndef FE_LOAD_H
#define FE_LOAD_H

#include <stddef.h>

#include "graph.h"

/* Dim overrides (--dim NAME=V). */
typedef struct fe_dimset {
    int n;
    const char *const *names;
    const int64_t *values;
} fe_dimset;

/* Load and validate a model file. Returns a finished graph (caller frees
 * with fe_graph_free) or NULL with err naming the file and the line:column
 * or node/tensor at fault. dims may be NULL. */
fe_graph *fe_load_model_file(const char *path, const fe_dimset *dims, fe_error *err);

/* The same from memory; label names the model in messages. */
fe_graph *fe_load_model_buffer(const char *buf, size_t len, const char *label,
                               const fe_dimset *dims, fe_error *err);

#endif
