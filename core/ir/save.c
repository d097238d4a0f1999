/* save.c: the fuseeng.model/1 writer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "ops.h"
#include "outfile.h"
#include "save.h"

/* One attribute; a dim name as its name, or (values) as its value. */
static void write_attr(fe_jw *w, const fe_graph *g, const fe_node *n, const fe_attr *a, int values)
{
    fe_jw_key(w, fe_graph_str(g, a->key));
    if (a->type == FE_ATTR_INTS && a->n == 1 && fe_op_attr_is_dim(n->op, fe_graph_str(g, a->key))) {
        int64_t v = g->ints[a->v.off];   /* a dim attribute: as it was written */
        if (FE_IS_SYM(v) && values)
            fe_jw_int(w, g->dims[v - FE_SYM_BASE].value);
        else if (FE_IS_SYM(v))
            fe_jw_str(w, fe_graph_str(g, g->dims[v - FE_SYM_BASE].name));
        else
            fe_jw_int(w, v);
        return;
    }
    switch (a->type) {
    case FE_ATTR_NULL: fe_jw_null(w); break;
    case FE_ATTR_BOOL: fe_jw_bool(w, (int)a->v.i); break;
    case FE_ATTR_INT: fe_jw_int(w, a->v.i); break;
    case FE_ATTR_FLOAT: fe_jw_num(w, a->v.f); break;
    case FE_ATTR_STR: fe_jw_str(w, fe_graph_str(g, a->v.s)); break;
    case FE_ATTR_INTS:
        fe_jw_arr_flat(w);
        for (int i = 0; i < a->n; i++) {
            int64_t v = g->ints[a->v.off + i];
            if (FE_IS_SYM(v) && values)
                fe_jw_int(w, g->dims[v - FE_SYM_BASE].value);
            else if (FE_IS_SYM(v))
                fe_jw_str(w, fe_graph_str(g, g->dims[v - FE_SYM_BASE].name));
            else
                fe_jw_int(w, v);
        }
        fe_jw_end(w);
        break;
    case FE_ATTR_JSON: fe_jw_raw(w, g->blob + a->v.off, (size_t)a->n); break;
    }
}

static void write_tensor(fe_jw *w, const fe_graph *g, const fe_tensor *t)
{
    const int64_t *shape = fe_tensor_shape(g, t);
    const int32_t *sym = &g->shape_sym[t->shape_off];
    fe_jw_key(w, fe_tensor_name(g, t));
    fe_jw_obj_flat(w);
    fe_jw_key(w, "shape");
    fe_jw_arr(w);
    for (int i = 0; i < t->rank; i++) {
        if (sym[i] >= 0)
            fe_jw_str(w, fe_graph_str(g, g->dims[sym[i]].name));
        else
            fe_jw_int(w, shape[i]);
    }
    fe_jw_end(w);
    fe_jw_key(w, "dtype");
    fe_jw_str(w, fe_dtype_name(t->dtype));
    fe_jw_key(w, "kind");
    fe_jw_str(w, fe_tkind_name(t->kind));
    fe_jw_end(w);
}

static void write_node(fe_jw *w, const fe_graph *g, const fe_node *n)
{
    fe_jw_obj_flat(w);
    fe_jw_key(w, "name");
    fe_jw_str(w, fe_node_name(g, n));
    fe_jw_key(w, "op");
    fe_jw_str(w, fe_node_op_name(n));
    fe_jw_key(w, "inputs");
    fe_jw_arr(w);
    for (int k = 0; k < n->nin; k++)
        fe_jw_str(w, fe_tensor_name(g, fe_graph_tensor(g, fe_node_input(g, n, k))));
    fe_jw_end(w);
    fe_jw_key(w, "outputs");
    fe_jw_arr(w);
    for (int k = 0; k < n->nout; k++)
        fe_jw_str(w, fe_tensor_name(g, fe_graph_tensor(g, fe_node_output(g, n, k))));
    fe_jw_end(w);
    if (n->nattr > 0) {
        fe_jw_key(w, "attrs");
        fe_jw_obj(w);
        for (int i = 0; i < n->nattr; i++)
            write_attr(w, g, n, &g->attrs[n->attr_off + i], 0);
        fe_jw_end(w);
    }
    fe_jw_end(w);
}

char *fe_save_attrs(const fe_graph *g, const fe_node *n)
{
    fe_jw w;
    fe_jw_mem m;
    if (fe_jw_mem_open(&w, &m))
        return NULL;
    fe_jw_obj(&w);
    for (int i = 0; i < n->nattr; i++)
        write_attr(&w, g, n, &g->attrs[n->attr_off + i], 1);
    fe_jw_end(&w);
    return fe_jw_mem_close(&m);
}

void fe_save_dims(fe_jw *w, const fe_graph *g, int flat)
{
    fe_jw_key(w, "dims");
    if (flat)
        fe_jw_obj_flat(w);
    else
        fe_jw_obj(w);
    for (int32_t d = 0; d < g->ndims; d++) {
        fe_jw_key(w, fe_graph_str(g, g->dims[d].name));
        fe_jw_int(w, g->dims[d].value);
    }
    fe_jw_end(w);
}

int fe_save_model(const fe_graph *g, FILE *f, int indent, fe_error *err)
{
    fe_jw w;
    fe_jw_init(&w, f, indent);
    fe_jw_obj(&w);
    fe_jw_key(&w, "format");
    fe_jw_str(&w, "fuseeng.model/1");
    fe_jw_key(&w, "name");
    fe_jw_str(&w, g->name);
    fe_jw_key(&w, "source");
    fe_jw_str(&w, g->source);
    if (g->weights_stamp) {
        fe_jw_key(&w, "weights_stamp");
        fe_jw_str(&w, g->weights_stamp);
    }
    fe_save_dims(&w, g, 0);
    fe_jw_key(&w, "tensors");
    fe_jw_obj(&w);
    for (int32_t t = 0; t < g->ntensors; t++)
        if (g->tensors[t].flags & FE_T_DECLARED)
            write_tensor(&w, g, &g->tensors[t]);
    fe_jw_end(&w);
    fe_jw_key(&w, "nodes");
    fe_jw_arr(&w);
    for (int32_t v = 0; v < g->nnodes; v++)
        write_node(&w, g, &g->nodes[v]);
    fe_jw_end(&w);
    fe_jw_key(&w, "outputs");
    fe_jw_arr_flat(&w);
    for (int32_t i = 0; i < g->noutputs; i++)
        fe_jw_str(&w, fe_tensor_name(g, fe_graph_tensor(g, g->outputs[i])));
    fe_jw_end(&w);
    fe_jw_end(&w);
    if (fflush(f) != 0 || ferror(f))
        return fe_error_set(err, FE_ERUNTIME, "writing the model failed: %s", strerror(errno));
    return FE_OK;
}

int fe_save_model_file(const fe_graph *g, const char *path, int indent, fe_error *err)
{
    fe_outfile o;
    int rc = fe_outfile_open(&o, path, "the model", err);
    if (rc != FE_OK)
        return rc;
    rc = fe_save_model(g, o.f, indent, err);
    if (rc != FE_OK) {
        fe_outfile_abort(&o);
        fe_error_prefix(err, "%s: ", path);
        return rc;
    }
    return fe_outfile_commit(&o, err);
}
