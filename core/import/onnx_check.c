/* onnx_check.c: what every node passes before it is folded or mapped, and
 * the reading of its attributes.
 *
 * Two tables are the whole of it. `ops` says how many inputs and outputs
 * each operator the importer folds or maps takes, and which inputs it
 * requires: once imp_check_node has passed, a mapping or a folding reads a
 * required input with imp_in and never finds it absent, and reads an
 * optional one with imp_opt, which may say it is. `attrs` says of each
 * attribute the importer reads its type and, for integers, the range of
 * every value: a stride of 0, a pad of 2^63 - 1 or a float where an int
 * belongs is one error here, naming the attribute and the range, instead
 * of a division by zero or an overflow in some mapping. Ranges that depend
 * on the input (an axis against the rank, a permutation) are checked by
 * imp_axis and imp_perm, which the mappings call.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

#include "onnx_imp.h"

/* ---- inputs and outputs ---- */

#define ANY (-1)   /* as many inputs (or outputs) as a node may have */

typedef struct op_arity {
    const char *op;
    int min_in, max_in;   /* inputs 0..min_in-1 are required */
    int max_out;          /* outputs: 1..max_out; output 0 is required */
    int all;              /* every input is required (variadic ops) */
} op_arity;

static const op_arity ops[] = {
    {"Relu", 1, 1, 1, 0}, {"Sigmoid", 1, 1, 1, 0}, {"Tanh", 1, 1, 1, 0}, {"Exp", 1, 1, 1, 0},
    {"Log", 1, 1, 1, 0}, {"Neg", 1, 1, 1, 0}, {"Abs", 1, 1, 1, 0}, {"Sqrt", 1, 1, 1, 0},
    {"Reciprocal", 1, 1, 1, 0}, {"Sin", 1, 1, 1, 0}, {"Cos", 1, 1, 1, 0}, {"Erf", 1, 1, 1, 0},
    {"HardSwish", 1, 1, 1, 0}, {"HardSigmoid", 1, 1, 1, 0}, {"LeakyRelu", 1, 1, 1, 0},
    {"Floor", 1, 1, 1, 0}, {"Ceil", 1, 1, 1, 0}, {"Not", 1, 1, 1, 0}, {"Cast", 1, 1, 1, 0},
    {"Clip", 1, 3, 1, 0},
    {"Add", 2, 2, 1, 0}, {"Sub", 2, 2, 1, 0}, {"Mul", 2, 2, 1, 0}, {"Div", 2, 2, 1, 0},
    {"Pow", 2, 2, 1, 0}, {"Mod", 2, 2, 1, 0}, {"Equal", 2, 2, 1, 0}, {"Less", 2, 2, 1, 0},
    {"Greater", 2, 2, 1, 0}, {"And", 2, 2, 1, 0}, {"Or", 2, 2, 1, 0},
    {"Xor", 2, 2, 1, 0}, {"TopK", 1, 2, 2, 0},
    {"Max", 1, ANY, 1, 1}, {"Min", 1, ANY, 1, 1}, {"Sum", 1, ANY, 1, 1}, {"Mean", 1, ANY, 1, 1},
    {"Concat", 1, ANY, 1, 1}, {"Einsum", 1, ANY, 1, 1},
    {"Where", 3, 3, 1, 0}, {"Reshape", 2, 2, 1, 0}, {"Flatten", 1, 1, 1, 0},
    {"Squeeze", 1, 2, 1, 0}, {"Unsqueeze", 1, 2, 1, 0}, {"Transpose", 1, 1, 1, 0},
    {"Slice", 1, 5, 1, 0}, {"Split", 1, 2, ANY, 0}, {"Gather", 2, 2, 1, 0},
    {"Expand", 2, 2, 1, 0}, {"Pad", 1, 4, 1, 0}, {"Identity", 1, 1, 1, 0},
    {"Dropout", 1, 3, 2, 0}, {"Constant", 0, 0, 1, 0}, {"Shape", 1, 1, 1, 0},
    {"ConstantOfShape", 1, 1, 1, 0}, {"Range", 3, 3, 1, 0}, {"Trilu", 1, 2, 1, 0},
    {"Conv", 2, 3, 1, 0}, {"MaxPool", 1, 1, 2, 0}, {"AveragePool", 1, 1, 1, 0},
    {"GlobalAveragePool", 1, 1, 1, 0}, {"GlobalMaxPool", 1, 1, 1, 0},
    {"ReduceMean", 1, 2, 1, 0}, {"ReduceSum", 1, 2, 1, 0}, {"ReduceMax", 1, 2, 1, 0},
    {"ReduceMin", 1, 2, 1, 0}, {"Softmax", 1, 1, 1, 0}, {"LogSoftmax", 1, 1, 1, 0},
    {"MatMul", 2, 2, 1, 0}, {"Gemm", 2, 3, 1, 0}, {"BatchNormalization", 5, 5, 5, 0},
    {"LayerNormalization", 2, 3, 3, 0}, {"ScatterND", 3, 3, 1, 0},
    {"Resize", 1, 4, 1, 0},
};

static const op_arity *arity_of(const char *op)
{
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(ops[i].op, op))
            return &ops[i];
    return NULL;
}

/* "1 input", "2 to 3 inputs", "at least 1 input". */
static void count_text(char *buf, size_t cap, int lo, int hi)
{
    if (hi == ANY)
        snprintf(buf, cap, "at least %d input%s", lo, lo == 1 ? "" : "s");
    else if (lo == hi)
        snprintf(buf, cap, "%d input%s", lo, lo == 1 ? "" : "s");
    else
        snprintf(buf, cap, "%d to %d inputs", lo, hi);
}

static int check_arity(imp *im)
{
    const Onnx__NodeProto *n = im->node;
    int nin = (int)(n->n_input < INT_MAX ? n->n_input : INT_MAX);
    int nout = (int)(n->n_output < INT_MAX ? n->n_output : INT_MAX);
    if (nin > FE_MAX_IO || nout > FE_MAX_IO)
        return imp_fail(im, "has %d inputs and %d outputs; fuseeng's nodes take at most %d of "
                        "each", nin, nout, FE_MAX_IO);
    if (nout == 0)
        return imp_fail(im, "has no outputs; a node must produce something (not a valid ONNX "
                        "model: re-export it)");
    const op_arity *a = imp_foreign(n) ? NULL : arity_of(n->op_type);
    if (!a)
        return FE_OK;   /* no mapping: a custom node, which takes any */
    char want[64];
    count_text(want, sizeof want, a->min_in, a->max_in);
    if (nin < a->min_in || (a->max_in != ANY && nin > a->max_in))
        return imp_fail(im, "takes %s, has %d (not a valid ONNX model: re-export it)", want, nin);
    for (int k = 0; k < nin; k++)
        if (!n->input[k][0] && (k < a->min_in || a->all))
            return imp_fail(im, "input %d is missing (an empty name); %s needs it (not a valid "
                            "ONNX model: re-export it)", k, n->op_type);
    if (a->max_out != ANY && nout > a->max_out)
        return imp_fail(im, "has %d outputs; %s has %s%d (not a valid ONNX model: re-export it)",
                        nout, n->op_type, a->max_out > 1 ? "at most " : "", a->max_out);
    if (!n->output[0][0])
        return imp_fail(im, "output 0 is missing (an empty name); %s produces it (not a valid "
                        "ONNX model: re-export it)", n->op_type);
    return FE_OK;
}

/* ---- attributes ---- */

enum { A_NONE = 0, A_FLOAT = 1, A_INT = 2, A_STRING = 3, A_TENSOR = 4, A_FLOATS = 6,
       A_INTS = 7 };

static const char *kind_name(int k)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH",
                                        "FLOATS", "INTS", "STRINGS", "TENSORS", "GRAPHS",
                                        "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO",
                                        "TYPE_PROTOS"};
    return k >= 0 && k < (int)(sizeof names / sizeof *names) ? names[k] : "an unknown type";
}

/* The attribute's type: as it says, or (files that leave it out) as the
 * field that holds its value says. */
static int kind(const Onnx__AttributeProto *a)
{
    if (a->has_type && a->type != 0)
        return (int)a->type;
    return a->has_f ? A_FLOAT : a->has_i ? A_INT : a->has_s ? A_STRING : a->t ? A_TENSOR
           : a->n_floats ? A_FLOATS : a->n_ints ? A_INTS : A_NONE;
}

typedef struct attr_rule {
    const char *name;
    const char *ops;     /* " Op " entries it is for; NULL: every op */
    int type;
    int64_t lo, hi;      /* A_INT, A_INTS: every value's range; A_FLOAT: hi 1 if inf is taken */
} attr_rule;

#define I64 INT64_MIN, INT64_MAX
#define WIN 1, INT32_MAX
#define FLAG 0, 1

static const attr_rule attrs[] = {
    {"pads", " Pad ", A_INTS, -IMP_DIM_MAX, IMP_DIM_MAX},
    {"pads", NULL, A_INTS, 0, INT32_MAX},
    {"strides", NULL, A_INTS, WIN}, {"dilations", NULL, A_INTS, WIN},
    {"kernel_shape", NULL, A_INTS, WIN}, {"group", NULL, A_INT, WIN},
    {"axis", NULL, A_INT, I64}, {"axes", NULL, A_INTS, I64}, {"perm", NULL, A_INTS, I64},
    {"split", NULL, A_INTS, 0, IMP_DIM_MAX},
    {"starts", NULL, A_INTS, I64}, {"ends", NULL, A_INTS, I64},
    {"start", NULL, A_INT, I64}, {"end", NULL, A_INT, I64},
    {"to", NULL, A_INT, 0, INT32_MAX},
    {"keepdims", NULL, A_INT, FLAG}, {"ceil_mode", NULL, A_INT, FLAG},
    {"count_include_pad", NULL, A_INT, FLAG}, {"transA", NULL, A_INT, FLAG},
    {"transB", NULL, A_INT, FLAG}, {"allowzero", NULL, A_INT, FLAG},
    {"noop_with_empty_axes", NULL, A_INT, FLAG}, {"training_mode", NULL, A_INT, FLAG},
    {"upper", NULL, A_INT, FLAG}, {"fmod", NULL, A_INT, FLAG},
    {"value_int", NULL, A_INT, I64}, {"value_ints", NULL, A_INTS, I64},
    {"value_float", NULL, A_FLOAT, 0, 1}, {"value_floats", NULL, A_FLOATS, 0, 1},
    {"value", " Pad ", A_FLOAT, 0, 1}, {"value", NULL, A_TENSOR, 0, 0},
    {"alpha", NULL, A_FLOAT, 0, 0}, {"beta", NULL, A_FLOAT, 0, 0},
    {"epsilon", NULL, A_FLOAT, 0, 0},
    {"min", NULL, A_FLOAT, 0, 1}, {"max", NULL, A_FLOAT, 0, 1},
    {"auto_pad", NULL, A_STRING, 0, 0}, {"mode", NULL, A_STRING, 0, 0},
    {"equation", NULL, A_STRING, 0, 0}, {"reduction", NULL, A_STRING, 0, 0},
    {"coordinate_transformation_mode", NULL, A_STRING, 0, 0},
    {"nearest_mode", NULL, A_STRING, 0, 0}, {"antialias", NULL, A_INT, FLAG},
};

static const attr_rule *rule_of(const char *op, const char *name)
{
    size_t len = strlen(op);
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        const attr_rule *r = &attrs[i];
        if (strcmp(r->name, name) != 0)
            continue;
        if (!r->ops)
            return r;
        const char *at = strstr(r->ops, op);
        if (at && at[-1] == ' ' && at[len] == ' ')
            return r;
    }
    return NULL;
}

static int check_float(imp *im, const char *name, double v, const attr_rule *r, int item)
{
    char where[32] = "";
    if (item >= 0)
        snprintf(where, sizeof where, " item %d", item);
    if (isnan(v) || (isinf(v) && !r->hi))
        return imp_fail(im, "attribute '%s'%s is %g; it must be a %snumber", name, where, v,
                        r->hi ? "" : "finite ");
    return FE_OK;
}

static int check_attr(imp *im, const Onnx__AttributeProto *a, const attr_rule *r)
{
    int k = kind(a);
    const char *name = a->name;
    /* An int serves where a float is asked for (alpha=1); nothing else. */
    if (k != r->type && !(r->type == A_FLOAT && k == A_INT))
        return imp_fail(im, "attribute '%s' is %s; it must be %s", name, kind_name(k),
                        kind_name(r->type));
    if (r->type == A_INT && (a->i < r->lo || a->i > r->hi))
        return imp_fail(im, "attribute '%s' is %lld; it must be %lld to %lld", name,
                        (long long)a->i, (long long)r->lo, (long long)r->hi);
    for (size_t j = 0; r->type == A_INTS && j < a->n_ints; j++)
        if (a->ints[j] < r->lo || a->ints[j] > r->hi)
            return imp_fail(im, "attribute '%s' item %zu is %lld; it must be %lld to %lld", name, j,
                            (long long)a->ints[j], (long long)r->lo, (long long)r->hi);
    if (r->type == A_FLOAT && k == A_FLOAT && check_float(im, name, a->f, r, -1))
        return im->err->code;
    for (size_t j = 0; r->type == A_FLOATS && j < a->n_floats; j++)
        if (check_float(im, name, a->floats[j], r, (int)j))
            return im->err->code;
    return FE_OK;
}

int imp_check_node(imp *im)
{
    const Onnx__NodeProto *n = im->node;
    if (check_arity(im))
        return im->err->code;
    if (imp_foreign(n) || !arity_of(n->op_type))
        return FE_OK;   /* a custom node: its attributes are not read */
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        const attr_rule *r = a->name ? rule_of(n->op_type, a->name) : NULL;
        if (r && check_attr(im, a, r))
            return im->err->code;
    }
    return FE_OK;
}

int imp_foreign(const Onnx__NodeProto *n)
{
    return n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0;
}

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
    return a && kind(a) == A_INT ? a->i : dflt;
}

double imp_attr_float(const Onnx__NodeProto *n, const char *key, double dflt)
{
    const Onnx__AttributeProto *a = imp_attr(n, key);
    int k = a ? kind(a) : A_NONE;
    return k == A_FLOAT ? a->f : k == A_INT ? (double)a->i : dflt;
}

const char *imp_attr_str(const Onnx__NodeProto *n, const char *key, const char *dflt, char *buf,
                         size_t cap)
{
    const Onnx__AttributeProto *a = imp_attr(n, key);
    if (!a || kind(a) != A_STRING || !cap)
        return dflt;
    size_t len = a->s.len < cap - 1 ? a->s.len : cap - 1;
    if (len)
        memcpy(buf, a->s.data, len);
    buf[len] = 0;
    return buf;
}

int imp_attr_ints(const Onnx__NodeProto *n, const char *key, int64_t *out, int max)
{
    const Onnx__AttributeProto *a = imp_attr(n, key);
    if (!a || kind(a) != A_INTS)
        return -1;
    int have = a->n_ints < INT_MAX ? (int)a->n_ints : INT_MAX;
    if (have)
        memcpy(out, a->ints, (size_t)(have < max ? have : max) * sizeof *out);
    return have;
}

int imp_axis(imp *im, const char *key, int64_t v, int rank, int inclusive, int64_t *out)
{
    int hi = inclusive ? rank : rank - 1;
    if (v < -rank || v > hi) {
        if (hi < 0)
            return imp_fail(im, "attribute '%s' is %lld; a rank-0 input has no axis", key,
                            (long long)v);
        return imp_fail(im, "attribute '%s' is %lld; a rank-%d input takes %d to %d", key,
                        (long long)v, rank, -rank, hi);
    }
    *out = v < 0 ? v + rank : v;
    return FE_OK;
}

int imp_perm(imp *im, int rank, int64_t *perm)
{
    int n = imp_attr_ints(im->node, "perm", perm, FE_MAX_RANK);
    if (n < 0) {
        for (int d = 0; d < rank; d++)
            perm[d] = rank - 1 - d;
        return FE_OK;
    }
    if (n != rank)
        return imp_fail(im, "attribute 'perm' has %d items; a rank-%d input needs %d", n, rank,
                        rank);
    int seen[FE_MAX_RANK] = {0}, ok = 1;
    for (int d = 0; d < rank; d++) {
        if (perm[d] < 0 || perm[d] >= rank || seen[perm[d]])
            ok = 0;
        else
            seen[perm[d]] = 1;
    }
    if (ok)
        return FE_OK;
    char list[FE_MAX_RANK * 24] = "";
    size_t len = 0;
    for (int d = 0; d < rank; d++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%lld", d ? ", " : "",
                                (long long)perm[d]);
    return imp_fail(im, "attribute 'perm' [%s] is not a permutation of 0 to %d", list, rank - 1);
}

char *imp_attrs_json(const Onnx__NodeProto *n)
{
    fe_jw w;
    fe_jw_mem m;
    if (fe_jw_mem_open(&w, &m))
        return NULL;
    fe_jw_obj(&w);
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->attribute[i];
        int k = kind(a);
        if (!a->name || (k != A_INT && k != A_FLOAT && k != A_STRING && k != A_INTS &&
                         k != A_FLOATS))
            continue;   /* tensors and graphs: a kernel reads them from the file itself */
        fe_jw_key(&w, a->name);
        if (k == A_INT) {
            fe_jw_int(&w, a->i);
        } else if (k == A_FLOAT) {
            fe_jw_num(&w, a->f);
        } else if (k == A_STRING) {
            fe_jw_strn(&w, (const char *)a->s.data, a->s.len);
        } else {
            fe_jw_arr_flat(&w);
            for (size_t j = 0; j < (k == A_INTS ? a->n_ints : a->n_floats); j++) {
                if (k == A_INTS)
                    fe_jw_int(&w, a->ints[j]);
                else
                    fe_jw_num(&w, a->floats[j]);
            }
            fe_jw_end(&w);
        }
    }
    fe_jw_end(&w);
    return fe_jw_mem_close(&m);
}
