/* datacheck.h: whether a safetensors file holds a graph's tensors of one
 * role: weights (tensors of kind weight), inputs (the graph inputs) or
 * outputs (the graph outputs).
 *
 * A file matches when it holds exactly those tensors, by name, each of the
 * graph's dtype and of its shape at the graph's dims (after --dim).
 * Anything else is FE_EINPUT naming the file and the first tensor that is
 * missing, extra (with what the name is in the graph, or the likely name),
 * or of another dtype or shape; and a weights file stamped by another
 * import than the model's (FE_WEIGHTS_STAMP_KEY). The session checks its files with this
 * before it fills anything (exec.c); datafiles.h opens and checks them.
 */
#ifndef FE_DATACHECK_H
#define FE_DATACHECK_H

#include "error.h"
#include "graph.h"
#include "safetensors.h"

typedef enum fe_data_role { FE_DATA_WEIGHTS, FE_DATA_INPUTS, FE_DATA_OUTPUTS } fe_data_role;

/* FE_OK if f matches g for role, else FE_EINPUT (see above). */
int fe_datacheck(const fe_graph *g, const fe_st_file *f, int role, fe_error *err);

#endif
