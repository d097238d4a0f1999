/* graph.c: building, validating and reading the graph IR.
 *
 * Note on building. A model file lists nodes in any order and may declare a
 * tensor after the node that uses it, so the builder only records names;
 * fe_builder_finish then does the work in passes, each of which can fail
 * with a message naming the file, the line and the culprit:
 *
 *   1. dims: apply --dim overrides, check every dim used is declared;
 *   2. declared tensors: resolve shapes, count elements and bytes (checked
 *      for 64-bit overflow);
 *   3. node outputs: each tensor produced once; undeclared ones are created;
 *   4. node inputs: each names a declared or produced tensor;
 *   5. topological sort: Kahn's algorithm taking the lowest file position
 *      first, so a file already in order keeps its order; a cycle is
 *      reported with the nodes on it;
 *   6. inference in topological order: shapes and dtypes from the op
 *      registry, checked against declarations; FLOPs and bytes;
 *   7. graph outputs.
 *
 * Nothing is visible to callers until all passes succeed: a bad model never
 * yields a partial graph.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "ops.h"

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

/* ---- growable arrays ---- */

static int reserve(void **p, int64_t *cap, int64_t need, size_t elem)
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

#define RESERVE(arr, cap, need) reserve((void **)&(arr), &(cap), (need), sizeof *(arr))

/* realloc that frees the old block on failure, so callers can just fail. */
static void *realloc_or_free(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q)
        free(p);
    return q;
}

/* ---- the builder ---- */

typedef struct bnode {
    int32_t name, op, line, io_off;   /* io_off into b->bio (name ids) */
    uint16_t nin, nout;
    int32_t attr_off, nattr;
} bnode;

typedef struct bdim {
    int32_t name, line, declared;
    int64_t value;
    int overridden;
} bdim;

struct fe_builder {
    fe_error err;                 /* first error; later calls are ignored */
    fe_graph *g;                  /* filled as we go; handed out by finish */
    bnode *bn;
    int64_t nbn, cap_bn;
    int32_t *bio;
    int64_t nbio, cap_bio;
    bdim *bd;
    int64_t nbd, cap_bd;
    struct { int32_t name, line; } *outs;
    int64_t nouts, cap_outs;
    int64_t cap_tensors, cap_attrs, cap_ints, cap_blob, cap_shape;
    int32_t *op_of_str;           /* strtab id -> op id + 1 (0 = not looked up) */
    int64_t cap_op_of_str, nop_of_str;
    int64_t cap_names;            /* capacity of g->node_of_name / tensor_of_name */
    /* Totals checked to fit in 64 bits (size_tensor, finish_infer), so that any sum
     * of tensor bytes, node bytes or FLOPs is in range. */
    int64_t total_tensor_bytes, total_flops, total_bytes;
};

static int failed(const fe_builder *b) { return b->err.code != FE_OK; }

static int berr(fe_builder *b, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Record an error as "FILE:LINE: message" (the first one wins). */
static int berr(fe_builder *b, int line, const char *fmt, ...)
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

static int nomem(fe_builder *b)
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

/* Intern s, growing the name -> node/tensor maps alongside the table. */
static int32_t intern(fe_builder *b, const char *s, int line, const char *what)
{
    size_t len = strlen(s);
    if (len > FE_MAX_NAME) {
        berr(b, line, "%s is %zu bytes long; names are limited to %d bytes", what, len,
             FE_MAX_NAME);
        return -1;
    }
    int32_t id = fe_strtab_intern(b->g->strs, s, len);
    if (id < 0) {
        nomem(b);
        return -1;
    }
    fe_graph *g = b->g;
    if (id >= b->cap_names) {
        /* Grow both name maps to the same capacity. */
        int64_t old = b->cap_names, cap = old;
        if (RESERVE(g->node_of_name, cap, (int64_t)id + 1) ||
            !(g->tensor_of_name = realloc_or_free(g->tensor_of_name, (size_t)cap * 4))) {
            nomem(b);
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
    free(g->name);
    free(g->source);
    g->name = strdup(name ? name : "");
    g->source = strdup(source ? source : "");
    return g->name && g->source ? FE_OK : nomem(b);
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
        nomem(b);
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
        return berr(b, line, "dim '%s' is declared twice", name);
    if (value < 1)
        return berr(b, line, "dim '%s' is %lld; dims must be positive integers", name,
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
        return berr(b, 0, "--dim %s=%lld: dims must be positive integers", name,
                    (long long)value);
    b->bd[d].value = value;
    b->bd[d].overridden = 1;
    return FE_OK;
}

/* Room for extra more shape items; shape and shape_sym share a capacity. */
static int grow_shape(fe_builder *b, int extra)
{
    fe_graph *g = b->g;
    int64_t cap = b->cap_shape;
    if (RESERVE(g->shape, cap, g->nshape + extra))
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
        berr(b, line, "tensor '%s' is declared twice (first at line %d)", name, t->line);
        return -1;
    }
    if (dtype < 0 || dtype >= FE_NDTYPE || kind < 0 || kind > FE_ACTIVATION) {
        berr(b, line, "tensor '%s' has an invalid dtype or kind", name);
        return -1;
    }
    if (rank < 0 || rank > FE_MAX_RANK) {
        berr(b, line, "tensor '%s' has %d dims; at most %d are supported", name, rank,
             FE_MAX_RANK);
        return -1;
    }
    if (g->ntensors == INT32_MAX || RESERVE(g->tensors, b->cap_tensors, (int64_t)g->ntensors + 1) ||
        grow_shape(b, rank)) {
        nomem(b);
        return -1;
    }
    for (int i = 0; i < rank; i++) {
        int64_t v = shape[i];
        if (FE_IS_SYM(v)) {
            g->shape_sym[g->nshape + i] = (int32_t)(v - FE_SYM_BASE);
            g->shape[g->nshape + i] = 0;
        } else {
            if (v < 1) {
                berr(b, line, "tensor '%s' dim %d is %lld; sizes must be positive (empty "
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
        berr(b, line, "node '%s' is defined twice (first at line %d)", name,
             b->bn[g->node_of_name[id]].line);
        return -1;
    }
    if (nin < 0 || nin > FE_MAX_IO || nout < 1 || nout > FE_MAX_IO) {
        berr(b, line, "node '%s' has %d inputs and %d outputs; expected 0..%d inputs and "
             "1..%d outputs", name, nin, nout, FE_MAX_IO, FE_MAX_IO);
        return -1;
    }
    if (b->nbn == INT32_MAX) {
        berr(b, line, "more than %d nodes", INT32_MAX);
        return -1;
    }
    /* Op names are interned too; cache the registry lookup per name. */
    int32_t opname = intern(b, op, line, "an op name");
    if (opname < 0)
        return -1;
    if (RESERVE(b->op_of_str, b->cap_op_of_str, (int64_t)opname + 1)) {
        nomem(b);
        return -1;
    }
    for (; b->nop_of_str <= opname; b->nop_of_str++)
        b->op_of_str[b->nop_of_str] = 0;
    if (b->op_of_str[opname] == 0)
        b->op_of_str[opname] = fe_op_find(op) + 1;
    int opid = b->op_of_str[opname] - 1;
    if (opid < 0) {
        berr(b, line, "node '%s' has unknown op '%s'; known ops are: %s (use \"custom\" with "
             "attrs pattern/flops/bytes for others)", name, op, fe_op_names());
        return -1;
    }
    if (RESERVE(b->bn, b->cap_bn, b->nbn + 1) || RESERVE(b->bio, b->cap_bio, b->nbio + nin + nout)) {
        nomem(b);
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
        berr(b, 0, "attributes must be added right after their node");
        return NULL;
    }
    bnode *n = &b->bn[node];
    int32_t k = intern(b, key, n->line, "an attribute name");
    if (k < 0)
        return NULL;
    for (int i = 0; i < n->nattr; i++)
        if (g->attrs[n->attr_off + i].key == k) {
            berr(b, n->line, "node '%s' has attribute '%s' twice",
                 fe_strtab_str(g->strs, n->name), key);
            return NULL;
        }
    if (RESERVE(g->attrs, b->cap_attrs, g->nattrs + 1)) {
        nomem(b);
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
        return nomem(b);
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
        return berr(b, b->bn[node].line, "attribute '%s' is %zu bytes of JSON; at most %d are "
                    "kept", key, len, FE_MAX_TEXT);
    if (RESERVE(g->blob, b->cap_blob, g->nblob + (int64_t)len + 1))
        return nomem(b);
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
            return berr(b, line, "output '%s' is listed twice", tensor);
    if (RESERVE(b->outs, b->cap_outs, b->nouts + 1))
        return nomem(b);
    b->outs[b->nouts].name = id;
    b->outs[b->nouts++].line = line;
    return FE_OK;
}

/* ---- finishing ---- */

static const char *str(const fe_builder *b, int32_t id)
{
    return fe_strtab_str(b->g->strs, id);
}

/* Pass 1: every dim is declared and positive; overrides name real dims. */
static int finish_dims(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int64_t i = 0; i < b->nbd; i++) {
        const bdim *d = &b->bd[i];
        if (d->declared)
            continue;
        if (d->overridden) {
            char names[512] = "";
            size_t len = 0;
            for (int64_t j = 0; j < b->nbd; j++)
                if (b->bd[j].declared && len < sizeof names - 64)
                    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                            len ? ", " : "", str(b, b->bd[j].name));
            return berr(b, 0, "--dim %s: the model has no dim '%s'; its dims are: %s",
                        str(b, d->name), str(b, d->name), len ? names : "(none)");
        }
    }
    g->ndims = (int32_t)b->nbd;
    g->dims = calloc(b->nbd > 0 ? (size_t)b->nbd : 1u, sizeof *g->dims);
    if (!g->dims)
        return nomem(b);
    for (int64_t i = 0; i < b->nbd; i++)
        g->dims[i] = (fe_dim){.name = b->bd[i].name, .line = b->bd[i].line,
                              .value = b->bd[i].value};
    return FE_OK;
}

/* Elements and bytes of tensor t from its resolved shape, overflow-checked. */
static int size_tensor(fe_builder *b, fe_tensor *t, int line)
{
    const int64_t *s = &b->g->shape[t->shape_off];
    int64_t n = 1, bytes;
    for (int i = 0; i < t->rank; i++)
        if (__builtin_mul_overflow(n, s[i], &n))
            return berr(b, line, "tensor '%s' has more elements than fit in 64 bits",
                        str(b, t->name));
    if (__builtin_mul_overflow(n, (int64_t)fe_dtype_size(t->dtype), &bytes))
        return berr(b, line, "tensor '%s' (%lld elements of %s) has a byte size that "
                    "overflows 64 bits", str(b, t->name), (long long)n, fe_dtype_name(t->dtype));
    if (__builtin_add_overflow(b->total_tensor_bytes, bytes, &b->total_tensor_bytes))
        return berr(b, line, "tensor '%s': the model's tensors add up to more bytes than fit "
                    "in 64 bits; the shapes are too large (lower the dims)", str(b, t->name));
    t->numel = n;
    t->bytes = bytes;
    return FE_OK;
}

/* Pass 2: resolve the declared tensors' symbolic dims. */
static int finish_declared(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int32_t t = 0; t < g->ntensors; t++) {
        fe_tensor *ts = &g->tensors[t];
        for (int i = 0; i < ts->rank; i++) {
            int32_t d = g->shape_sym[ts->shape_off + i];
            if (d < 0)
                continue;
            if (!b->bd[d].declared)
                return berr(b, ts->line, "tensor '%s' uses dim '%s', which \"dims\" does not "
                            "declare", str(b, ts->name), str(b, b->bd[d].name));
            g->shape[ts->shape_off + i] = g->dims[d].value;
        }
        if (size_tensor(b, ts, ts->line))
            return b->err.code;
    }
    return FE_OK;
}

/* Pass 3: give every node output a tensor and a producer. */
static int finish_outputs_of_nodes(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int64_t v = 0; v < b->nbn; v++) {
        const bnode *n = &b->bn[v];
        for (int k = 0; k < n->nout; k++) {
            int32_t name = b->bio[n->io_off + n->nin + k];
            int32_t t = g->tensor_of_name[name];
            if (t < 0) {
                if (RESERVE(g->tensors, b->cap_tensors, (int64_t)g->ntensors + 1))
                    return nomem(b);
                t = g->ntensors++;
                g->tensors[t] = (fe_tensor){.name = name, .producer = -1, .shape_off = -1,
                                            .kind = FE_ACTIVATION};
                g->tensor_of_name[name] = t;
            }
            fe_tensor *ts = &g->tensors[t];
            if (ts->producer >= 0)
                return berr(b, n->line, "tensor '%s' is produced twice: by node '%s' (line %d) "
                            "and by node '%s'", str(b, name),
                            str(b, b->bn[ts->producer].name), b->bn[ts->producer].line,
                            str(b, n->name));
            if (ts->kind != FE_ACTIVATION)
                return berr(b, n->line, "node '%s' produces tensor '%s', which is declared "
                            "with kind \"%s\"; node outputs are activations",
                            str(b, n->name), str(b, name), fe_tkind_name(ts->kind));
            ts->producer = (int32_t)v;   /* builder index for now */
        }
    }
    return FE_OK;
}

/* Pass 4: every input names a tensor that exists and has a value. */
static int finish_inputs_of_nodes(fe_builder *b)
{
    fe_graph *g = b->g;
    for (int64_t v = 0; v < b->nbn; v++) {
        const bnode *n = &b->bn[v];
        for (int k = 0; k < n->nin; k++) {
            int32_t name = b->bio[n->io_off + k];
            int32_t t = g->tensor_of_name[name];
            if (t < 0)
                return berr(b, n->line, "node '%s' input %d '%s' is not a declared tensor and "
                            "no node produces it", str(b, n->name), k, str(b, name));
            const fe_tensor *ts = &g->tensors[t];
            if (ts->producer < 0 && ts->kind == FE_ACTIVATION)
                return berr(b, n->line, "node '%s' reads tensor '%s', an activation that no "
                            "node produces; declare it with kind \"input\" or \"weight\"",
                            str(b, n->name), str(b, name));
        }
    }
    return FE_OK;
}

/* A min-heap of builder indices: Kahn's algorithm takes the earliest ready
 * node in file order, which keeps an already sorted file as it is. */
typedef struct heap {
    int32_t *a;
    int64_t n;
} heap;

static void heap_push(heap *h, int32_t v)
{
    int64_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 2] > v) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = v;
}

static int32_t heap_pop(heap *h)
{
    int32_t top = h->a[0], last = h->a[--h->n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (h->a[c] >= last)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0)
        h->a[i] = last;
    return top;
}

/* Report one cycle among the nodes Kahn's algorithm could not place: walk
 * from one of them to a producer that is also unplaced until a node repeats. */
static int report_cycle(fe_builder *b, const int32_t *indeg)
{
    fe_graph *g = b->g;
    int64_t nbn = b->nbn;
    int32_t *seen = malloc((size_t)nbn * sizeof *seen);   /* position on the walk, or -1 */
    int32_t *walk = malloc((size_t)nbn * sizeof *walk);
    if (!seen || !walk) {
        free(seen);
        free(walk);
        return nomem(b);
    }
    for (int64_t i = 0; i < nbn; i++)
        seen[i] = -1;
    int32_t v = 0;
    while (indeg[v] == 0)
        v++;
    int64_t len = 0;
    while (seen[v] < 0) {
        seen[v] = (int32_t)len;
        walk[len++] = v;
        const bnode *n = &b->bn[v];
        int32_t next = -1;
        for (int k = 0; k < n->nin && next < 0; k++) {
            int32_t p = g->tensors[g->tensor_of_name[b->bio[n->io_off + k]]].producer;
            if (p >= 0 && indeg[p] > 0)
                next = p;
        }
        v = next;   /* an unplaced node always has an unplaced producer */
    }
    /* walk[seen[v] ..] is the cycle, consumer before producer: print it in
     * data-flow order. */
    /* Names are cut to 60 bytes and the list to what fits, so every append
     * below has room: each adds at most 60 + 4 bytes before the test. */
    char msg[640];
    int m = 0;
    int64_t first = seen[v], count = len - first;
    for (int64_t i = len - 1; i >= first && m < (int)sizeof msg - 160; i--) {
        const char *nm = str(b, b->bn[walk[i]].name);
        m += snprintf(msg + m, sizeof msg - (size_t)m, "%.60s%s -> ", nm, strlen(nm) > 60 ? "..." : "");
    }
    if (m >= (int)sizeof msg - 160)
        m += snprintf(msg + m, sizeof msg - (size_t)m, "... -> ");
    const char *last = str(b, b->bn[walk[len - 1]].name);
    snprintf(msg + m, sizeof msg - (size_t)m, "%.60s%s", last, strlen(last) > 60 ? "..." : "");
    int line = b->bn[walk[len - 1]].line;
    free(seen);
    free(walk);
    return berr(b, line, "the graph has a cycle through %lld node%s: %s", (long long)count,
                count == 1 ? "" : "s", msg);
}

/* Pass 5: order[i] = builder index of the i-th node in topological order. */
static int finish_topo(fe_builder *b, int32_t **order_out)
{
    fe_graph *g = b->g;
    int64_t nbn = b->nbn;
    int32_t *indeg = calloc((size_t)nbn, sizeof *indeg);
    int32_t *coff = calloc((size_t)g->ntensors + 1, sizeof *coff);
    int32_t *cons = malloc((size_t)(b->nbio ? b->nbio : 1) * sizeof *cons);
    int32_t *order = malloc((size_t)nbn * sizeof *order);
    heap h = {malloc((size_t)nbn * sizeof(int32_t)), 0};
    int rc = FE_OK;

    if (!indeg || !coff || !cons || !order || !h.a) {
        rc = nomem(b);
        goto out;
    }
    /* Consumers of each tensor by builder index, to release successors. */
    for (int64_t v = 0; v < nbn; v++)
        for (int k = 0; k < b->bn[v].nin; k++)
            coff[g->tensor_of_name[b->bio[b->bn[v].io_off + k]] + 1]++;
    for (int32_t t = 0; t < g->ntensors; t++)
        coff[t + 1] += coff[t];
    for (int64_t v = 0; v < nbn; v++)
        for (int k = 0; k < b->bn[v].nin; k++) {
            int32_t t = g->tensor_of_name[b->bio[b->bn[v].io_off + k]];
            cons[coff[t]++] = (int32_t)v;
            if (g->tensors[t].producer >= 0)
                indeg[v]++;
        }
    for (int32_t t = g->ntensors; t > 0; t--)   /* undo the fill's advance */
        coff[t] = coff[t - 1];
    coff[0] = 0;

    for (int64_t v = 0; v < nbn; v++)
        if (indeg[v] == 0)
            heap_push(&h, (int32_t)v);
    int64_t placed = 0;
    while (h.n > 0) {
        int32_t v = heap_pop(&h);
        order[placed++] = v;
        const bnode *n = &b->bn[v];
        for (int k = 0; k < n->nout; k++) {
            int32_t t = g->tensor_of_name[b->bio[n->io_off + n->nin + k]];
            for (int32_t c = coff[t]; c < coff[t + 1]; c++)
                if (--indeg[cons[c]] == 0)
                    heap_push(&h, cons[c]);
        }
    }
    if (placed < nbn) {
        rc = report_cycle(b, indeg);
        goto out;
    }
    *order_out = order;
    order = NULL;
out:
    free(indeg);
    free(coff);
    free(cons);
    free(order);
    free(h.a);
    return rc;
}

/* Lay the nodes out in topological order with tensor ids, and index every
 * tensor's consumers (ascending node ids, each consumer once). */
static int finish_layout(fe_builder *b, const int32_t *order)
{
    fe_graph *g = b->g;
    int64_t nbn = b->nbn;
    int32_t *topo_of = malloc((size_t)nbn * sizeof *topo_of);
    g->nodes = calloc((size_t)nbn, sizeof *g->nodes);
    g->io = malloc((size_t)(b->nbio ? b->nbio : 1) * sizeof *g->io);
    g->cons = malloc((size_t)(b->nbio ? b->nbio : 1) * sizeof *g->cons);
    if (!topo_of || !g->nodes || !g->io || !g->cons) {
        free(topo_of);
        return nomem(b);
    }
    g->nnodes = (int32_t)nbn;
    g->nio = b->nbio;
    int64_t io = 0;
    for (int64_t i = 0; i < nbn; i++) {
        const bnode *bn = &b->bn[order[i]];
        fe_node *n = &g->nodes[i];
        topo_of[order[i]] = (int32_t)i;
        *n = (fe_node){.name = bn->name, .op = (uint16_t)bn->op, .io_off = (int32_t)io,
                       .nin = bn->nin, .nout = bn->nout, .attr_off = bn->attr_off,
                       .nattr = bn->nattr, .line = bn->line, .order = order[i]};
        for (int k = 0; k < bn->nin + bn->nout; k++)
            g->io[io++] = g->tensor_of_name[b->bio[bn->io_off + k]];
        g->node_of_name[bn->name] = (int32_t)i;
    }
    for (int32_t t = 0; t < g->ntensors; t++) {
        fe_tensor *ts = &g->tensors[t];
        if (ts->producer >= 0)
            ts->producer = topo_of[ts->producer];
        ts->ncons = 0;
    }
    free(topo_of);

    /* Count, offset, fill; a node reading a tensor twice is one consumer. */
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = &g->nodes[v];
        for (int k = 0; k < n->nin; k++) {
            int dup = 0;
            for (int j = 0; j < k && !dup; j++)
                dup = fe_node_input(g, n, j) == fe_node_input(g, n, k);
            if (!dup)
                g->tensors[fe_node_input(g, n, k)].ncons++;
        }
    }
    int64_t off = 0;
    for (int32_t t = 0; t < g->ntensors; t++) {
        g->tensors[t].cons_off = (int32_t)off;
        off += g->tensors[t].ncons;
        g->tensors[t].ncons = 0;
    }
    g->ncons = off;
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = &g->nodes[v];
        for (int k = 0; k < n->nin; k++) {
            fe_tensor *ts = &g->tensors[fe_node_input(g, n, k)];
            if (ts->ncons == 0 || g->cons[ts->cons_off + ts->ncons - 1] != v)
                g->cons[ts->cons_off + ts->ncons++] = v;
        }
    }
    return FE_OK;
}

static void shape_of(const fe_graph *g, const fe_tensor *t, fe_shape *s)
{
    s->rank = t->rank;
    s->dtype = t->dtype;
    if (t->rank)   /* a graph of scalars may have no shape pool at all */
        memcpy(s->dim, fe_tensor_shape(g, t), sizeof(int64_t) * t->rank);
}

static int same_shape(const fe_graph *g, const fe_tensor *t, const fe_shape *s)
{
    return t->rank == s->rank && t->dtype == s->dtype &&
           (s->rank == 0 || memcmp(fe_tensor_shape(g, t), s->dim, sizeof(int64_t) * (size_t)s->rank) == 0);
}

/* Pass 6: infer every node's outputs in topological order. */
static int finish_infer(fe_builder *b)
{
    fe_graph *g = b->g;
    fe_infer *in = malloc(sizeof *in);
    fe_shape *out = malloc(FE_MAX_IO * sizeof *out);
    int rc = FE_OK;
    if (!in || !out) {
        rc = nomem(b);
        goto done;
    }
    in->g = g;
    in->out = out;
    for (int32_t v = 0; v < g->nnodes && rc == FE_OK; v++) {
        fe_node *n = &g->nodes[v];
        const fe_op *op = fe_op_get(n->op);
        const char *name = str(b, n->name);
        char sb[2][160];

        if (n->nin < op->min_in || (op->max_in != FE_VARIADIC && n->nin > op->max_in)) {
            rc = op->min_in == op->max_in
                     ? berr(b, n->line, "node '%s' (%s) takes %d input%s; it has %d", name,
                            op->name, op->min_in, op->min_in == 1 ? "" : "s", n->nin)
                     : berr(b, n->line, "node '%s' (%s) takes %d to %d inputs; it has %d",
                            name, op->name, op->min_in, op->max_in, n->nin);
            break;
        }
        if (n->op != FE_OP_CUSTOM && n->nout != 1) {
            rc = berr(b, n->line, "node '%s' (%s) has %d outputs; it produces exactly one",
                      name, op->name, n->nout);
            break;
        }
        n->pattern = op->pattern;
        n->live = op->live;
        {
            char why[300];
            if (fe_op_check_attrs(g, n, why, sizeof why)) {
                rc = berr(b, n->line, "node '%s' (%s): %s", name, op->name, why);
                break;
            }
            for (int i = 0; i < n->nattr && rc == FE_OK; i++) {
                const fe_attr *a = &g->attrs[n->attr_off + i];
                for (int j = 0; a->type == FE_ATTR_INTS && j < a->n && rc == FE_OK; j++) {
                    int64_t v = g->ints[a->v.off + j];
                    if (FE_IS_SYM(v) && !b->bd[v - FE_SYM_BASE].declared)
                        rc = berr(b, n->line, "node '%s' (%s): attrs.%s uses dim '%s', which "
                                  "\"dims\" does not declare", name, op->name, str(b, a->key),
                                  str(b, b->bd[v - FE_SYM_BASE].name));
                }
            }
            if (rc)
                break;
        }
        if (n->op == FE_OP_CUSTOM) {
            const char *p = fe_node_attr_str(g, n, "pattern", "opaque");
            int pk = fe_pattern_parse(p);
            if (pk < 0) {
                rc = berr(b, n->line, "node '%s' (custom) has attrs.pattern '%s'; expected "
                          "elemwise, broadcast, injective, reduction, out_fusable or opaque",
                          name, p);
                break;
            }
            n->pattern = (uint8_t)pk;
            for (int k = 0; k < n->nout; k++) {
                const fe_tensor *t = &g->tensors[fe_node_output(g, n, k)];
                if (!(t->flags & FE_T_DECLARED)) {
                    rc = berr(b, n->line, "node '%s' (custom) output '%s' must be declared in "
                              "\"tensors\": fuseeng cannot infer a custom op's shapes", name,
                              str(b, t->name));
                    break;
                }
            }
        } else {
            in->node = n;
            in->err = &b->err;
            for (int k = 0; k < n->nin; k++)
                shape_of(g, &g->tensors[fe_node_input(g, n, k)], &in->in[k]);
            if (op->infer(in) != FE_OK) {
                /* Put the place and the node in front of the op's sentence. */
                char msg[sizeof b->err.message];
                memcpy(msg, b->err.message, sizeof msg);
                b->err.code = FE_OK;
                rc = berr(b, n->line, "node '%s' (%s): %s", name, op->name, msg);
                break;
            }
            for (int k = 0; k < n->nout && rc == FE_OK; k++) {
                fe_tensor *t = &g->tensors[fe_node_output(g, n, k)];
                if (t->flags & FE_T_DECLARED) {
                    if (!same_shape(g, t, &out[k]))
                        rc = berr(b, t->line ? t->line : n->line,
                                  "node '%s' (%s) output '%s' is declared %s %s but the op "
                                  "produces %s %s", name, op->name, str(b, t->name),
                                  fe_shape_str(fe_tensor_shape(g, t), t->rank, sb[0], 160),
                                  fe_dtype_name(t->dtype),
                                  fe_shape_str(out[k].dim, out[k].rank, sb[1], 160),
                                  fe_dtype_name(out[k].dtype));
                    continue;
                }
                if (grow_shape(b, out[k].rank)) {
                    rc = nomem(b);
                    break;
                }
                t->shape_off = (int32_t)g->nshape;
                t->rank = (uint8_t)out[k].rank;
                t->dtype = (uint8_t)out[k].dtype;
                for (int i = 0; i < out[k].rank; i++) {
                    g->shape[g->nshape + i] = out[k].dim[i];
                    g->shape_sym[g->nshape + i] = -1;
                }
                g->nshape += out[k].rank;
                rc = size_tensor(b, t, n->line);
            }
        }
        if (rc == FE_OK) {
            /* Every sum over nodes and tensors the engine forms (a group's
             * bytes, a plan's FLOPs) is bounded by these totals, so checking
             * them here keeps all later arithmetic in range. */
            int64_t wr = 0;
            int ov = 0;
            for (int k = 0; k < n->nout; k++)
                ov |= __builtin_add_overflow(wr, g->tensors[fe_node_output(g, n, k)].bytes, &wr);
            n->bytes_written = wr;
            ov |= fe_op_cost(g, n, &n->flops, &n->bytes_read);
            ov |= __builtin_add_overflow(b->total_flops, n->flops, &b->total_flops);
            ov |= __builtin_add_overflow(b->total_bytes, n->bytes_read, &b->total_bytes);
            ov |= __builtin_add_overflow(b->total_bytes, n->bytes_written, &b->total_bytes);
            if (ov)
                rc = berr(b, n->line, "node '%s' (%s): its FLOP or byte count, or the model's "
                          "total up to it, overflows 64 bits; %s", name, op->name,
                          n->op == FE_OP_CUSTOM ? "check its attrs.flops and attrs.bytes, or "
                          "lower the dims" : "the shapes are too large (lower the dims)");
        }
    }
done:
    free(in);
    free(out);
    return rc ? rc : b->err.code;
}

/* Pass 7: the graph's outputs, each produced by some node. */
static int finish_graph_outputs(fe_builder *b)
{
    fe_graph *g = b->g;
    if (b->nouts == 0)
        return berr(b, 0, "the model lists no outputs; \"outputs\" must name at least one "
                    "tensor");
    g->outputs = malloc((size_t)b->nouts * sizeof *g->outputs);
    if (!g->outputs)
        return nomem(b);
    for (int64_t i = 0; i < b->nouts; i++) {
        int32_t t = g->tensor_of_name[b->outs[i].name];
        if (t < 0 || g->tensors[t].producer < 0)
            return berr(b, b->outs[i].line, "output '%s' is not produced by any node%s",
                        str(b, b->outs[i].name),
                        t < 0 ? "" : " (it is a graph input or weight)");
        g->tensors[t].flags |= FE_T_OUTPUT;
        g->outputs[g->noutputs++] = t;
    }
    return FE_OK;
}

fe_graph *fe_builder_finish(fe_builder *b, fe_error *err)
{
    int32_t *order = NULL;
    fe_graph *g = b->g;

    if (!failed(b) && b->nbn == 0)
        berr(b, 0, "the model has no nodes");
    if (!failed(b) && !finish_dims(b) && !finish_declared(b) && !finish_outputs_of_nodes(b) &&
        !finish_inputs_of_nodes(b) && !finish_topo(b, &order) && !finish_layout(b, order) &&
        !finish_infer(b) && !finish_graph_outputs(b)) {
        if (!g->name)
            fe_builder_meta(b, "", "");
    }
    free(order);
    if (failed(b)) {
        if (err)
            *err = b->err;
        fe_builder_free(b);
        return NULL;
    }
    b->g = NULL;
    fe_builder_free(b);
    return g;
}

void fe_graph_free(fe_graph *g)
{
    if (!g)
        return;
    free(g->file);
    free(g->name);
    free(g->source);
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

const char *fe_node_op_name(const fe_node *n)
{
    return fe_op_get(n->op)->name;
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
