/* graph.c: the graph IR (graph.h): dtype, kind and pattern names, and
 * reading a finished graph (lookups by name, attributes, scalars). Built
 * by build.c and build_finish.c; it knows nothing of the op registry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* ---- dtypes, kinds, patterns ---- */

static const struct {
    const char *name;
    int size;
    int is_float;
} dtypes[FE_NDTYPE] = {
    [FE_F32] = {"f32", 4, 1},  [FE_F16] = {"f16", 2, 1}, [FE_BF16] = {"bf16", 2, 1},
    [FE_I64] = {"i64", 8, 0},  [FE_I32] = {"i32", 4, 0}, [FE_I8] = {"i8", 1, 0},
    [FE_BOOL] = {"bool", 1, 0},
};

static const char *const kinds[] = {"input", "weight", "activation"};
static const char *const patterns[FE_NPATTERN] = {
    "elemwise", "broadcast", "injective", "reduction", "out_fusable", "opaque",
};

int fe_dtype_size(int dt) { return dtypes[dt].size; }
const char *fe_dtype_name(int dt) { return dt >= 0 && dt < FE_NDTYPE ? dtypes[dt].name : "?"; }
int fe_dtype_is_float(int dt) { return dtypes[dt].is_float; }
const char *fe_tkind_name(int k) { return kinds[k]; }
const char *fe_pattern_name(int p) { return patterns[p]; }

int fe_dtype_parse(const char *s)
{
    for (int i = 0; i < FE_NDTYPE; i++)
        if (strcmp(s, dtypes[i].name) == 0)
            return i;
    return -1;
}

int fe_tkind_parse(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, kinds[i]) == 0)
            return i;
    return -1;
}

int fe_pattern_parse(const char *s)
{
    if (strcmp(s, "out-fusable") == 0)   /* DESIGN.md spells it with a dash */
        return FE_OUT_FUSABLE;
    for (int i = 0; i < FE_NPATTERN; i++)
        if (strcmp(s, patterns[i]) == 0)
            return i;
    return -1;
}

void fe_graph_free(fe_graph *g)
{
    if (!g)
        return;
    free(g->file);
    free(g->name);
    free(g->source);
    free(g->weights_stamp);
    fe_strtab_free(g->strs);
    free(g->dims);
    free(g->tensors);
    free(g->nodes);
    free(g->outputs);
    free(g->io);
    free(g->cons);
    free(g->shape);
    free(g->shape_sym);
    free(g->attrs);
    free(g->ints);
    free(g->blob);
    free(g->node_of_name);
    free(g->tensor_of_name);
    free(g);
}

size_t fe_graph_bytes(const fe_graph *g)
{
    return sizeof *g + fe_strtab_bytes(g->strs) +
           (size_t)g->ndims * sizeof *g->dims + (size_t)g->ntensors * sizeof *g->tensors +
           (size_t)g->nnodes * sizeof *g->nodes + (size_t)g->noutputs * 4 +
           (size_t)(g->nio + g->ncons) * 4 + (size_t)g->nshape * 12 +
           (size_t)g->nattrs * sizeof *g->attrs + (size_t)g->nints * 8 + (size_t)g->nblob +
           (size_t)g->nnames * 8;
}

/* ---- reading ---- */

int32_t fe_graph_find_node(const fe_graph *g, const char *name)
{
    int32_t id = fe_strtab_find(g->strs, name, strlen(name));
    return id < 0 ? -1 : g->node_of_name[id];
}

int32_t fe_graph_find_tensor(const fe_graph *g, const char *name)
{
    int32_t id = fe_strtab_find(g->strs, name, strlen(name));
    return id < 0 ? -1 : g->tensor_of_name[id];
}

int32_t fe_graph_find_dim(const fe_graph *g, const char *name)
{
    int32_t id = fe_strtab_find(g->strs, name, strlen(name));
    for (int32_t d = 0; id >= 0 && d < g->ndims; d++)
        if (g->dims[d].name == id)
            return d;
    return -1;
}

const fe_attr *fe_node_attr(const fe_graph *g, const fe_node *n, const char *key)
{
    int32_t k = fe_strtab_find(g->strs, key, strlen(key));
    if (k < 0)
        return NULL;
    for (int i = 0; i < n->nattr; i++)
        if (g->attrs[n->attr_off + i].key == k)
            return &g->attrs[n->attr_off + i];
    return NULL;
}

int64_t fe_node_attr_int(const fe_graph *g, const fe_node *n, const char *key, int64_t dflt)
{
    const fe_attr *a = fe_node_attr(g, n, key);
    if (!a)
        return dflt;
    switch (a->type) {
    case FE_ATTR_INT:
    case FE_ATTR_BOOL:
        return a->v.i;
    case FE_ATTR_FLOAT:
        /* Exports write huge slice ends as floats; saturate rather than wrap. */
        if (a->v.f >= 9.2e18)
            return INT64_MAX;
        if (a->v.f <= -9.2e18)
            return INT64_MIN;
        return (int64_t)a->v.f;
    case FE_ATTR_INTS:
        return a->n == 1 ? fe_graph_resolve(g, g->ints[a->v.off]) : dflt;
    default:
        return dflt;
    }
}

double fe_node_attr_float(const fe_graph *g, const fe_node *n, const char *key, double dflt)
{
    const fe_attr *a = fe_node_attr(g, n, key);
    if (!a)
        return dflt;
    if (a->type == FE_ATTR_FLOAT)
        return a->v.f;
    if (a->type == FE_ATTR_INT || a->type == FE_ATTR_BOOL)
        return (double)a->v.i;
    return dflt;
}

int fe_node_attr_bool(const fe_graph *g, const fe_node *n, const char *key, int dflt)
{
    const fe_attr *a = fe_node_attr(g, n, key);
    if (!a)
        return dflt;
    if (a->type == FE_ATTR_BOOL || a->type == FE_ATTR_INT)
        return a->v.i != 0;
    return dflt;
}

const char *fe_node_attr_str(const fe_graph *g, const fe_node *n, const char *key, const char *dflt)
{
    const fe_attr *a = fe_node_attr(g, n, key);
    return a && a->type == FE_ATTR_STR ? fe_graph_str(g, a->v.s) : dflt;
}

int64_t fe_graph_resolve(const fe_graph *g, int64_t v)
{
    return FE_IS_SYM(v) ? g->dims[v - FE_SYM_BASE].value : v;
}

int fe_node_attr_ints(const fe_graph *g, const fe_node *n, const char *key, int64_t *out, int max)
{
    const fe_attr *a = fe_node_attr(g, n, key);
    if (!a)
        return -1;
    if (a->type == FE_ATTR_INT) {
        if (max < 1)
            return -2;
        out[0] = a->v.i;
        return 1;
    }
    if (a->type != FE_ATTR_INTS || a->n > max)
        return -2;
    for (int i = 0; i < a->n; i++)
        out[i] = fe_graph_resolve(g, g->ints[a->v.off + i]);
    return a->n;
}

char *fe_shape_str(const int64_t *dims, int rank, char *buf, size_t size)
{
    size_t len = 0;
    len += (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < rank && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
                                (long long)dims[i]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

int fe_node_scalar(const fe_graph *g, const fe_node *n, double *v)
{
    const fe_attr *a = fe_node_attr(g, n, "scalar");
    if (!a || (a->type != FE_ATTR_INT && a->type != FE_ATTR_FLOAT && a->type != FE_ATTR_BOOL))
        return 0;
    double x = a->type == FE_ATTR_FLOAT ? a->v.f : (double)a->v.i;
    /* Exports write float32's +-max for +-inf: 3.4028235e38 is the shortest
     * text for FLT_MAX, which no real scalar operand means. */
    if (x >= 3.4028234e38)
        x = __builtin_inf();
    else if (x <= -3.4028234e38)
        x = -__builtin_inf();
    *v = x;
    return 1;
}
