/* save.h: writing graphs as fuseeng.model/1 files. */
#ifndef FE_SAVE_H
#define FE_SAVE_H

#include <stdio.h>

#include "graph.h"
#include "jsonw.h"

/* Write g to f as a fuseeng.model/1 document: declared tensors as declared
 * (dim names kept), inferred ones left out, nodes in topological order.
 * Loading the result gives an identical graph. indent 0 writes compact
 * JSON. Returns FE_OK or FE_ERUNTIME on a write error. */
int fe_save_model(const fe_graph *g, FILE *f, int indent, fe_error *err);

/* The same into a file at path. */
int fe_save_model_file(const fe_graph *g, const char *path, int indent, fe_error *err);

/* Node n's attrs as one compact JSON object ("{}" without any), dim names
 * replaced by their values; caller frees with free(). NULL when out of
 * memory. */
char *fe_save_attrs(const fe_graph *g, const fe_node *n);

/* "dims": {NAME: value, ...} of g into w (the model file's member; plan
 * files and summaries carry it too), on one line when flat. */
void fe_save_dims(fe_jw *w, const fe_graph *g, int flat);

#endif
