/* model.h: the model behind fe_model (fuseeng.h): a loaded graph. */
#ifndef FE_MODEL_H
#define FE_MODEL_H

#include "fuseeng.h"
#include "graph.h"

struct fe_model {
    fe_graph *g;
};

#endif
