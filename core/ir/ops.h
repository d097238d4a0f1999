/* ops.h: the op registry, the one table that owns everything the engine
 * knows about an operator: its pattern kind, arity, shape and dtype
 * inference, FLOP and byte counts, live values per element for the register
 * model, and a one-line description. Kernels (kernels/) and the simulator
 * look ops up here by id; nothing else keeps per-op tables.
 */
#ifndef FE_OPS_H
#define FE_OPS_H

#include "graph.h"
#include "infer.h"

#define FE_VARIADIC 255

typedef struct fe_op {
    const char *name;
    uint8_t pattern;        /* fe_pattern */
    uint8_t min_in, max_in; /* arity; FE_VARIADIC for any number */
    uint8_t live;           /* values live per element in registers */
    uint8_t flops;          /* FLOPs per output element for pointwise math */
    /* The attributes it reads, "name:type ...": type is bool, int, num (int
     * or real), str, dtype, count (int >= 0), dim (an int or a dim name),
     * ints (an int or a list of ints), shape (ints and dim names) or
     * choices "a|b|c". Checked on load
     * (fe_op_check_attrs); null always means the default. */
    const char *attrs;
    const char *desc;       /* one line */
    /* Fill in->out; returns FE_OK or an error code with in->err set. */
    int (*infer)(fe_infer *in);
    /* FLOPs and bytes read, nonzero when they overflow 64 bits; NULL means
     * flops x output elements and every input read once in full (use
     * fe_op_cost). Bytes written are always the outputs. */
    int (*cost)(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *bytes_read);
    uint8_t flags;          /* FE_OPF_* */
} fe_op;

/* How a backend runs an op (fe_op.flags). A view only reinterprets its
 * input's memory (new shape, strides or offset), so a group made of views
 * launches nothing; a library op (matmul, conv, attention) run alone is a
 * vendor library call, an "extern" kernel, not generated code. */
enum { FE_OPF_VIEW = 1, FE_OPF_LIBRARY = 2 };

enum {
    /* elemwise */
    FE_OP_RELU, FE_OP_GELU, FE_OP_SILU, FE_OP_SIGMOID, FE_OP_TANH, FE_OP_EXP,
    FE_OP_LOG, FE_OP_NEG, FE_OP_ABS, FE_OP_SQRT, FE_OP_RSQRT,
    FE_OP_RECIPROCAL, FE_OP_SIN, FE_OP_COS, FE_OP_ERF, FE_OP_HARDSIGMOID,
    FE_OP_HARDSWISH, FE_OP_CAST,
    /* broadcast */
    FE_OP_ADD, FE_OP_SUB, FE_OP_MUL, FE_OP_DIV, FE_OP_MAXIMUM, FE_OP_MINIMUM,
    FE_OP_POW, FE_OP_WHERE,
    /* reduction */
    FE_OP_SUM, FE_OP_MEAN, FE_OP_AMAX, FE_OP_AMIN, FE_OP_SOFTMAX,
    FE_OP_LOG_SOFTMAX, FE_OP_RMS_NORM, FE_OP_LAYER_NORM,
    /* injective */
    FE_OP_RESHAPE, FE_OP_TRANSPOSE, FE_OP_SLICE, FE_OP_CONCAT, FE_OP_PAD,
    FE_OP_EXPAND, FE_OP_GATHER, FE_OP_EMBEDDING,
    /* out-fusable */
    FE_OP_MATMUL, FE_OP_CONV2D,
    /* opaque (batch_norm is broadcast: pointwise in inference; it keeps
     * its place so that op ids do not move) */
    FE_OP_SDPA, FE_OP_MAX_POOL2D, FE_OP_AVG_POOL2D, FE_OP_BATCH_NORM,
    FE_OP_ALL_REDUCE, FE_OP_CUSTOM,
    /* added later, after custom so that the ids above do not move: the ops
     * that compute with symbolic dims (positions, causal masks) */
    FE_OP_COMPARE, FE_OP_ARANGE, FE_OP_TRILU,
    FE_NOPS
};

/* The registry entry for op id (0 <= id < FE_NOPS). */
const fe_op *fe_op_get(int id);
/* Op id by name, or -1. */
int fe_op_find(const char *name);
/* Name of node n's op (registry name, e.g. "matmul"). */
const char *fe_node_op_name(const fe_node *n);
/* All op names, comma separated, for "known ops are ..." messages. */
const char *fe_op_names(void);
/* Whether op types attribute key "dim" (an int or a dim name, held as a
 * list of one FE_SYM item when it names one: slice bounds, arange's). */
int fe_op_attr_is_dim(int op, const char *key);
/* Whether node n's attributes have the types its op's spec gives; on a
 * mismatch returns -1 with msg (cap bytes) saying what was found and what
 * was expected. Attributes the op does not read are not checked. */
int fe_op_check_attrs(const fe_graph *g, const fe_node *n, char *msg, size_t cap);
/* Node n's FLOPs and bytes read under its op's counting rules; nonzero
 * (with both saturated) when either overflows 64 bits. */
int fe_op_cost(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *bytes_read);


#endif
