/* onnx_imp.h: the ONNX importer's state, shared by the driver (import.c),
 * the op mapping (onnx_map.c, onnx_map_shape.c) and constant folding
 * (onnx_fold.c). Private to core/import.
 *
 * Every ONNX value name has an imp_val: what the importer knows about it
 * (dtype, shape with FE_SYM items for symbolic dims) and, for a constant,
 * its elements. A value becomes a tensor of our graph only when a mapped
 * node reads it as a tensor; constants read as attributes (shapes, axes,
 * scalars) never do. Shapes are tracked here because ONNX ops read them
 * (Shape, Flatten, Squeeze, ...); the builder's inference then checks every
 * node again with the registry's rules.
 */
#ifndef FE_ONNX_IMP_H
#define FE_ONNX_IMP_H

#include <stdint.h>

#include "build.h"
#include "onnx_read.h"
#include "strtab.h"

/* Constants of at most this many elements are decoded, so that nodes on them
 * fold and their values can become attributes. */
#define IMP_FOLD_MAX 65536

/* The largest dim the importer takes (2^40): with it, and window attributes
 * of at most INT32_MAX, no shape arithmetic of the importer overflows. */
#define IMP_DIM_MAX (INT64_C(1) << 40)

/* Integer constants hold symbolic dims as FE_SYM items (graph.h), the
 * values below IMP_INT_MIN; a value read from the file or folded below it
 * is raised to it (imp_int), so that it is never taken for a dim. As a
 * slice bound (torch's INT64_MIN for "to the start") it means the same. */
#define IMP_INT_MIN (FE_SYM_BASE + (int64_t)INT32_MAX)

typedef struct imp_val {
    int32_t name;              /* the ONNX name (im->strs) */
    int32_t tensor;            /* our tensor name (im->strs) once in the graph, else -1 */
    int dtype, rank;
    int64_t shape[FE_MAX_RANK];/* sizes or FE_SYM(dim id) */
    int is_const;
    int64_t numel;             /* constants only */
    const void *data;          /* constant elements in dtype's layout (NULL: only decoded) */
    int64_t *iv;               /* decoded integer or bool constant (FE_SYM items allowed) */
    double *fv;                /* decoded float constant */
} imp_val;

/* Names live in im->strs, whose text moves when it grows: the importer
 * keeps ids (int32) and turns one into a string (fe_strtab_str) only to
 * use it before the next imp_intern. */
typedef struct imp {
    const fe_onnx *o;
    const char *path;
    fe_builder *b;
    fe_error *err;
    fe_strtab *strs;           /* value names, our tensor and node names */
    int32_t *val_of;           /* strs id -> index in vals, -1 */
    uint8_t *taken;            /* strs id -> IMP_TENSOR | IMP_NODE | ... (below) */
    int32_t *next_k;           /* strs id -> the next suffix fresh names try after it */
    int32_t nmap;
    imp_val **blocks;          /* values in blocks of 1024, so pointers stay put */
    int32_t nvals, nblocks;
    void **owned;              /* buffers freed at the end */
    int nowned, capowned;
    const char **names;        /* scratch: a node's input names for the builder */
    int capnames;
    char *notes;               /* warnings and notes for stderr */
    size_t nnotes, capnotes;
    const Onnx__NodeProto *node;  /* being mapped, for messages and names */
    const char *node_name;        /* its unique base name (in name_buf) */
    char name_buf[FE_MAX_NAME];
    int node_index, emitted;
    int ncustom, nfolded, nnodes;
    int clamped_noted;         /* a note said that ints were raised to IMP_INT_MIN */
    imp_val **weights;         /* values made weights, in order */
    int nweights, capweights;
    const Onnx__ValueInfoProto **vinfo;  /* strs id -> value_info / output */
    int ngiven;                /* the dims the user gave (fe_import_opts): */
    const char *const *given_names;   /* given_names[k] = given_values[k] */
    const int64_t *given_values;
    struct { int64_t sym; int32_t name; } dims[256];  /* symbolic dims seen (name: strs id) */
    int ndims;
    int fixed_noted;           /* 1 + the node last warned of folding a dim */
} imp;

/* What a name of im->strs is taken as (im->taken); IMP_DECLARED: a tensor
 * whose shape a mapping declared (a custom node's output), which the graph
 * outputs' declarations then leave alone. */
enum { IMP_TENSOR = 1, IMP_NODE = 2, IMP_ONNX_NODE = 4, IMP_GRAPH_OUTPUT = 8,
       IMP_GRAPH_INPUT = 16, IMP_DECLARED = 32 };

/* Helpers (import.c). Each returns FE_OK or an error code with im->err set. */
/* An error naming the file and, while a node is mapped, the node:
 * "PATH: node 'NAME' (OP, #INDEX): MESSAGE". */
int imp_fail(imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void imp_note(imp *im, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The builder's error, if it has one and im->err has none, into im->err
 * with the node's name; returns im->err->code. Every builder call may fail
 * (a name, a shape, an attribute it refuses), and a mapping that goes on
 * after one must not lose it: the driver calls this after every node. */
int imp_sync(imp *im);
void *imp_alloc(imp *im, size_t n);          /* zeroed, freed with im */
int32_t imp_intern(imp *im, const char *s);
imp_val *imp_get(imp *im, const char *name); /* NULL if unknown */
imp_val *imp_new_val(imp *im, const char *name);
/* Input k of the node being mapped. imp_in is for the inputs the op
 * requires: imp_check_node (onnx_check.c) has made sure they are there
 * before any mapping or folding runs, so it is never NULL for them.
 * imp_opt is for the optional ones: NULL when absent or empty, which the
 * caller must handle. */
imp_val *imp_in(imp *im, int k);
imp_val *imp_opt(imp *im, int k);
/* The tensor name of v (an id of im->strs), making a constant a weight
 * first; -1 with im->err set. */
int32_t imp_tensor(imp *im, imp_val *v);
/* A new value for the node's ONNX output k, named as ONNX names it. */
imp_val *imp_out(imp *im, int k, int dtype, int rank, const int64_t *shape);
/* A new intermediate value with a fresh tensor name. */
imp_val *imp_tmp(imp *im, int dtype, int rank, const int64_t *shape);
/* A new constant of dtype and shape (elements zero in iv or fv, to be
 * filled) under a fresh name; it becomes a weight when read as a tensor. */
imp_val *imp_const_tmp(imp *im, int dtype, int rank, const int64_t *shape);
/* A name for the next node emitted for the node being mapped (its base
 * name, then NAME/1, NAME/2, ...), unused so far; an id of im->strs. */
int32_t fresh_node_name(imp *im);
/* Add a node of op reading ins[0..nin) (any number), writing out; returns
 * the builder's node index or -1 with im->err set. */
int32_t imp_emit(imp *im, const char *op, imp_val *const *ins, int nin, imp_val *out);
/* out becomes another name of v (Identity, Dropout). */
int imp_alias(imp *im, const char *name, imp_val *v);
/* The dim name of a FE_SYM item; valid until the next imp_intern. */
const char *imp_dim_name(imp *im, int64_t sym);
/* The value of a FE_SYM item (--dim or 1), for a node that computes with
 * it in a way the model cannot say with a dim name: the model then holds
 * that value, which a warning naming the node says (once per node). */
int64_t imp_dim_value(imp *im, int64_t sym);
/* FE_OK if shape[0..rank) holds sizes 1..IMP_DIM_MAX and dim names only,
 * else an error "WHAT dim K is V; ...". */
int imp_check_shape(imp *im, const int64_t *shape, int rank, const char *what);

/* A declared ONNX type (graph input or output, value_info) into dtype and
 * shape; dim names become model dims (default 1). 1, 0 if it declares no
 * tensor shape, or an error code. what names it in messages ("graph input
 * 'x'"). */
int imp_declared(imp *im, const Onnx__ValueInfoProto *vi, const char *what, int *dtype, int *rank,
                 int64_t *shape);

/* Checks every node passes before it is folded or mapped (onnx_check.c):
 * its inputs and outputs against what the op takes, its attributes'
 * types and integer ranges. FE_OK or an error naming the node. */
int imp_check_node(imp *im);
/* 1 if n is an operator of a domain other than ONNX's own (com.microsoft,
 * a user's): never folded or mapped, always a custom node "DOMAIN.Op". */
int imp_foreign(const Onnx__NodeProto *n);
/* Node attributes, read after imp_check_node has checked their types. */
const Onnx__AttributeProto *imp_attr(const Onnx__NodeProto *n, const char *key);
int64_t imp_attr_int(const Onnx__NodeProto *n, const char *key, int64_t dflt);
double imp_attr_float(const Onnx__NodeProto *n, const char *key, double dflt);
/* A string attribute into buf (cut to cap - 1 bytes), or dflt. */
const char *imp_attr_str(const Onnx__NodeProto *n, const char *key, const char *dflt, char *buf,
                         size_t cap);
/* Items of an ints attribute into out[0..max); the number of items it
 * has (which may be more than max), or -1 if absent. */
int imp_attr_ints(const Onnx__NodeProto *n, const char *key, int64_t *out, int max);
/* The node's number, string and list attributes as one JSON object (a
 * custom node's attrs.onnx_attrs, for the kernel registered for it);
 * caller frees with free(); NULL when out of memory. */
char *imp_attrs_json(const Onnx__NodeProto *n);
/* An axis v of a rank-`rank` input (for key's message), normalised into
 * *out: -rank..rank-1, or -rank..rank with `inclusive` (Flatten). */
int imp_axis(imp *im, const char *key, int64_t v, int rank, int inclusive, int64_t *out);
/* The attribute perm (or its default, the reversed axes) of a rank-`rank`
 * input into perm: a permutation of 0..rank-1, else an error. */
int imp_perm(imp *im, int rank, int64_t *perm);

/* Numbers. */
/* d as int64: truncated, saturated to IMP_INT_MIN..INT64_MAX, NaN as 0
 * (C leaves an out-of-range conversion undefined). */
int64_t imp_f2i(double d);
/* An integer computed or read from the file: raised to IMP_INT_MIN (with a
 * note, once) so that it is not a dim name. */
int64_t imp_int(imp *im, int64_t v);

/* Constants (onnx_fold.c). */
/* Decode a TensorProto into v (data, and iv/fv when small). */
int imp_const_from_proto(imp *im, imp_val *v, const Onnx__TensorProto *t, const char *what);
/* A new decoded constant value of dtype and shape (elements zeroed). */
imp_val *imp_const_new(imp *im, imp_val *v, int dtype, int rank, const int64_t *shape);
/* Element i of a decoded constant as a double / int64. */
double imp_cf(const imp_val *v, int64_t i);
int64_t imp_ci(const imp_val *v, int64_t i);
/* Ints of a decoded constant into out (at most max); -1 if not one. */
int imp_const_ints(const imp_val *v, int64_t *out, int max);
/* Elements of a decoded constant in its dtype's layout (for a weight). */
int imp_const_encode(imp *im, imp_val *v);
/* Fold the node being mapped if every input is a decoded constant and the
 * op is one folding knows: 1 folded, 0 not foldable, or an error code < 0.
 * A node whose result has a symbolic dim's size (Range(0, S), a
 * ConstantOfShape of [S, S], a Slice to S) is left to the mapping, which
 * keeps the dim (onnx_map_dims.c). */
int imp_fold(imp *im);

/* The op mapping (onnx_map.c): map the node being mapped, or make it a
 * custom node with a warning. */
int imp_map(imp *im);
/* Whether v is a one-element integer constant holding a dim name. */
int imp_sym_scalar(const imp_val *v);

/* Shape helpers (onnx_map_shape.c). */
int imp_broadcast(imp *im, const imp_val *a, const imp_val *b, int *rank, int64_t *shape);
/* An integer (or bool) dtype: its values are exact in int64. */
int imp_is_int(int dtype);
int64_t imp_numel(const int64_t *shape, int rank);   /* -1 if symbolic */
int imp_reshape_shape(imp *im, const imp_val *x, const int64_t *spec, int n, int allowzero,
                      int64_t *out);
/* Axes from the attribute or constant input `input`; -1 if none given. */
int imp_axes(imp *im, int input, int64_t *axes, int max);
/* Output rank, or -1 with im->err set. */
int imp_unsqueeze_shape(imp *im, const imp_val *x, const int64_t *axes, int na, int64_t *out);
/* na < 0: every 1-dim. */
int imp_squeeze_shape(imp *im, const imp_val *x, const int64_t *axes, int na, int64_t *out);
int imp_flatten_shape(imp *im, const imp_val *x, int64_t axis, int64_t *out);
int imp_slice_axis(imp *im, int64_t dim, int64_t *start, int64_t end, int64_t step, int64_t *size);
/* imp_slice_axis that allows an empty result (*size 0): folding's constants may be empty. */
int imp_slice_range(imp *im, int64_t dim, int64_t *start, int64_t end, int64_t step,
                    int64_t *size);
int imp_slice_args(imp *im, const imp_val *x, int64_t *axes, int64_t *starts, int64_t *ends,
                   int64_t *steps);

#endif
