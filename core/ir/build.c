/* build.c: recording a model's declarations into a graph builder (build.h):
 * dims, tensors, nodes (their ops looked up in the registry), attributes
 * and outputs. A model file lists nodes in any order and may declare a
 * tensor after the node that uses it, so recording only notes names;
 * fe_builder_finish (build_finish.c) then resolves and checks them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "build_state.h"
#include "ops.h"

/* ---- growable arrays ---- */

int fe_build_reserve(void **p, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int64_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* realloc that frees the old block on failure, so callers can just fail. */
static void *realloc_or_free(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q)
        free(p);
    return q;
}

int fe_build_err(fe_builder *b, int line, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    if (failed(b))
        return b->err.code;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        return fe_error_set(&b->err, FE_EINPUT, "%s:%d: %s", b->g->file, line, msg);
    return fe_error_set(&b->err, FE_EINPUT, "%s: %s", b->g->file, msg);
}

int fe_build_nomem(fe_builder *b)
{
    if (!failed(b))
        fe_error_set(&b->err, FE_ENOMEM, "%s: out of memory while building the graph",
                     b->g->file);
    return FE_ENOMEM;
}

fe_builder *fe_builder_new(const char *label, fe_error *err)
{
    fe_builder *b = calloc(1, sizeof *b);
    fe_graph *g = calloc(1, sizeof *g);
    if (b && g) {
        g->file = strdup(label ? label : "<model>");
        g->strs = fe_strtab_new();
    }
    if (!b || !g || !g->file || !g->strs) {
        if (g) {
            free(g->file);
            fe_strtab_free(g->strs);
        }
        free(g);
        free(b);
        fe_error_set(err, FE_ENOMEM, "out of memory creating a graph builder");
        return NULL;
    }
    b->g = g;
    /* A graph's arrays are never NULL, even when empty (no shaped tensor,
     * no attribute): &g->shape[0] of a rank-0 tensor and a copy of no bytes
     * from it are then defined behaviour (UBSan: "applying zero offset to
     * null pointer"). */
    if (fe_build_grow_shape(b, 1) || RESERVE(g->attrs, b->cap_attrs, 1) ||
        RESERVE(g->ints, b->cap_ints, 1) || RESERVE(g->blob, b->cap_blob, 1) ||
        RESERVE(g->tensors, b->cap_tensors, 1)) {
        fe_builder_free(b);
        fe_error_set(err, FE_ENOMEM, "out of memory creating a graph builder");
        return NULL;
    }
    return b;
}

void fe_builder_free(fe_builder *b)
{
    if (!b)
        return;
    fe_graph_free(b->g);
    free(b->bn);
    free(b->bio);
    free(b->bd);
    free(b->outs);
    free(b->op_of_str);
    free(b);
}

/* Names are printed in every report and message: a control character in
 * one (a newline, a terminal escape) is refused rather than shown. */
static int bad_name(fe_builder *b, const char *s, int line, const char *what)
{
    long at = fe_control_at(s, 0);
    if (at < 0)
        return 0;
    fe_build_err(b, line, "%s '%s' has control character 0x%02x at byte %ld; names may not "
                 "hold control characters (rename it)", what, s, (unsigned char)s[at], at);
    return 1;
}

/* Intern s, growing the name -> node/tensor maps alongside the table. */
static int32_t intern(fe_builder *b, const char *s, int line, const char *what)
{
    size_t len = strlen(s);
    if (len > FE_MAX_NAME) {
        fe_build_err(b, line, "%s is %zu bytes long; names are limited to %d bytes", what, len,
                     FE_MAX_NAME);
        return -1;
    }
    if (bad_name(b, s, line, what))
        return -1;
    int32_t id = fe_strtab_intern(b->g->strs, s, len);
    if (id < 0) {
        fe_build_nomem(b);
        return -1;
    }
    fe_graph *g = b->g;
    if (id >= b->cap_names) {
        /* Grow both name maps to the same capacity. */
        int64_t old = b->cap_names, cap = old;
        if (RESERVE(g->node_of_name, cap, (int64_t)id + 1) ||
            !(g->tensor_of_name = realloc_or_free(g->tensor_of_name, (size_t)cap * 4))) {
            fe_build_nomem(b);
            return -1;
        }
        b->cap_names = cap;
        for (int64_t i = old; i < cap; i++)
            g->node_of_name[i] = g->tensor_of_name[i] = -1;
    }
    if (id >= g->nnames)
        g->nnames = id + 1;
    return id;
}

int fe_builder_meta(fe_builder *b, const char *name, const char *source)
{
    if (failed(b))
        return b->err.code;
    fe_graph *g = b->g;
    if (name && bad_name(b, name, 0, "the model's name"))
        return b->err.code;
    free(g->name);
    free(g->source);
    g->name = strdup(name ? name : "");
    g->source = strdup(source ? source : "");
    return g->name && g->source ? FE_OK : fe_build_nomem(b);
}

int fe_builder_weights_stamp(fe_builder *b, const char *stamp)
{
    if (failed(b))
        return b->err.code;
    if (bad_name(b, stamp, 0, "the weights stamp"))
        return b->err.code;
    free(b->g->weights_stamp);
    b->g->weights_stamp = strdup(stamp);
    return b->g->weights_stamp ? FE_OK : fe_build_nomem(b);
}

const fe_error *fe_builder_error(const fe_builder *b)
{
    return failed(b) ? &b->err : NULL;
}

static int64_t find_dim(fe_builder *b, int32_t name)
{
    for (int64_t i = 0; i < b->nbd; i++)
        if (b->bd[i].name == name)
            return i;
    return -1;
}

int32_t fe_builder_dim_id(fe_builder *b, const char *name)
{
    if (failed(b))
        return -1;
    int32_t id = intern(b, name, 0, "a dim name");
    if (id < 0)
        return -1;
    int64_t d = find_dim(b, id);
    if (d >= 0)
        return (int32_t)d;
    if (RESERVE(b->bd, b->cap_bd, b->nbd + 1)) {
        fe_build_nomem(b);
        return -1;
    }
    b->bd[b->nbd] = (bdim){.name = id};
    return (int32_t)b->nbd++;
}

int fe_builder_dim(fe_builder *b, const char *name, int64_t value, int line)
{
    int32_t d = fe_builder_dim_id(b, name);
    if (d < 0)
        return b->err.code;
    if (b->bd[d].declared)
        return fe_build_err(b, line, "dim '%s' is declared twice", name);
    if (value < 1)
        return fe_build_err(b, line, "dim '%s' is %lld; dims must be positive integers", name,
                            (long long)value);
    b->bd[d].declared = 1;
    b->bd[d].line = line;
    if (!b->bd[d].overridden)
        b->bd[d].value = value;
    return FE_OK;
}

int fe_builder_set_dim(fe_builder *b, const char *name, int64_t value)
{
    int32_t d = fe_builder_dim_id(b, name);
    if (d < 0)
        return b->err.code;
    if (value < 1)
        return fe_build_err(b, 0, "--dim %s=%lld: dims must be positive integers", name,
                            (long long)value);
    b->bd[d].value = value;
    b->bd[d].overridden = 1;
    return FE_OK;
}

/* shape and shape_sym share a capacity */
int fe_build_grow_shape(fe_builder *b, int extra)
{
    fe_graph *g = b->g;
    int64_t cap = b->cap_shape;
    /* One to spare, so that the array exists even when every tensor is a
     * scalar: fe_tensor_shape then points into it, not past NULL. */
    if (RESERVE(g->shape, cap, g->nshape + extra + 1))
        return -1;
    if (cap != b->cap_shape) {
        g->shape_sym = realloc_or_free(g->shape_sym, (size_t)cap * sizeof *g->shape_sym);
        if (!g->shape_sym)
            return -1;
        b->cap_shape = cap;
    }
    return 0;
}

int32_t fe_builder_tensor(fe_builder *b, const char *name, int dtype, int kind,
                          int rank, const int64_t *shape, int line)
{
    fe_graph *g = b->g;
    if (failed(b))
        return -1;
    int32_t id = intern(b, name, line, "a tensor name");
    if (id < 0)
        return -1;
    if (g->tensor_of_name[id] >= 0) {
        const fe_tensor *t = &g->tensors[g->tensor_of_name[id]];
        fe_build_err(b, line, "tensor '%s' is declared twice (first at line %d)", name, t->line);
        return -1;
    }
    if (dtype < 0 || dtype >= FE_NDTYPE || kind < 0 || kind > FE_ACTIVATION) {
        fe_build_err(b, line, "tensor '%s' has an invalid dtype or kind", name);
        return -1;
    }
    if (rank < 0 || rank > FE_MAX_RANK) {
        fe_build_err(b, line, "tensor '%s' has %d dims; at most %d are supported", name, rank,
                     FE_MAX_RANK);
        return -1;
    }
    if (g->ntensors == INT32_MAX || RESERVE(g->tensors, b->cap_tensors, (int64_t)g->ntensors + 1) ||
        fe_build_grow_shape(b, rank)) {
        fe_build_nomem(b);
        return -1;
    }
    for (int i = 0; i < rank; i++) {
        int64_t v = shape[i];
        if (FE_IS_SYM(v)) {
            g->shape_sym[g->nshape + i] = (int32_t)(v - FE_SYM_BASE);
            g->shape[g->nshape + i] = 0;
        } else {
            if (v < 1) {
                fe_build_err(b, line, "tensor '%s' dim %d is %lld; sizes must be positive (empty "
                             "tensors are not supported)", name, i, (long long)v);
                return -1;
            }
            g->shape_sym[g->nshape + i] = -1;
            g->shape[g->nshape + i] = v;
        }
    }
    int32_t t = g->ntensors++;
    g->tensors[t] = (fe_tensor){
        .name = id, .producer = -1, .shape_off = (int32_t)g->nshape, .line = line,
        .rank = (uint8_t)rank, .dtype = (uint8_t)dtype, .kind = (uint8_t)kind,
        .flags = FE_T_DECLARED,
    };
    g->nshape += rank;
    g->tensor_of_name[id] = t;
    return t;
}

int32_t fe_builder_node(fe_builder *b, const char *name, const char *op,
                        const char *const *inputs, int nin,
                        const char *const *outputs, int nout, int line)
{
    fe_graph *g = b->g;
    if (failed(b))
        return -1;
    int32_t id = intern(b, name, line, "a node name");
    if (id < 0)
        return -1;
    if (g->node_of_name[id] >= 0) {
        fe_build_err(b, line, "node '%s' is defined twice (first at line %d)", name,
                     b->bn[g->node_of_name[id]].line);
        return -1;
    }
    if (nin < 0 || nin > FE_MAX_IO || nout < 1 || nout > FE_MAX_IO) {
        fe_build_err(b, line, "node '%s' has %d inputs and %d outputs; expected 0..%d inputs and "
                     "1..%d outputs", name, nin, nout, FE_MAX_IO, FE_MAX_IO);
        return -1;
    }
    if (b->nbn == INT32_MAX) {
        fe_build_err(b, line, "more than %d nodes", INT32_MAX);
        return -1;
    }
    /* Op names are interned too; cache the registry lookup per name. */
    int32_t opname = intern(b, op, line, "an op name");
    if (opname < 0)
        return -1;
    if (RESERVE(b->op_of_str, b->cap_op_of_str, (int64_t)opname + 1)) {
        fe_build_nomem(b);
        return -1;
    }
    for (; b->nop_of_str <= opname; b->nop_of_str++)
        b->op_of_str[b->nop_of_str] = 0;
    if (b->op_of_str[opname] == 0)
        b->op_of_str[opname] = fe_op_find(op) + 1;
    int opid = b->op_of_str[opname] - 1;
    if (opid < 0) {
        char hint[160];
        fe_build_err(b, line, "node '%s' has unknown op '%s'%s; known ops are: %s (use \"custom\" with "
                     "attrs pattern/flops/bytes for others)", name, op,
                     fe_did_you_mean(op, fe_op_names(), hint, sizeof hint), fe_op_names());
        return -1;
    }
    if (RESERVE(b->bn, b->cap_bn, b->nbn + 1) || RESERVE(b->bio, b->cap_bio, b->nbio + nin + nout)) {
        fe_build_nomem(b);
        return -1;
    }
    bnode *n = &b->bn[b->nbn];
    *n = (bnode){.name = id, .op = opid, .line = line, .io_off = (int32_t)b->nbio,
                 .nin = (uint16_t)nin, .nout = (uint16_t)nout,
                 .attr_off = (int32_t)g->nattrs};
    for (int k = 0; k < nin + nout; k++) {
        const char *s = k < nin ? inputs[k] : outputs[k - nin];
        int32_t t = intern(b, s, line, "a tensor name");
        if (t < 0)
            return -1;
        b->bio[b->nbio++] = t;
    }
    g->node_of_name[id] = (int32_t)b->nbn;
    return (int32_t)b->nbn++;
}

/* Append an attribute to node (which must be the last one added). */
static fe_attr *add_attr(fe_builder *b, int32_t node, const char *key)
{
    fe_graph *g = b->g;
    if (failed(b))
        return NULL;
    if (node != b->nbn - 1) {
        fe_build_err(b, 0, "attributes must be added right after their node");
        return NULL;
    }
    bnode *n = &b->bn[node];
    int32_t k = intern(b, key, n->line, "an attribute name");
    if (k < 0)
        return NULL;
    for (int i = 0; i < n->nattr; i++)
        if (g->attrs[n->attr_off + i].key == k) {
            fe_build_err(b, n->line, "node '%s' has attribute '%s' twice",
                         fe_strtab_str(g->strs, n->name), key);
            return NULL;
        }
    if (RESERVE(g->attrs, b->cap_attrs, g->nattrs + 1)) {
        fe_build_nomem(b);
        return NULL;
    }
    fe_attr *a = &g->attrs[g->nattrs++];
    n->nattr++;
    *a = (fe_attr){.key = k};
    return a;
}

int fe_builder_attr_null(fe_builder *b, int32_t node, const char *key)
{
    fe_attr *a = add_attr(b, node, key);
    if (a)
        a->type = FE_ATTR_NULL;
    return b->err.code;
}

int fe_builder_attr_bool(fe_builder *b, int32_t node, const char *key, int v)
{
    fe_attr *a = add_attr(b, node, key);
    if (a) {
        a->type = FE_ATTR_BOOL;
        a->v.i = v != 0;
    }
    return b->err.code;
}

int fe_builder_attr_int(fe_builder *b, int32_t node, const char *key, int64_t v)
{
    fe_attr *a = add_attr(b, node, key);
    if (a) {
        a->type = FE_ATTR_INT;
        a->v.i = v;
    }
    return b->err.code;
}

int fe_builder_attr_float(fe_builder *b, int32_t node, const char *key, double v)
{
    fe_attr *a = add_attr(b, node, key);
    if (a) {
        a->type = FE_ATTR_FLOAT;
        a->v.f = v;
    }
    return b->err.code;
}

int fe_builder_attr_str(fe_builder *b, int32_t node, const char *key, const char *v)
{
    fe_attr *a = add_attr(b, node, key);
    if (!a)
        return b->err.code;
    int32_t s = intern(b, v, b->bn[node].line, "an attribute string");
    if (s >= 0) {
        a->type = FE_ATTR_STR;
        a->v.s = s;
    }
    return b->err.code;
}

int fe_builder_attr_ints(fe_builder *b, int32_t node, const char *key, const int64_t *v, int n)
{
    fe_graph *g = b->g;
    fe_attr *a = add_attr(b, node, key);
    if (!a)
        return b->err.code;
    /* Take the offset before growing: add_attr may have moved g->attrs, but
     * not g->ints, and a stays valid as no attribute is added meanwhile. */
    if (RESERVE(g->ints, b->cap_ints, g->nints + n))
        return fe_build_nomem(b);
    a->type = FE_ATTR_INTS;
    a->n = n;
    a->v.off = g->nints;
    if (n > 0)
        memcpy(g->ints + g->nints, v, (size_t)n * sizeof *v);
    g->nints += n;
    return FE_OK;
}

int fe_builder_attr_json(fe_builder *b, int32_t node, const char *key, const char *json, size_t len)
{
    fe_graph *g = b->g;
    fe_attr *a = add_attr(b, node, key);
    if (!a)
        return b->err.code;
    if (len > FE_MAX_TEXT)
        return fe_build_err(b, b->bn[node].line, "attribute '%s' is %zu bytes of JSON; at most %d are "
                            "kept", key, len, FE_MAX_TEXT);
    if (RESERVE(g->blob, b->cap_blob, g->nblob + (int64_t)len + 1))
        return fe_build_nomem(b);
    a->type = FE_ATTR_JSON;
    a->n = (int32_t)len;
    a->v.off = g->nblob;
    memcpy(g->blob + g->nblob, json, len);
    g->blob[g->nblob + (int64_t)len] = '\0';
    g->nblob += (int64_t)len + 1;
    return FE_OK;
}

int fe_builder_output(fe_builder *b, const char *tensor, int line)
{
    if (failed(b))
        return b->err.code;
    int32_t id = intern(b, tensor, line, "an output name");
    if (id < 0)
        return b->err.code;
    for (int64_t i = 0; i < b->nouts; i++)
        if (b->outs[i].name == id)
            return fe_build_err(b, line, "output '%s' is listed twice", tensor);
    if (RESERVE(b->outs, b->cap_outs, b->nouts + 1))
        return fe_build_nomem(b);
    b->outs[b->nouts].name = id;
    b->outs[b->nouts++].line = line;
    return FE_OK;
}

