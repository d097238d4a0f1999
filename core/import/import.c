/* import.c: `fuseeng import model.onnx -o model.json`: the driver. Reads
 * the ONNX file (onnx_read.c), walks its nodes in order, folding constant
 * ones (onnx_fold.c) and mapping the rest (onnx_map.c) onto the graph
 * builder, so that our own inference checks every shape; then writes the
 * weights (safetensors.h) and the model (save.h), each whole or not at all.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"
#include "onnx_imp.h"
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
        return fe_error_set(im->err, FE_EINPUT, "%s: node '%s' (%s): %s", im->path,
                            im->node_name, im->node->op_type, msg);
    return fe_error_set(im->err, FE_EINPUT, "%s: %s", im->path, msg);
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
    const Onnx__ValueInfoProto **vi = realloc(im->vinfo, (size_t)cap * sizeof *vi);
    if (vi)
        im->vinfo = vi;
    if (!v || !t || !vi)
        return fe_error_set(im->err, FE_ENOMEM, "out of memory");
    for (int32_t i = im->nmap; i < cap; i++) {
        im->val_of[i] = -1;
        im->taken[i] = 0;
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

imp_val *imp_new_val(imp *im, const char *name)
{
    int32_t id = imp_intern(im, name);
    if (id < 0)
        return NULL;
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

imp_val *imp_in(imp *im, int k)
{
    const Onnx__NodeProto *n = im->node;
    if (k >= (int)n->n_input || !n->input[k][0])
        return NULL;
    return imp_get(im, n->input[k]);
}

/* A fresh name: base, or base_2, base_3, ... not yet taken as kind. */
static const char *fresh(imp *im, const char *base, int kind)
{
    char buf[FE_MAX_NAME];
    snprintf(buf, sizeof buf, "%s", base);
    for (int k = 2;; k++) {
        int32_t id = imp_intern(im, buf);
        if (id < 0)
            return NULL;
        if (!(im->taken[id] & kind) && (kind != 1 || im->val_of[id] < 0)) {
            im->taken[id] |= (uint8_t)kind;
            return fe_strtab_str(im->strs, id);
        }
        snprintf(buf, sizeof buf, "%s_%d", base, k);
    }
}

const char *imp_tensor(imp *im, imp_val *v)
{
    if (v->tensor >= 0)
        return fe_strtab_str(im->strs, v->tensor);
    /* A constant read as a tensor: a weight under its ONNX name. */
    int32_t name = v->name;
    if (!v->is_const) {
        imp_fail(im, "internal: value without a tensor");
        return NULL;
    }
    if (imp_const_encode(im, v))
        return NULL;
    if (fe_builder_tensor(im->b, fe_strtab_str(im->strs, name), v->dtype, FE_WEIGHT, v->rank,
                          v->shape, 0) < 0)
        return NULL;
    v->tensor = name;
    im->taken[name] |= 1;
    if (im->nweights == im->capweights) {
        int cap = im->capweights ? 2 * im->capweights : 256;
        imp_val **p = realloc(im->weights, (size_t)cap * sizeof *p);
        if (!p) {
            fe_error_set(im->err, FE_ENOMEM, "out of memory");
            return NULL;
        }
        im->weights = p;
        im->capweights = cap;
    }
    im->weights[im->nweights++] = v;
    return fe_strtab_str(im->strs, name);
}

static imp_val *value(imp *im, const char *name, int dtype, int rank, const int64_t *shape)
{
    imp_val *v = imp_new_val(im, name);
    if (!v)
        return NULL;
    v->dtype = dtype;
    v->rank = rank;
    if (rank)
        memcpy(v->shape, shape, (size_t)rank * sizeof *shape);
    v->tensor = imp_intern(im, name);
    im->taken[v->tensor] |= 1;
    return v;
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
    const char *name = fresh(im, base, 1);
    return name ? value(im, name, dtype, rank, shape) : NULL;
}

int32_t imp_emit(imp *im, const char *op, imp_val *const *ins, int nin, imp_val *out)
{
    const char *in[16];
    for (int i = 0; i < nin; i++)
        if (!(in[i] = imp_tensor(im, ins[i])))
            return -1;
    char base[FE_MAX_NAME];
    if (im->emitted)
        snprintf(base, sizeof base, "%s/%d", im->node_name, im->emitted);
    else
        snprintf(base, sizeof base, "%s", im->node_name);
    const char *name = fresh(im, base, 2);
    if (!name)
        return -1;
    im->emitted++;
    im->nnodes++;
    const char *outn = fe_strtab_str(im->strs, out->tensor);
    return fe_builder_node(im->b, name, op, in, nin, &outn, 1, 0);
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
            return im->dims[i].name;
    return "?";
}

int64_t imp_dim_value(imp *im, int64_t sym)
{
    for (int i = 0; i < im->ndims; i++) {
        if (im->dims[i].sym != sym)
            continue;
        int64_t v = 1;
        for (int k = 0; k < im->ngiven; k++)
            if (!strcmp(im->given_names[k], im->dims[i].name))
                v = im->given_values[k];
        if (i < 64 && !(im->fixed_noted & (1ull << i))) {
            im->fixed_noted |= 1ull << i;
            imp_note(im, "note: node '%s' (%s) computes with symbolic dim '%s': the model holds "
                     "%s=%lld there and is valid at that value only (re-import with --dim %s=V "
                     "for another)", im->node_name, im->node ? im->node->op_type : "?",
                     im->dims[i].name, im->dims[i].name, (long long)v, im->dims[i].name);
        }
        return v;
    }
    return 1;
}

/* ---- attributes ---- */

const Onnx__AttributeProto *imp_attr(const Onnx__NodeProto *n, const char *key)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && strcmp(n->attribute[i]->name, key) == 0)
            return n->attribute[i];
    return NULL;
}

int64_t imp_attr_int(const Onnx__NodeProto *n, const char *key, int64_t dflt)
{
    const Onnx__AttributeProto *a = imp_attr(n, key);
    return a && a->has_i ? a->i : a && a->has_f ? (int64_t)a->f : dflt;
}

double imp_attr_float(const Onnx__NodeProto *n, const char *key, double dflt)
{
    const Onnx__AttributeProto *a = imp_attr(n, key);
    return a && a->has_f ? a->f : a && a->has_i ? (double)a->i : dflt;
}

const char *imp_attr_str(const Onnx__NodeProto *n, const char *key, const char *dflt)
{
    static char buf[256];
    const Onnx__AttributeProto *a = imp_attr(n, key);
    if (!a || !a->has_s)
        return dflt;
    size_t len = a->s.len < sizeof buf - 1 ? a->s.len : sizeof buf - 1;
    memcpy(buf, a->s.data, len);
    buf[len] = 0;
    return buf;
}

int imp_attr_ints(const Onnx__NodeProto *n, const char *key, int64_t *out, int max)
{
    const Onnx__AttributeProto *a = imp_attr(n, key);
    if (!a)
        return -1;
    int k = (int)a->n_ints < max ? (int)a->n_ints : max;
    memcpy(out, a->ints, (size_t)k * sizeof *out);
    return k;
}

/* ---- the driver ---- */

/* A declared ONNX type (graph input or output, value_info) as dtype and
 * shape; dims by name become model dims (default 1). 0 if it has none. */
int imp_declared(imp *im, const Onnx__ValueInfoProto *vi, int *dtype, int *rank, int64_t *shape)
{
    const Onnx__TypeProto *t = vi->type;
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type->shape)
        return 0;
    const Onnx__TypeProto__Tensor *tt = t->tensor_type;
    *dtype = fe_onnx_dtype(tt->elem_type);
    if (*dtype < 0)
        return imp_fail(im, "tensor '%s' has type %s, which is not supported (f32, f16, bf16, "
                        "i64, i32, i8, bool)", vi->name, fe_onnx_dtype_name(tt->elem_type));
    if (tt->shape->n_dim > FE_MAX_RANK)
        return imp_fail(im, "tensor '%s' has rank %zu (at most %d)", vi->name,
                        tt->shape->n_dim, FE_MAX_RANK);
    *rank = (int)tt->shape->n_dim;
    for (int i = 0; i < *rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            shape[i] = d->dim_value;
            continue;
        }
        if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
            !d->dim_param[0])
            return imp_fail(im, "tensor '%s' dim %d has neither a size nor a name; name it "
                            "(dynamic_axes in torch.onnx.export) or fix it", vi->name, i);
        int32_t id = fe_builder_dim_id(im->b, d->dim_param);
        if (id < 0)
            return im->err->code;
        int64_t sym = FE_SYM(id);
        int seen = 0;
        for (int k = 0; k < im->ndims; k++)
            seen |= im->dims[k].sym == sym;
        if (!seen) {
            if (im->ndims == 256)
                return imp_fail(im, "more than 256 symbolic dims");
            im->dims[im->ndims].sym = sym;
            im->dims[im->ndims++].name = fe_strtab_str(im->strs, imp_intern(im, d->dim_param));
            if (fe_builder_dim(im->b, d->dim_param, 1, 0))
                return im->err->code;
        }
        shape[i] = sym;
    }
    return 1;
}

static int add_inputs(imp *im)
{
    const Onnx__GraphProto *g = im->o->graph;
    for (size_t i = 0; i < im->o->ninits; i++) {
        const Onnx__TensorProto *t = im->o->inits[i];
        if (!t->name || !t->name[0])
            return imp_fail(im, "initializer %zu has no name", i + 1);
        if (imp_get(im, t->name))
            return imp_fail(im, "initializer '%s' is listed twice", t->name);
        imp_val *v = imp_new_val(im, t->name);
        if (!v || imp_const_from_proto(im, v, t, "initializer"))
            return im->err->code;
    }
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (imp_get(im, vi->name))
            continue;   /* an initializer listed as an input too (IR version < 4) */
        int dtype, rank;
        int64_t shape[FE_MAX_RANK];
        int r = imp_declared(im, vi, &dtype, &rank, shape);
        if (r == 0)
            return imp_fail(im, "graph input '%s' has no tensor type with a shape", vi->name);
        if (r < 0 || im->err->code)
            return im->err->code;
        if (!value(im, vi->name, dtype, rank, shape) ||
            fe_builder_tensor(im->b, vi->name, dtype, FE_INPUT, rank, shape, 0) < 0)
            return im->err->code ? im->err->code : FE_EINPUT;
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
            im->taken[id] |= 1;
        }
        if (n->name && n->name[0]) {
            int32_t id = imp_intern(im, n->name);
            if (id < 0)
                return im->err->code;
            im->taken[id] |= 4;   /* an ONNX node name: node names made up avoid it */
        }
    }
    return FE_OK;
}

static int map_nodes(imp *im)
{
    const Onnx__GraphProto *g = im->o->graph;
    for (size_t i = 0; i < g->n_node && !im->err->code; i++) {
        const Onnx__NodeProto *n = g->node[i];
        char base[FE_MAX_NAME];
        if (n->name && n->name[0])
            snprintf(base, sizeof base, "%s", n->name);
        else
            snprintf(base, sizeof base, "%s_%zu", n->op_type, i);
        im->node = n;
        im->node_name = base;
        im->node_index = (int)i;
        im->emitted = 0;
        for (size_t k = 0; k < n->n_input; k++)
            if (n->input[k][0] && !imp_get(im, n->input[k]))
                return imp_fail(im, "input '%s' is not produced by an earlier node, an "
                                "initializer or a graph input (the graph must be "
                                "topologically sorted)", n->input[k]);
        char unique[FE_MAX_NAME];
        if (!(n->name && n->name[0])) {
            const char *f = fresh(im, base, 2 | 4);
            if (!f)
                return im->err->code;
            snprintf(unique, sizeof unique, "%s", f);
            im->node_name = unique;
            /* Reserved against other made-up names (4); the first node
             * emitted for it takes it as a node name (2). */
            im->taken[imp_intern(im, unique)] &= (uint8_t)~2;
        }
        int r = imp_fold(im);
        if (r < 0)
            return im->err->code ? im->err->code : FE_EINPUT;
        if (r == 0 && imp_map(im))
            return im->err->code;
        if (r == 1)
            im->nfolded++;
    }
    im->node = NULL;
    return im->err->code;
}

/* Graph outputs keep their ONNX names and declared shapes (so that our
 * inference checks them). */
static int add_outputs(imp *im)
{
    const Onnx__GraphProto *g = im->o->graph;
    for (size_t i = 0; i < g->n_output; i++) {
        const Onnx__ValueInfoProto *vi = g->output[i];
        imp_val *v = imp_get(im, vi->name);
        if (!v)
            return imp_fail(im, "graph output '%s' is produced by no node", vi->name);
        const char *t = imp_tensor(im, v);
        if (!t)
            return im->err->code;
        if (strcmp(t, vi->name) != 0)
            return imp_fail(im, "graph output '%s' is another name of '%s' (an Identity of an "
                            "input or weight); the importer keeps one name per tensor",
                            vi->name, t);
        int dtype, rank;
        int64_t shape[FE_MAX_RANK];
        int r = imp_declared(im, vi, &dtype, &rank, shape);
        if (r < 0 || im->err->code)
            return im->err->code;
        if (r == 1 && v->is_const == 0 &&
            fe_builder_tensor(im->b, vi->name, dtype, FE_ACTIVATION, rank, shape, 0) < 0)
            return im->err->code ? im->err->code : FE_EINPUT;
        if (fe_builder_output(im->b, vi->name, 0))
            return im->err->code ? im->err->code : FE_EINPUT;
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
    free(im->vinfo);
    free(im->weights);
    fe_strtab_free(im->strs);
    if (im->b)
        fe_builder_free(im->b);
}

/* Write the weights to wpath, then the model to out; neither or both. */
static int write_files(imp *im, const fe_graph *g, const char *out, const char *wpath)
{
    fe_st_writer *w = fe_st_writer_new(wpath, im->err);
    if (!w)
        return im->err->code;
    for (int i = 0; i < im->nweights; i++) {
        imp_val *v = im->weights[i];
        int64_t n = 1;
        for (int k = 0; k < v->rank; k++)
            n *= v->shape[k];
        if (fe_st_writer_add(w, fe_strtab_str(im->strs, v->tensor), v->dtype, v->rank, v->shape,
                             v->data, n * fe_dtype_size(v->dtype), im->err)) {
            fe_st_writer_abort(w);
            return im->err->code;
        }
    }
    if (fe_st_writer_meta(w, "format", "pt", im->err) || fe_st_writer_finish(w, im->err))
        return im->err->code;
    if (fe_save_model_file(g, out, 1, im->err)) {
        unlink(wpath);
        return im->err->code;
    }
    return FE_OK;
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
    if (opt->weights_out) {
        snprintf(wpath, sizeof wpath, "%s", opt->weights_out);
    } else {
        size_t len = strlen(out);
        if (len > 5 && strcmp(out + len - 5, ".json") == 0)
            len -= 5;
        snprintf(wpath, sizeof wpath, "%.*s.safetensors", (int)len, out);
    }
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
    /* Named after the file: exporters name every graph alike ("torch_jit"). */
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char gname[256];
    snprintf(gname, sizeof gname, "%.*s", (int)(strlen(base) > 5 &&
             !strcmp(base + strlen(base) - 5, ".onnx") ? strlen(base) - 5 : strlen(base)), base);
    char source[1024];
    snprintf(source, sizeof source, "imported from %s (ONNX opset %lld, graph '%s'%s%s)", path,
             (long long)o->opset, o->graph->name ? o->graph->name : "",
             o->model->producer_name ? ", " : "",
             o->model->producer_name ? o->model->producer_name : "");
    fe_graph *g = NULL;
    if (!fe_builder_meta(im.b, gname, source) && !grow_maps(&im) && !reserve_names(&im) &&
        !add_inputs(&im) && !map_nodes(&im) && !add_outputs(&im)) {
        for (int i = 0; i < opt->ndims; i++)
            if (fe_builder_set_dim(im.b, opt->dim_names[i], opt->dim_values[i]))
                break;
        for (int i = 0; i < im.ndims; i++) {
            int64_t val = 1;
            for (int k = 0; k < opt->ndims; k++)
                if (strcmp(opt->dim_names[k], im.dims[i].name) == 0)
                    val = opt->dim_values[k];
            imp_note(&im, "note: symbolic dim '%s' is a model dim, default %lld%s", im.dims[i].name,
                     (long long)val, val == 1 && opt->ndims == 0 ? " (set it with --dim NAME=V)" : "");
        }
        fe_builder *b = im.b;
        im.b = NULL;
        if (!err->code)
            g = fe_builder_finish(b, err);
        else
            fe_builder_free(b);
    }
    if (g && !err->code) {
        if (write_files(&im, g, out, wpath) == FE_OK) {
            imp_note(&im, "imported %s: %d ONNX nodes -> %d nodes (%d custom, %d folded "
                     "away), %d weights in %s", path, (int)o->graph->n_node, g->nnodes,
                     im.ncustom, im.nfolded, im.nweights, wpath);
        }
    }
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
