/* import.c: `fuseeng import model.onnx -o model.json`: the driver. Reads
 * the ONNX file (onnx_read.c, which also checks every name once), walks
 * its nodes in order, checking each (onnx_check.c: arity, attributes),
 * folding constant ones (onnx_fold.c) and mapping the rest (onnx_map.c)
 * onto the graph builder, so that our own inference checks every shape;
 * then writes the weights (safetensors.h) and the model (save.h) as a pair:
 * both or neither (write_files below, docs/import.md).
 *
 * Every failure ends as one message in im->err naming the file and, while
 * a node is mapped, the node ("node 'NAME' (OP, #INDEX)"). The builder
 * keeps its own first error; imp_sync moves it into im->err after every
 * node, so that no refusal of the builder is lost.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "jsonr.h"
#include "onnx_imp.h"
#include "outfile.h"
#include "progress.h"
#include "safetensors.h"
#include "save.h"

int imp_fail(imp *im, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (im->err->code)
        return im->err->code;
    if (im->node)
        return fe_error_set(im->err, FE_EINPUT, "%s: node '%s' (%s, #%d): %s", im->path,
                            im->node_name, im->node->op_type, im->node_index, msg);
    return fe_error_set(im->err, FE_EINPUT, "%s: %s", im->path, msg);
}

int imp_sync(imp *im)
{
    const fe_error *be = im->b ? fe_builder_error(im->b) : NULL;
    if (im->err->code || !be)
        return im->err->code;
    if (be->code != FE_EINPUT)
        return fe_error_set(im->err, be->code, "%s", be->message);
    /* The builder names the file (its label) first; the node goes between. */
    const char *m = be->message;
    size_t n = strlen(im->path);
    if (strncmp(m, im->path, n) == 0 && strncmp(m + n, ": ", 2) == 0)
        m += n + 2;
    return imp_fail(im, "%s", m);
}

void imp_note(imp *im, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof msg - 2)
        n = (int)sizeof msg - 2;
    msg[n++] = '\n';
    if (im->nnotes + (size_t)n + 1 > im->capnotes) {
        size_t cap = (im->capnotes + (size_t)n + 1) * 2;
        char *p = realloc(im->notes, cap);
        if (!p)
            return;
        im->notes = p;
        im->capnotes = cap;
    }
    memcpy(im->notes + im->nnotes, msg, (size_t)n);
    im->nnotes += (size_t)n;
    im->notes[im->nnotes] = 0;
}

void *imp_alloc(imp *im, size_t n)
{
    if (im->nowned == im->capowned) {
        int cap = im->capowned ? 2 * im->capowned : 256;
        void **p = realloc(im->owned, (size_t)cap * sizeof *p);
        if (!p) {
            fe_error_set(im->err, FE_ENOMEM, "out of memory");
            return NULL;
        }
        im->owned = p;
        im->capowned = cap;
    }
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        fe_error_set(im->err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    im->owned[im->nowned++] = p;
    return p;
}

/* Grow the per-name maps to cover every id of im->strs. */
static int grow_maps(imp *im)
{
    int32_t n = fe_strtab_count(im->strs);
    if (n <= im->nmap)
        return FE_OK;
    int32_t cap = n * 2 + 64;
    int32_t *v = realloc(im->val_of, (size_t)cap * sizeof *v);
    if (v)
        im->val_of = v;
    uint8_t *t = realloc(im->taken, (size_t)cap);
    if (t)
        im->taken = t;
    int32_t *k = realloc(im->next_k, (size_t)cap * sizeof *k);
    if (k)
        im->next_k = k;
    const Onnx__ValueInfoProto **vi = realloc(im->vinfo, (size_t)cap * sizeof *vi);
    if (vi)
        im->vinfo = vi;
    if (!v || !t || !k || !vi)
        return fe_error_set(im->err, FE_ENOMEM, "out of memory");
    for (int32_t i = im->nmap; i < cap; i++) {
        im->val_of[i] = -1;
        im->taken[i] = 0;
        im->next_k[i] = 2;
        im->vinfo[i] = NULL;
    }
    im->nmap = cap;
    return FE_OK;
}

int32_t imp_intern(imp *im, const char *s)
{
    int32_t id = fe_strtab_intern(im->strs, s, strlen(s));
    if (id < 0) {
        fe_error_set(im->err, FE_ENOMEM, "out of memory");
        return -1;
    }
    if (id >= im->nmap && grow_maps(im))
        return -1;
    return id;
}

imp_val *imp_get(imp *im, const char *name)
{
    int32_t id = fe_strtab_find(im->strs, name, strlen(name));
    if (id < 0 || id >= im->nmap || im->val_of[id] < 0)
        return NULL;
    int32_t i = im->val_of[id];
    return &im->blocks[i >> 10][i & 1023];
}

/* A new value named by id (a name of im->strs). */
static imp_val *new_val_id(imp *im, int32_t id)
{
    if (im->nvals == im->nblocks * 1024) {
        imp_val **p = realloc(im->blocks, (size_t)(im->nblocks + 1) * sizeof *p);
        if (!p) {
            fe_error_set(im->err, FE_ENOMEM, "out of memory");
            return NULL;
        }
        im->blocks = p;
        if (!(p[im->nblocks] = imp_alloc(im, 1024 * sizeof **p)))
            return NULL;
        im->nblocks++;
    }
    imp_val *v = &im->blocks[im->nvals >> 10][im->nvals & 1023];
    memset(v, 0, sizeof *v);
    v->tensor = -1;
    v->name = id;
    im->val_of[id] = im->nvals++;
    return v;
}

imp_val *imp_new_val(imp *im, const char *name)
{
    int32_t id = imp_intern(im, name);
    return id < 0 ? NULL : new_val_id(im, id);
}

imp_val *imp_opt(imp *im, int k)
{
    const Onnx__NodeProto *n = im->node;
    if (k < 0 || k >= (int)n->n_input || !n->input[k][0])
        return NULL;
    return imp_get(im, n->input[k]);
}

imp_val *imp_in(imp *im, int k)
{
    imp_val *v = imp_opt(im, k);
    if (!v)
        imp_fail(im, "internal: input %d is missing, and the op's table says it is required", k);
    return v;
}

/* A fresh name: base, or base_2, base_3, ... not yet taken as kind; its
 * id. The suffixes tried after base are remembered, so that a name shared
 * by many nodes costs each one step, not one per earlier node. */
static int32_t fresh(imp *im, const char *base, int kind)
{
    char buf[FE_MAX_NAME];
    int32_t bid = imp_intern(im, base), id = bid;
    if (bid < 0)
        return -1;
    for (;;) {
        if (!(im->taken[id] & kind) && (kind != IMP_TENSOR || im->val_of[id] < 0)) {
            im->taken[id] |= (uint8_t)kind;
            return id;
        }
        int k = im->next_k[bid]++;
        snprintf(buf, sizeof buf, "%s_%d", base, k);
        if ((id = imp_intern(im, buf)) < 0)
            return -1;
    }
}

int32_t imp_tensor(imp *im, imp_val *v)
{
    if (v->tensor >= 0)
        return v->tensor;
    /* A constant read as a tensor: a weight under its ONNX name. */
    if (!v->is_const) {
        imp_fail(im, "internal: value without a tensor");
        return -1;
    }
    if (imp_numel(v->shape, v->rank) == 0) {
        imp_fail(im, "constant '%s' is empty (shape with a 0), which is read as a tensor; empty "
                 "tensors are not supported", fe_strtab_str(im->strs, v->name));
        return -1;
    }
    if (imp_const_encode(im, v))
        return -1;
    if (fe_builder_tensor(im->b, fe_strtab_str(im->strs, v->name), v->dtype, FE_WEIGHT, v->rank,
                          v->shape, 0) < 0) {
        imp_sync(im);
        return -1;
    }
    if (im->nweights == im->capweights) {
        int cap = im->capweights ? 2 * im->capweights : 256;
        imp_val **p = realloc(im->weights, (size_t)cap * sizeof *p);
        if (!p) {
            fe_error_set(im->err, FE_ENOMEM, "out of memory");
            return -1;
        }
        im->weights = p;
        im->capweights = cap;
    }
    v->tensor = v->name;
    im->taken[v->name] |= IMP_TENSOR;
    im->weights[im->nweights++] = v;
    return v->tensor;
}

/* A value that is a tensor of the graph under the name id. */
static imp_val *value_id(imp *im, int32_t id, int dtype, int rank, const int64_t *shape)
{
    imp_val *v = new_val_id(im, id);
    if (!v)
        return NULL;
    v->dtype = dtype;
    v->rank = rank;
    if (rank)
        memcpy(v->shape, shape, (size_t)rank * sizeof *shape);
    v->tensor = id;
    im->taken[id] |= IMP_TENSOR;
    return v;
}

static imp_val *value(imp *im, const char *name, int dtype, int rank, const int64_t *shape)
{
    int32_t id = imp_intern(im, name);
    return id < 0 ? NULL : value_id(im, id, dtype, rank, shape);
}

imp_val *imp_out(imp *im, int k, int dtype, int rank, const int64_t *shape)
{
    if (k >= (int)im->node->n_output || !im->node->output[k][0]) {
        imp_fail(im, "output %d is missing", k);
        return NULL;
    }
    const char *name = im->node->output[k];
    if (imp_get(im, name)) {
        imp_fail(im, "output '%s' is produced twice (not a valid ONNX graph)", name);
        return NULL;
    }
    return value(im, name, dtype, rank, shape);
}

imp_val *imp_tmp(imp *im, int dtype, int rank, const int64_t *shape)
{
    char base[FE_MAX_NAME];
    snprintf(base, sizeof base, "%s/%d", im->node->n_output ? im->node->output[0] : im->node_name,
             im->emitted);
    int32_t id = fresh(im, base, IMP_TENSOR);
    return id < 0 ? NULL : value_id(im, id, dtype, rank, shape);
}

imp_val *imp_const_tmp(imp *im, int dtype, int rank, const int64_t *shape)
{
    char base[FE_MAX_NAME];
    snprintf(base, sizeof base, "%s/w%d", im->node_name, im->emitted);
    int32_t id = fresh(im, base, IMP_TENSOR);
    imp_val *v = id < 0 ? NULL : new_val_id(im, id);
    return v ? imp_const_new(im, v, dtype, rank, shape) : NULL;
}

int32_t fresh_node_name(imp *im)
{
    char base[FE_MAX_NAME];
    if (im->emitted)
        snprintf(base, sizeof base, "%s/%d", im->node_name, im->emitted);
    else
        snprintf(base, sizeof base, "%s", im->node_name);
    return fresh(im, base, IMP_NODE);
}

int32_t imp_emit(imp *im, const char *op, imp_val *const *ins, int nin, imp_val *out)
{
    /* Every name is an id until the call: making a weight or a name may
     * move the table's text, so the strings are taken last. */
    for (int i = 0; i < nin; i++)
        if (imp_tensor(im, ins[i]) < 0)
            return -1;
    int32_t name = fresh_node_name(im);
    if (name < 0)
        return -1;
    if (nin > im->capnames) {
        const char **p = realloc(im->names, (size_t)nin * sizeof *p);
        if (!p) {
            fe_error_set(im->err, FE_ENOMEM, "out of memory");
            return -1;
        }
        im->names = p;
        im->capnames = nin;
    }
    for (int i = 0; i < nin; i++)
        im->names[i] = fe_strtab_str(im->strs, ins[i]->tensor);
    const char *outn = fe_strtab_str(im->strs, out->tensor);
    im->emitted++;
    im->nnodes++;
    int32_t nd = fe_builder_node(im->b, fe_strtab_str(im->strs, name), op, im->names, nin, &outn,
                                 1, 0);
    if (nd < 0)
        imp_sync(im);
    return nd;
}

int imp_alias(imp *im, const char *name, imp_val *v)
{
    if (imp_get(im, name))
        return imp_fail(im, "output '%s' is produced twice (not a valid ONNX graph)", name);
    imp_val copy = *v;
    imp_val *a = imp_new_val(im, name);
    if (!a)
        return im->err->code;
    copy.name = a->name;
    *a = copy;
    return FE_OK;
}

const char *imp_dim_name(imp *im, int64_t sym)
{
    for (int i = 0; i < im->ndims; i++)
        if (im->dims[i].sym == sym)
            return fe_strtab_str(im->strs, im->dims[i].name);
    return "?";
}

int64_t imp_dim_value(imp *im, int64_t sym)
{
    for (int i = 0; i < im->ndims; i++) {
        if (im->dims[i].sym != sym)
            continue;
        const char *name = fe_strtab_str(im->strs, im->dims[i].name);
        int64_t v = 1;
        for (int k = 0; k < im->ngiven; k++)
            if (!strcmp(im->given_names[k], name))
                v = im->given_values[k];
        if (im->fixed_noted != im->node_index + 1) {
            im->fixed_noted = im->node_index + 1;
            imp_note(im, "warning: node '%s' (%s) computes with symbolic dim '%s' in a way no dim "
                     "name can say: folded to %s=%lld there, so the model is valid at that value "
                     "only (re-import with --dim %s=V for another)", im->node_name,
                     im->node ? im->node->op_type : "?", name, name, (long long)v, name);
        }
        return v;
    }
    return 1;
}

int imp_check_shape(imp *im, const int64_t *shape, int rank, const char *what)
{
    for (int i = 0; i < rank; i++) {
        if (FE_IS_SYM(shape[i])) {
            int known = 0;
            for (int k = 0; k < im->ndims; k++)
                known |= im->dims[k].sym == shape[i];
            if (!known)
                return imp_fail(im, "internal: %s dim %d is an unknown dim name", what, i);
        } else if (shape[i] < 1 || shape[i] > IMP_DIM_MAX) {
            return imp_fail(im, "%s dim %d is %lld; dims must be 1 to %lld (empty tensors are not "
                            "supported)", what, i, (long long)shape[i], (long long)IMP_DIM_MAX);
        }
    }
    return FE_OK;
}

/* ---- the driver ---- */

/* A dim name of a declared type: a model dim (default 1); its FE_SYM. */
static int declared_dim(imp *im, const char *name, int64_t *sym)
{
    int32_t id = fe_builder_dim_id(im->b, name);
    if (id < 0)
        return imp_sync(im);
    *sym = FE_SYM(id);
    for (int k = 0; k < im->ndims; k++)
        if (im->dims[k].sym == *sym)
            return FE_OK;
    if (im->ndims == 256)
        return imp_fail(im, "more than 256 symbolic dims");
    int32_t nid = imp_intern(im, name);
    if (nid < 0)
        return im->err->code;
    im->dims[im->ndims].sym = *sym;
    im->dims[im->ndims++].name = nid;
    return fe_builder_dim(im->b, name, 1, 0) ? imp_sync(im) : FE_OK;
}

int imp_declared(imp *im, const Onnx__ValueInfoProto *vi, const char *what, int *dtype, int *rank,
                 int64_t *shape)
{
    const Onnx__TypeProto *t = vi->type;
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type->shape)
        return 0;
    const Onnx__TypeProto__Tensor *tt = t->tensor_type;
    *dtype = fe_onnx_dtype(tt->elem_type);
    if (*dtype < 0)
        return imp_fail(im, "%s has type %s, which is not supported (f32, f16, bf16, i64, i32, "
                        "i8, bool)", what, fe_onnx_dtype_name(tt->elem_type));
    if (tt->shape->n_dim > FE_MAX_RANK)
        return imp_fail(im, "%s has rank %zu (at most %d)", what, tt->shape->n_dim, FE_MAX_RANK);
    *rank = (int)tt->shape->n_dim;
    for (int i = 0; i < *rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            if (d->dim_value < 1 || d->dim_value > IMP_DIM_MAX)
                return imp_fail(im, "%s dim %d is %lld; dims must be 1 to %lld (empty tensors are "
                                "not supported); fix the shape in the export", what, i,
                                (long long)d->dim_value, (long long)IMP_DIM_MAX);
            shape[i] = d->dim_value;
            continue;
        }
        if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
            !d->dim_param[0])
            return imp_fail(im, "%s dim %d has neither a size nor a name; name it (dynamic_axes "
                            "in torch.onnx.export) or fix it", what, i);
        if (declared_dim(im, d->dim_param, &shape[i]))
            return im->err->code;
    }
    return 1;
}

static int add_inputs(imp *im)
{
    const Onnx__GraphProto *g = im->o->graph;
    char what[FE_MAX_NAME + 32];
    for (size_t i = 0; i < im->o->ninits; i++) {
        const Onnx__TensorProto *t = im->o->inits[i];
        if (imp_get(im, t->name))
            return imp_fail(im, "initializer '%s' is listed twice", t->name);
        imp_val *v = imp_new_val(im, t->name);
        if (!v || imp_const_from_proto(im, v, t, "initializer"))
            return im->err->code;
    }
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        imp_val *known = imp_get(im, vi->name);
        if (known && known->is_const)
            continue;   /* an initializer listed as an input too (IR version < 4) */
        if (known)
            return imp_fail(im, "graph input '%s' is listed twice", vi->name);
        int32_t in_id = imp_intern(im, vi->name);
        if (in_id < 0)
            return im->err->code;
        im->taken[in_id] |= IMP_GRAPH_INPUT;
        int dtype, rank;
        int64_t shape[FE_MAX_RANK];
        snprintf(what, sizeof what, "graph input '%s'", vi->name);
        int r = imp_declared(im, vi, what, &dtype, &rank, shape);
        if (r == 0)
            return imp_fail(im, "graph input '%s' has no tensor type with a shape", vi->name);
        if (r < 0 || im->err->code)
            return im->err->code;
        if (!value(im, vi->name, dtype, rank, shape) ||
            fe_builder_tensor(im->b, vi->name, dtype, FE_INPUT, rank, shape, 0) < 0)
            return imp_sync(im);
    }
    for (size_t i = 0; i < g->n_value_info; i++) {
        int32_t id = imp_intern(im, g->value_info[i]->name);
        if (id < 0)
            return im->err->code;
        im->vinfo[id] = g->value_info[i];
    }
    for (size_t i = 0; i < g->n_output; i++) {
        int32_t id = imp_intern(im, g->output[i]->name);
        if (id < 0)
            return im->err->code;
        if (im->taken[id] & IMP_GRAPH_OUTPUT)
            return imp_fail(im, "graph output '%s' is listed twice", g->output[i]->name);
        im->taken[id] |= IMP_GRAPH_OUTPUT;
        im->vinfo[id] = g->output[i];
    }
    return FE_OK;
}

/* Reserve every name the ONNX graph uses, so that names made up for
 * intermediate tensors and extra nodes never collide with one. */
static int reserve_names(imp *im)
{
    const Onnx__GraphProto *g = im->o->graph;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t k = 0; k < n->n_output; k++) {
            int32_t id = imp_intern(im, n->output[k]);
            if (id < 0)
                return im->err->code;
            im->taken[id] |= IMP_TENSOR;
        }
        if (n->name && n->name[0]) {
            int32_t id = imp_intern(im, n->name);
            if (id < 0)
                return im->err->code;
            im->taken[id] |= IMP_ONNX_NODE;   /* node names made up avoid it */
        }
    }
    return FE_OK;
}

static int map_each_node(imp *im, fe_progress *pr)
{
    const Onnx__GraphProto *g = im->o->graph;
    if (!g->n_node)
        return imp_fail(im, "the graph has no nodes; there is nothing to import");
    for (size_t i = 0; i < g->n_node && !im->err->code; i++) {
        const Onnx__NodeProto *n = g->node[i];
        char base[FE_MAX_NAME];
        fe_progress_step(pr, (int64_t)i, n->op_type);
        if (n->name && n->name[0])
            snprintf(base, sizeof base, "%s", n->name);
        else
            snprintf(base, sizeof base, "%s_%zu", n->op_type, i);
        snprintf(im->name_buf, sizeof im->name_buf, "%s", base);
        im->node = n;
        im->node_name = im->name_buf;
        im->node_index = (int)i;
        im->emitted = 0;
        if (imp_check_node(im))
            return im->err->code;
        for (size_t k = 0; k < n->n_input; k++)
            if (n->input[k][0] && !imp_get(im, n->input[k]))
                return imp_fail(im, "input '%s' is not produced by an earlier node, an "
                                "initializer or a graph input (the graph must be "
                                "topologically sorted)", n->input[k]);
        if (!(n->name && n->name[0])) {
            int32_t f = fresh(im, base, IMP_NODE | IMP_ONNX_NODE);
            if (f < 0)
                return im->err->code;
            snprintf(im->name_buf, sizeof im->name_buf, "%s", fe_strtab_str(im->strs, f));
            /* Reserved against other made-up names; the first node
             * emitted for it takes it as a node name. */
            im->taken[f] &= (uint8_t)~IMP_NODE;
        }
        int r = imp_fold(im);
        if (r < 0)
            return im->err->code ? im->err->code : imp_fail(im, "internal: folding failed");
        if (r == 0 && imp_map(im))
            return im->err->code;
        if (r == 1)
            im->nfolded++;
        if (imp_sync(im))
            return im->err->code;
    }
    im->node = NULL;
    return im->err->code;
}

/* The nodes in turn, with a progress line: a large file maps for a while. */
static int map_nodes(imp *im)
{
    fe_progress pr;
    fe_progress_begin(&pr, "import: node", (int64_t)im->o->graph->n_node);
    int rc = map_each_node(im, &pr);
    fe_progress_end(&pr);
    return rc;
}

/* Graph outputs keep their ONNX names and declared shapes (so that our
 * inference checks them). */
static int add_outputs(imp *im)
{
    const Onnx__GraphProto *g = im->o->graph;
    char what[FE_MAX_NAME + 32];
    if (!g->n_output)
        return imp_fail(im, "the graph has no outputs; there is nothing to compute");
    for (size_t i = 0; i < g->n_output; i++) {
        const Onnx__ValueInfoProto *vi = g->output[i];
        imp_val *v = imp_get(im, vi->name);
        if (!v)
            return imp_fail(im, "graph output '%s' is produced by no node", vi->name);
        if (v->is_const)
            return imp_fail(im, "graph output '%s' is a constant (an initializer, or nodes that "
                            "fold to one); fuseeng's graph outputs are computed by nodes",
                            vi->name);
        int32_t t = imp_tensor(im, v);
        if (t < 0)
            return im->err->code;
        const char *tn = fe_strtab_str(im->strs, t);
        if (im->taken[t] & IMP_GRAPH_INPUT)
            return imp_fail(im, "graph output '%s' is a graph input%s%s%s; fuseeng's graph "
                            "outputs are computed by nodes", vi->name, strcmp(tn, vi->name) ?
                            " (an Identity of '" : "", strcmp(tn, vi->name) ? tn : "",
                            strcmp(tn, vi->name) ? "')" : "");
        if (strcmp(tn, vi->name) != 0)
            return imp_fail(im, "graph output '%s' is another name of '%s' (an Identity of an "
                            "input or weight); the importer keeps one name per tensor",
                            vi->name, tn);
        int dtype, rank;
        int64_t shape[FE_MAX_RANK];
        snprintf(what, sizeof what, "graph output '%s'", vi->name);
        int r = imp_declared(im, vi, what, &dtype, &rank, shape);
        if (r < 0 || im->err->code)
            return im->err->code;
        if (r == 1 && !(im->taken[t] & IMP_DECLARED) &&
            fe_builder_tensor(im->b, vi->name, dtype, FE_ACTIVATION, rank, shape, 0) < 0)
            return imp_sync(im);
        if (fe_builder_output(im->b, vi->name, 0))
            return imp_sync(im);
    }
    return FE_OK;
}

static void imp_free(imp *im)
{
    for (int i = 0; i < im->nowned; i++)
        free(im->owned[i]);
    free(im->owned);
    free(im->blocks);
    free(im->val_of);
    free(im->taken);
    free(im->next_k);
    free(im->vinfo);
    free(im->weights);
    free(im->names);
    fe_strtab_free(im->strs);
    if (im->b)
        fe_builder_free(im->b);
}

/* ---- writing the pair ---- */

/* src as text for a name or a note: at most cap - 1 bytes of whole UTF-8
 * characters, each control character or byte that is not UTF-8 an '_'
 * (file names and producer names come from outside, unchecked). */
static void clean_text(char *dst, size_t cap, const char *src)
{
    const unsigned char *u = (const unsigned char *)src;
    size_t n = strlen(src), k = 0;
    for (size_t i = 0; i < n && k + 1 < cap;) {
        size_t len = u[i] < 0x80 ? 1 : fe_jr_utf8_len(u + i, n - i);
        int bad = !len || u[i] < 0x20 || u[i] == 0x7f || (u[i] == 0xc2 && u[i + 1] < 0xa0);
        if (bad || k + len >= cap) {
            if (!bad)
                break;
            dst[k++] = '_';
            i += len ? len : 1;
            continue;
        }
        memcpy(dst + k, u + i, len);
        k += len;
        i += len;
    }
    dst[k] = 0;
}

/* The weights stamp: 64 bits mixed from every weight's name, dtype, shape
 * and bytes, eight bytes a step. Two imports that write the same weights
 * stamp them alike, and then it does not matter which model file is
 * beside which weights file. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    size_t i = 0;
    uint64_t w;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, c + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, c + i, n - i);
    h = (h ^ w ^ (uint64_t)n) * 0xff51afd7ed558ccdu;
    return h ^ (h >> 32);
}

static void weights_stamp(const imp *im, char *out, size_t cap)
{
    uint64_t h = 0x6a09e667f3bcc909u;
    for (int i = 0; i < im->nweights; i++) {
        const imp_val *v = im->weights[i];
        const char *name = fe_strtab_str(im->strs, v->tensor);
        int64_t meta[2 + FE_MAX_RANK] = {v->dtype, v->rank};
        memcpy(meta + 2, v->shape, (size_t)v->rank * sizeof *v->shape);
        h = mix(h, name, strlen(name) + 1);
        h = mix(h, meta, sizeof meta);
        h = mix(h, v->data, (size_t)(imp_numel(v->shape, v->rank) * fe_dtype_size(v->dtype)));
    }
    snprintf(out, cap, "%016llx", (unsigned long long)h);
}

/* A test's hook, not a feature, and left out of the docs on purpose:
 * FUSEENG_TEST_IMPORT_PAUSE=written stops the import for five seconds with
 * both temporary files written, =renames between the two renames (signals
 * blocked), saying so on stderr, so that tests/cli/import_atomic.sh can
 * signal or kill it there. */
static void test_pause(const char *where)
{
    const char *e = getenv("FUSEENG_TEST_IMPORT_PAUSE");
    if (!e || strcmp(e, where) != 0)
        return;
    fprintf(stderr, "import: test pause %s\n", where);
    for (int i = 0; i < 50; i++)
        usleep(100000);
}

static void pause_renames(void)
{
    test_pause("renames");
}

/* Write the weights to wpath and the model to out, both or neither
 * (docs/import.md): each to a temporary file beside it, then the weights
 * renamed into place and the model last (fe_outfile_commit_pair), the
 * model recording the weights' stamp. A SIGINT, SIGTERM, SIGHUP or SIGQUIT
 * meanwhile removes the temporary files (fe_outfile_trap_signals). */
static int write_files(imp *im, const fe_graph *g, const char *out, const char *wpath,
                       const char *stamp)
{
    fe_st_writer *w = fe_st_writer_new(wpath, im->err);
    if (!w)
        return im->err->code;
    for (int i = 0; i < im->nweights; i++) {
        imp_val *v = im->weights[i];
        int64_t n = imp_numel(v->shape, v->rank);
        if (fe_st_writer_add(w, fe_strtab_str(im->strs, v->tensor), v->dtype, v->rank, v->shape,
                             v->data, n * fe_dtype_size(v->dtype), im->err)) {
            fe_st_writer_abort(w);
            return im->err->code;
        }
    }
    if (fe_st_writer_meta(w, "format", "pt", im->err) ||
        fe_st_writer_meta(w, FE_WEIGHTS_STAMP_KEY, stamp, im->err)) {
        fe_st_writer_abort(w);
        return im->err->code;
    }
    fe_outfile ow, om;
    fe_outfile_trap_signals(1);
    int rc = fe_st_writer_write(w, &ow, im->err);
    if (rc == FE_OK && (rc = fe_outfile_open(&om, out, "the model", im->err)) != FE_OK)
        fe_outfile_abort(&ow);
    if (rc == FE_OK && (rc = fe_save_model(g, om.f, 1, im->err)) != FE_OK) {
        fe_outfile_abort(&om);
        fe_outfile_abort(&ow);
        fe_error_prefix(im->err, "%s: ", out);
    }
    if (rc == FE_OK) {
        test_pause("written");
        rc = fe_outfile_commit_pair(&ow, &om, pause_renames, im->err);
    }
    fe_outfile_trap_signals(0);
    return rc;
}

/* Name the model after the file (exporters name every graph alike,
 * "torch_jit"), and say in its source where it came from. */
static void describe(const imp *im, char *gname, size_t ncap, char *source, size_t scap)
{
    const char *path = im->path, *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char b[256], p[512], gr[256], pr[256];
    size_t len = strlen(base);
    snprintf(b, sizeof b, "%.*s", (int)(len > 5 && !strcmp(base + len - 5, ".onnx") ? len - 5 : len),
             base);
    clean_text(gname, ncap, b);
    if (!gname[0])
        snprintf(gname, ncap, "model");
    clean_text(p, sizeof p, path);
    clean_text(gr, sizeof gr, im->o->graph->name ? im->o->graph->name : "");
    clean_text(pr, sizeof pr, im->o->model->producer_name ? im->o->model->producer_name : "");
    snprintf(source, scap, "imported from %s (ONNX opset %lld, graph '%s'%s%s)", p,
             (long long)im->o->opset, gr, pr[0] ? ", " : "", pr);
}

int fe_import_onnx_file(const char *path, const char *out, const fe_import_opts *opt,
                        char **notes, fe_error *err)
{
    fe_error local = {0};
    if (!err)
        err = &local;
    if (notes)
        *notes = NULL;
    fe_import_opts none = {0};
    if (!opt)
        opt = &none;
    char wpath[4096];
    int wlen;
    if (opt->weights_out) {
        wlen = snprintf(wpath, sizeof wpath, "%s", opt->weights_out);
    } else {
        size_t len = strlen(out);
        if (len > 5 && strcmp(out + len - 5, ".json") == 0)
            len -= 5;
        wlen = snprintf(wpath, sizeof wpath, "%.*s.safetensors", (int)len, out);
    }
    if (wlen < 0 || wlen >= (int)sizeof wpath)
        return fe_error_set(err, FE_EINPUT, "%s: the weights file's path is over %zu bytes",
                            path, sizeof wpath - 1);
    fe_onnx *o = fe_onnx_read(path, err);
    if (!o)
        return err->code;
    imp im = {.o = o, .path = path, .err = err, .ngiven = opt->ndims,
              .given_names = opt->dim_names, .given_values = opt->dim_values};
    im.strs = fe_strtab_new();
    im.b = fe_builder_new(path, err);
    if (!im.strs || !im.b) {
        if (!err->code)
            fe_error_set(err, FE_ENOMEM, "out of memory");
        imp_free(&im);
        fe_onnx_free(o);
        return err->code;
    }
    char gname[256], source[1536], stamp[32] = "";
    describe(&im, gname, sizeof gname, source, sizeof source);
    fe_graph *g = NULL;
    int built = !fe_builder_meta(im.b, gname, source) && !grow_maps(&im) && !reserve_names(&im) &&
                !add_inputs(&im) && !map_nodes(&im) && !add_outputs(&im);
    if (built) {
        for (int i = 0; i < opt->ndims; i++)
            if (fe_builder_set_dim(im.b, opt->dim_names[i], opt->dim_values[i]))
                break;
        for (int i = 0; i < im.ndims; i++) {
            const char *name = fe_strtab_str(im.strs, im.dims[i].name);
            int64_t val = 1;
            for (int k = 0; k < opt->ndims; k++)
                if (strcmp(opt->dim_names[k], name) == 0)
                    val = opt->dim_values[k];
            imp_note(&im, "note: symbolic dim '%s' is a model dim, default %lld%s", name,
                     (long long)val, val == 1 && opt->ndims == 0 ? " (set it with --dim NAME=V)" : "");
        }
        weights_stamp(&im, stamp, sizeof stamp);
        fe_builder_weights_stamp(im.b, stamp);
    }
    if (!built && !imp_sync(&im))
        imp_fail(&im, "internal: the import stopped without a message");
    fe_builder *b = im.b;
    im.b = NULL;
    if (!err->code)
        g = fe_builder_finish(b, err);
    else
        fe_builder_free(b);
    if (g && !err->code && write_files(&im, g, out, wpath, stamp) == FE_OK)
        imp_note(&im, "imported %s: %d ONNX nodes -> %d nodes (%d custom, %d folded away), %d "
                 "weights in %s", path, (int)o->graph->n_node, g->nnodes, im.ncustom, im.nfolded,
                 im.nweights, wpath);
    if (err->code && !strstr(err->message, path))
        fe_error_prefix(err, "%s: ", path);
    fe_graph_free(g);
    if (notes)
        *notes = im.notes;
    else
        free(im.notes);
    imp_free(&im);
    fe_onnx_free(o);
    return err->code;
}
