/* graph.h: the tensor graph IR.
 *
 * A graph is a handful of flat arrays indexed by int32 ids: dims, tensors,
 * nodes, and pools that hold each node's tensor ids, each tensor's consumers,
 * shapes and attributes. Names are interned once (strtab.h). Nodes are stored
 * in topological order, so a node's id is its topological index and every
 * producer has a smaller id than its consumers.
 *
 * Graphs are built with fe_builder (build.h, in any node order, as a model
 * file lists them) and are read-only once finished: the simulator, the Lua
 * bindings and the kernels only read them, through the accessors at the
 * bottom. The graph does not know the op registry (ops.h, which includes
 * this header): a node's op is an id into it.
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
    char *weights_stamp;     /* NULL, or the stamp of the weights file made with it (formats.md) */
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