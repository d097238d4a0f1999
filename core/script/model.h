/* model.h: the model behind fe_model (fuseeng.h): a loaded graph. */
#ifndef FE_MODEL_H
#define FE_MODEL_H

#include "fuseeng.h"
#include "graph.h"

struct fe_model {
    fe_graph *g;
};

/* A model handle owning g (caller frees with fe_model_free); NULL if g is
 * NULL (err already set by whoever failed to make it), or with FE_ENOMEM,
 * g freed, if the handle cannot be had. */
fe_model *fe_model_wrap(fe_graph *g, fe_error *err);

#endif
