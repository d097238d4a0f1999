/* graph.h: the tensor graph IR.
 *
 * A graph is a handful of flat arrays indexed by int32 ids: dims, tensors,
 * nodes, and pools that hold each node's tensor ids, each tensor's consumers,
 * shapes and attributes. Names are interned once (strtab.h). Nodes are stored
 * in topological order, so a node's id is its topological index and every
 * producer has a smaller id than its consumers.
 *
 * Graphs are built with fe_builder (in any node order, as a model file lists
 * them) and are read-only once finished: the simulator, the Lua bindings and
 * the kernels only read them, through the accessors at the bottom.
 */
#ifndef FE_GRAPH_H
#define FE_GRAPH_H

#include <stdint.h>

#include "error.h"
#include "strtab.h"

#define FE_MAX_RANK 8
#define FE_MAX_NAME 4096         /* longest name or attribute string */
#define FE_MAX_TEXT (1 << 20)    /* longest free text (model name, source) */
#define FE_MAX_IO 4096           /* most inputs or outputs of one node */

typedef enum fe_dtype {
    FE_F32, FE_F16, FE_BF16, FE_I64, FE_I32, FE_I8, FE_BOOL, FE_NDTYPE
} fe_dtype;

typedef enum fe_tkind { FE_INPUT, FE_WEIGHT, FE_ACTIVATION } fe_tkind;

/* How an op may fuse (TVM's OpPatternKind, in the same order). */
typedef enum fe_pattern {
    FE_ELEMWISE, FE_BROADCAST, FE_INJECTIVE, FE_REDUCTION, FE_OUT_FUSABLE,
    FE_OPAQUE, FE_NPATTERN
} fe_pattern;

/* Symbolic dims inside attribute int lists (reshape/expand shapes) are
 * stored as FE_SYM(dim id) and resolved against the graph's dims on read. */
#define FE_SYM_BASE INT64_MIN
#define FE_SYM(d) (FE_SYM_BASE + (int64_t)(d))
#define FE_IS_SYM(v) ((v) < FE_SYM_BASE + (int64_t)INT32_MAX)

typedef enum fe_attr_type {
    FE_ATTR_NULL, FE_ATTR_BOOL, FE_ATTR_INT, FE_ATTR_FLOAT, FE_ATTR_STR,
    FE_ATTR_INTS,   /* list of ints and dim names; v.off into g->ints, n items */
    FE_ATTR_JSON    /* anything else, kept verbatim as compact JSON text */
} fe_attr_type;

typedef struct fe_attr {
    int32_t key;      /* interned */
    int32_t type;     /* fe_attr_type */
    int32_t n;        /* items of an INTS list; bytes of JSON text */
    union {
        int64_t i;    /* BOOL, INT */
        double f;     /* FLOAT */
        int32_t s;    /* STR: interned id */
        int64_t off;  /* INTS: into g->ints; JSON: into g->blob */
    } v;
} fe_attr;

enum { FE_T_DECLARED = 1, FE_T_OUTPUT = 2 };

typedef struct fe_tensor {
    int32_t name;
    int32_t producer;        /* node id; -1 for inputs and weights */
    int32_t cons_off, ncons; /* consumer node ids: g->cons[cons_off ..] */
    int32_t shape_off;       /* g->shape[shape_off ..] and g->shape_sym[..] */
    int32_t line;            /* line declared in the model file; 0 if none */
    int64_t numel;           /* product of dims (1 for rank 0) */
    int64_t bytes;           /* numel * dtype size */
    uint8_t rank, dtype, kind, flags;
} fe_tensor;

typedef struct fe_node {
    int32_t name;
    uint16_t op;             /* index in the op registry (ops.h) */
    uint8_t pattern;         /* the op's fe_pattern; custom: attrs.pattern */
    uint8_t live;            /* live values per element (register model) */
    int32_t io_off;          /* inputs g->io[io_off ..], then the outputs */
    uint16_t nin, nout;
    int32_t attr_off, nattr; /* g->attrs[attr_off ..] */
    int32_t line;            /* line in the model file; 0 if none */
    int32_t order;           /* position in the file's "nodes" list */
    int64_t flops;
    int64_t bytes_read, bytes_written;
} fe_node;

typedef struct fe_dim {
    int32_t name;
    int32_t line;
    int64_t value;
} fe_dim;

typedef struct fe_graph {
    char *file;              /* label for messages: the model's path */
    char *name, *source;
    fe_strtab *strs;

    int32_t ndims, ntensors, nnodes, noutputs;
    fe_dim *dims;
    fe_tensor *tensors;      /* declared tensors first, in file order */
    fe_node *nodes;          /* topological order */
    int32_t *outputs;        /* graph outputs, tensor ids */

    int32_t *io;             /* node inputs and outputs */
    int32_t *cons;           /* tensor consumers */
    int64_t *shape;          /* resolved dims */
    int32_t *shape_sym;      /* dim id where the file wrote a name, else -1 */
    fe_attr *attrs;
    int64_t *ints;           /* INTS attribute items */
    char *blob;              /* JSON attribute texts */
    int64_t nio, ncons, nshape, nattrs, nints, nblob;

    int32_t *node_of_name;   /* strtab id -> node id or -1 */
    int32_t *tensor_of_name; /* strtab id -> tensor id or -1 */
    int32_t nnames;          /* length of the two maps above */
} fe_graph;

/* ---- dtypes, kinds, patterns ---- */

int fe_dtype_size(int dtype);
const char *fe_dtype_name(int dtype);
int fe_dtype_parse(const char *s);            /* -1 if unknown */
int fe_dtype_is_float(int dtype);
const char *fe_tkind_name(int kind);
int fe_tkind_parse(const char *s);            /* -1 if unknown */
const char *fe_pattern_name(int pattern);
int fe_pattern_parse(const char *s);          /* -1 if unknown */

/* ---- building ----
 *
 * Builders take names as NUL-terminated strings and copy them. A builder
 * records the first error and ignores calls after it; fe_builder_finish
 * reports it. Line numbers are only for messages (0 = unknown). */

typedef struct fe_builder fe_builder;

/* New builder; label names the model in messages (usually its path). */
fe_builder *fe_builder_new(const char *label, fe_error *err);
/* Discard a builder that will not be finished. */
void fe_builder_free(fe_builder *b);

int fe_builder_meta(fe_builder *b, const char *name, const char *source);
int fe_builder_dim(fe_builder *b, const char *name, int64_t value, int line);
/* Override a dim's default (--dim NAME=V); the dim must exist by finish. */
int fe_builder_set_dim(fe_builder *b, const char *name, int64_t value);
/* Declare a tensor. shape items are sizes or FE_SYM(dim id) where dim id
 * comes from fe_builder_dim_id. Returns its id or -1. */
int32_t fe_builder_tensor(fe_builder *b, const char *name, int dtype, int kind,
                          int rank, const int64_t *shape, int line);
/* Id of a dim name for FE_SYM, declared or not yet declared; -1 on error. */
int32_t fe_builder_dim_id(fe_builder *b, const char *name);
/* Add a node; returns its builder index (for attributes) or -1. */
int32_t fe_builder_node(fe_builder *b, const char *name, const char *op,
                        const char *const *inputs, int nin,
                        const char *const *outputs, int nout, int line);
int fe_builder_attr_null(fe_builder *b, int32_t node, const char *key);
int fe_builder_attr_bool(fe_builder *b, int32_t node, const char *key, int v);
int fe_builder_attr_int(fe_builder *b, int32_t node, const char *key, int64_t v);
int fe_builder_attr_float(fe_builder *b, int32_t node, const char *key, double v);
int fe_builder_attr_str(fe_builder *b, int32_t node, const char *key, const char *v);
int fe_builder_attr_ints(fe_builder *b, int32_t node, const char *key,
                         const int64_t *v, int n);
int fe_builder_attr_json(fe_builder *b, int32_t node, const char *key,
                         const char *json, size_t len);
int fe_builder_output(fe_builder *b, const char *tensor, int line);

/* Resolve names, sort topologically, infer and check shapes and dtypes,
 * count FLOPs and bytes. Consumes the builder (also on failure). Returns
 * the graph (caller frees with fe_graph_free) or NULL with err set. */
fe_graph *fe_builder_finish(fe_builder *b, fe_error *err);

void fe_graph_free(fe_graph *g);

/* Approximate bytes the graph holds in memory. */
size_t fe_graph_bytes(const fe_graph *g);

/* ---- reading ---- */

static inline const char *fe_graph_str(const fe_graph *g, int32_t id)
{
    return fe_strtab_str(g->strs, id);
}

static inline const fe_node *fe_graph_node(const fe_graph *g, int32_t id)
{
    return &g->nodes[id];
}

static inline const fe_tensor *fe_graph_tensor(const fe_graph *g, int32_t id)
{
    return &g->tensors[id];
}

static inline const char *fe_node_name(const fe_graph *g, const fe_node *n)
{
    return fe_graph_str(g, n->name);
}

static inline const char *fe_tensor_name(const fe_graph *g, const fe_tensor *t)
{
    return fe_graph_str(g, t->name);
}

static inline int32_t fe_node_input(const fe_graph *g, const fe_node *n, int k)
{
    return g->io[n->io_off + k];
}

static inline int32_t fe_node_output(const fe_graph *g, const fe_node *n, int k)
{
    return g->io[n->io_off + n->nin + k];
}

static inline const int64_t *fe_tensor_shape(const fe_graph *g, const fe_tensor *t)
{
    return &g->shape[t->shape_off];
}

static inline int32_t fe_tensor_consumer(const fe_graph *g, const fe_tensor *t, int k)
{
    return g->cons[t->cons_off + k];
}

static inline int32_t fe_node_id(const fe_graph *g, const fe_node *n)
{
    return (int32_t)(n - g->nodes);
}

/* Node or tensor id by name, or -1. */
int32_t fe_graph_find_node(const fe_graph *g, const char *name);
int32_t fe_graph_find_tensor(const fe_graph *g, const char *name);
int32_t fe_graph_find_dim(const fe_graph *g, const char *name);

/* Name of the node's op (registry name, e.g. "matmul"). */
const char *fe_node_op_name(const fe_node *n);

/* ---- attributes ----
 * Lookups return the default when the key is absent. Numbers convert between
 * int and float; fe_node_attr_ints resolves dim names and also accepts a
 * single int (returned as a list of one). */
const fe_attr *fe_node_attr(const fe_graph *g, const fe_node *n, const char *key);
int64_t fe_node_attr_int(const fe_graph *g, const fe_node *n, const char *key, int64_t dflt);
double fe_node_attr_float(const fe_graph *g, const fe_node *n, const char *key, double dflt);
int fe_node_attr_bool(const fe_graph *g, const fe_node *n, const char *key, int dflt);
const char *fe_node_attr_str(const fe_graph *g, const fe_node *n, const char *key, const char *dflt);
/* Items of an int list into out[0..max); returns the count, -1 if absent,
 * -2 if present but not an int list or longer than max. */
int fe_node_attr_ints(const fe_graph *g, const fe_node *n, const char *key, int64_t *out, int max);
/* Resolve one INTS item (a size or FE_SYM) against the graph's dims. */
int64_t fe_graph_resolve(const fe_graph *g, int64_t v);

/* Format a shape as "[1,512,4096]" into buf; returns buf. */
char *fe_shape_str(const int64_t *dims, int rank, char *buf, size_t size);

/* The node's scalar operand (attrs.scalar), with the model files' convention
 * that +-3.4028235e38 stands for an infinity. Returns 1 if present. */
int fe_node_scalar(const fe_graph *g, const fe_node *n, double *v);

#endif
