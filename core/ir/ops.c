/* ops.c: the op registry table and the FLOP/byte counts that need more than
 * "per output element".
 *
 * Counting conventions (the simulator's compute time rests on them):
 * an add, multiply, compare or divide is one FLOP; a transcendental (exp,
 * log, sin, cos, tanh, erf, sigmoid) counts as 4; matmul and conv count a
 * multiply-add as 2; hardsigmoid is an add, two compares and a divide (4),
 * hardswish that and a multiply (5). Bytes read are what a kernel must load:
 * every input in full, except gathers and slices, which touch only what they
 * select.
 * "live" is how many values per element a kernel keeps in registers at
 * once; the simulator's register model adds them up over a fused group.
 */
#include <stdio.h>
#include <string.h>

#include "infer.h"
#include "ops.h"

/* Checked arithmetic: a result that does not fit in 64 bits sets *ov (the
 * loader then rejects the node) and saturates, so later steps stay defined. */
static int64_t mul(int64_t a, int64_t b, int *ov)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *ov = 1;
        return INT64_MAX;
    }
    return r;
}

static int64_t add(int64_t a, int64_t b, int *ov)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *ov = 1;
        return INT64_MAX;
    }
    return r;
}

static int64_t out_numel(const fe_graph *g, const fe_node *n, int *ov)
{
    int64_t s = 0;
    for (int k = 0; k < n->nout; k++)
        s = add(s, fe_graph_tensor(g, fe_node_output(g, n, k))->numel, ov);
    return s;
}

static int64_t in_bytes(const fe_graph *g, const fe_node *n, int from, int *ov)
{
    int64_t s = 0;
    for (int k = from; k < n->nin; k++)
        s = add(s, fe_graph_tensor(g, fe_node_input(g, n, k))->bytes, ov);
    return s;
}

static int64_t out_bytes(const fe_graph *g, const fe_node *n, int *ov)
{
    int64_t s = 0;
    for (int k = 0; k < n->nout; k++)
        s = add(s, fe_graph_tensor(g, fe_node_output(g, n, k))->bytes, ov);
    return s;
}

static const fe_tensor *input(const fe_graph *g, const fe_node *n, int k)
{
    return fe_graph_tensor(g, fe_node_input(g, n, k));
}

/* Pointwise ops: flops per output element, every input read once. */
static int cost_pointwise(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int ov = 0;
    *flops = mul(fe_op_get(n->op)->flops, out_numel(g, n, &ov), &ov);
    *rd = in_bytes(g, n, 0, &ov);
    return ov;
}

/* Reductions read every input element once per pass; the per-element count
 * is the op's flops field times the input, not the (smaller) output. */
static int cost_reduce(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int ov = 0;
    *flops = mul(fe_op_get(n->op)->flops, input(g, n, 0)->numel, &ov);
    *rd = in_bytes(g, n, 0, &ov);
    return ov;
}

/* Gathers read the selected rows and the indices, not the whole table. */
static int cost_take(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int ov = 0;
    *flops = 0;
    *rd = add(out_bytes(g, n, &ov), input(g, n, 1)->bytes, &ov);
    return ov;
}

static int cost_slice(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int ov = 0;
    *flops = 0;
    *rd = out_bytes(g, n, &ov);
    return ov;
}

static int cost_matmul(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    const fe_tensor *a = input(g, n, 0);
    const int64_t *as = fe_tensor_shape(g, a);
    int ta = fe_node_attr_bool(g, n, "transpose_a", 0);
    int64_t k = a->rank == 1 ? as[0] : as[a->rank - (ta ? 2 : 1)];
    int ov = 0;
    *flops = mul(2, mul(out_numel(g, n, &ov), k, &ov), &ov);
    *rd = in_bytes(g, n, 0, &ov);
    return ov;
}

static int cost_conv(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    const fe_tensor *w = input(g, n, 1);
    const int64_t *ws = fe_tensor_shape(g, w);
    /* Each output element sums C/groups * kh * kw products; the weight's
     * element count is O * that, so it fits. */
    int ov = 0;
    *flops = mul(2, mul(out_numel(g, n, &ov), ws[1] * ws[2] * ws[3], &ov), &ov);
    *rd = in_bytes(g, n, 0, &ov);
    return ov;
}

static int cost_pool(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int64_t k[2] = {1, 1};
    int nk = fe_node_attr_ints(g, n, "kernel", k, 2);
    if (nk == 1)
        k[1] = k[0];
    int ov = 0;
    *flops = mul(out_numel(g, n, &ov), mul(k[0], k[1], &ov), &ov);
    *rd = in_bytes(g, n, 0, &ov);
    return ov;
}

static int cost_sdpa(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    const fe_tensor *q = input(g, n, 0), *k = input(g, n, 1), *o;
    const int64_t *qs = fe_tensor_shape(g, q), *ks = fe_tensor_shape(g, k);
    int64_t E = qs[q->rank - 1], S = ks[k->rank - 2];
    o = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *os = fe_tensor_shape(g, o);
    int64_t Ev = os[o->rank - 1];
    int64_t rows = o->numel / Ev;            /* batch x L */
    /* q k^T, softmax over S (5 per score), then p v. */
    int ov = 0;
    int64_t per = add(mul(2, add(E, Ev, &ov), &ov), 5, &ov);
    *flops = mul(mul(rows, S, &ov), per, &ov);
    *rd = in_bytes(g, n, 0, &ov);
    return ov;
}

/* attrs.flops and attrs.bytes are checked non-negative by the loader. */
static int cost_custom(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int ov = 0;
    int64_t wr = out_bytes(g, n, &ov);
    int64_t total = fe_node_attr_int(g, n, "bytes", add(in_bytes(g, n, 0, &ov), wr, &ov));
    *flops = fe_node_attr_int(g, n, "flops", 0);
    *rd = total > wr ? total - wr : 0;
    return ov;
}

int fe_op_cost(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *bytes_read)
{
    const fe_op *op = fe_op_get(n->op);
    return (op->cost ? op->cost : cost_pointwise)(g, n, flops, bytes_read);
}

#define V FE_VARIADIC
static const fe_op ops[FE_NOPS] = {
    /* name        pattern          in    live flops  attrs / description / infer / cost */
    [FE_OP_RELU] = {"relu", FE_ELEMWISE, 1, 1, 1, 1, "", "max(x, 0)", fe_infer_unary, NULL, 0},
    [FE_OP_GELU] = {"gelu", FE_ELEMWISE, 1, 1, 3, 10, "approximate:none|tanh",
                    "Gaussian error linear unit (erf form, or tanh with approximate=\"tanh\")",
                    fe_infer_unary, NULL, 0},
    [FE_OP_SILU] = {"silu", FE_ELEMWISE, 1, 1, 2, 5, "", "x * sigmoid(x)", fe_infer_unary, NULL, 0},
    [FE_OP_SIGMOID] = {"sigmoid", FE_ELEMWISE, 1, 1, 2, 4, "", "1 / (1 + exp(-x))",
                       fe_infer_unary, NULL, 0},
    [FE_OP_TANH] = {"tanh", FE_ELEMWISE, 1, 1, 2, 4, "", "hyperbolic tangent",
                    fe_infer_unary, NULL, 0},
    [FE_OP_EXP] = {"exp", FE_ELEMWISE, 1, 1, 1, 4, "", "e^x", fe_infer_unary, NULL, 0},
    [FE_OP_LOG] = {"log", FE_ELEMWISE, 1, 1, 1, 4, "", "natural logarithm",
                   fe_infer_unary, NULL, 0},
    [FE_OP_NEG] = {"neg", FE_ELEMWISE, 1, 1, 1, 1, "", "-x", fe_infer_unary, NULL, 0},
    [FE_OP_ABS] = {"abs", FE_ELEMWISE, 1, 1, 1, 1, "", "|x|", fe_infer_unary, NULL, 0},
    [FE_OP_SQRT] = {"sqrt", FE_ELEMWISE, 1, 1, 1, 1, "", "square root", fe_infer_unary, NULL, 0},
    [FE_OP_RSQRT] = {"rsqrt", FE_ELEMWISE, 1, 1, 1, 1, "", "1 / sqrt(x)", fe_infer_unary, NULL, 0},
    [FE_OP_RECIPROCAL] = {"reciprocal", FE_ELEMWISE, 1, 1, 1, 1, "", "1 / x",
                          fe_infer_unary, NULL, 0},
    [FE_OP_SIN] = {"sin", FE_ELEMWISE, 1, 1, 2, 4, "", "sine", fe_infer_unary, NULL, 0},
    [FE_OP_COS] = {"cos", FE_ELEMWISE, 1, 1, 2, 4, "", "cosine", fe_infer_unary, NULL, 0},
    [FE_OP_ERF] = {"erf", FE_ELEMWISE, 1, 1, 3, 4, "", "error function", fe_infer_unary, NULL, 0},
    [FE_OP_HARDSIGMOID] = {"hardsigmoid", FE_ELEMWISE, 1, 1, 1, 4, "", "min(max(x + 3, 0), 6) / 6",
                           fe_infer_unary, NULL, 0},
    [FE_OP_HARDSWISH] = {"hardswish", FE_ELEMWISE, 1, 1, 2, 5, "", "x * hardsigmoid(x)",
                         fe_infer_unary, NULL, 0},
    [FE_OP_CAST] = {"cast", FE_ELEMWISE, 1, 1, 1, 0, "dtype:dtype", "convert to attrs.dtype",
                    fe_infer_cast, NULL, 0},

    [FE_OP_ADD] = {"add", FE_BROADCAST, 1, 2, 2, 1, "scalar:num scalar_index:int", "a + b",
                   fe_infer_binary, NULL, 0},
    [FE_OP_SUB] = {"sub", FE_BROADCAST, 1, 2, 2, 1, "scalar:num scalar_index:int", "a - b",
                   fe_infer_binary, NULL, 0},
    [FE_OP_MUL] = {"mul", FE_BROADCAST, 1, 2, 2, 1, "scalar:num scalar_index:int", "a * b",
                   fe_infer_binary, NULL, 0},
    [FE_OP_DIV] = {"div", FE_BROADCAST, 1, 2, 2, 1, "scalar:num scalar_index:int", "a / b",
                   fe_infer_binary, NULL, 0},
    [FE_OP_MAXIMUM] = {"maximum", FE_BROADCAST, 1, 2, 2, 1, "scalar:num scalar_index:int",
                       "elementwise max", fe_infer_binary, NULL, 0},
    [FE_OP_MINIMUM] = {"minimum", FE_BROADCAST, 1, 2, 2, 1, "scalar:num scalar_index:int",
                       "elementwise min", fe_infer_binary, NULL, 0},
    [FE_OP_POW] = {"pow", FE_BROADCAST, 1, 2, 2, 4, "scalar:num scalar_index:int", "a ^ b",
                   fe_infer_binary, NULL, 0},
    [FE_OP_WHERE] = {"where", FE_BROADCAST, 2, 3, 3, 1, "scalar:num scalar_index:int",
                     "cond ? a : b (masked_fill)", fe_infer_where, NULL, 0},

    [FE_OP_SUM] = {"sum", FE_REDUCTION, 1, 1, 2, 1, "axes:ints keepdim:bool", "sum over axes",
                   fe_infer_reduce, cost_reduce, 0},
    [FE_OP_MEAN] = {"mean", FE_REDUCTION, 1, 1, 2, 1, "axes:ints keepdim:bool", "mean over axes",
                    fe_infer_reduce, cost_reduce, 0},
    [FE_OP_AMAX] = {"amax", FE_REDUCTION, 1, 1, 2, 1, "axes:ints keepdim:bool", "max over axes",
                    fe_infer_reduce, cost_reduce, 0},
    [FE_OP_AMIN] = {"amin", FE_REDUCTION, 1, 1, 2, 1, "axes:ints keepdim:bool", "min over axes",
                    fe_infer_reduce, cost_reduce, 0},
    [FE_OP_SOFTMAX] = {"softmax", FE_REDUCTION, 1, 1, 3, 5, "axis:int", "softmax along axis",
                       fe_infer_softmax, cost_reduce, 0},
    [FE_OP_LOG_SOFTMAX] = {"log_softmax", FE_REDUCTION, 1, 1, 3, 5, "axis:int",
                           "log of softmax along axis", fe_infer_softmax, cost_reduce, 0},
    [FE_OP_RMS_NORM] = {"rms_norm", FE_REDUCTION, 1, 2, 3, 4, "eps:num normalized_shape:ints",
                        "x * rsqrt(mean(x^2) + eps) * weight", fe_infer_norm, cost_reduce, 0},
    [FE_OP_LAYER_NORM] = {"layer_norm", FE_REDUCTION, 1, 3, 4, 7, "eps:num normalized_shape:ints",
                          "(x - mean) * rsqrt(var + eps) * weight + bias", fe_infer_norm,
                          cost_reduce, 0},

    [FE_OP_RESHAPE] = {"reshape", FE_INJECTIVE, 1, 1, 1, 0, "shape:shape", "same elements, new shape",
                       fe_infer_reshape, NULL, FE_OPF_VIEW},
    [FE_OP_TRANSPOSE] = {"transpose", FE_INJECTIVE, 1, 1, 1, 0, "perm:ints", "permute axes",
                         fe_infer_transpose, NULL, FE_OPF_VIEW},
    [FE_OP_SLICE] = {"slice", FE_INJECTIVE, 1, 1, 1, 0, "axis:int start:dim end:dim step:int",
                     "Python slice along one axis", fe_infer_slice, cost_slice, FE_OPF_VIEW},
    [FE_OP_CONCAT] = {"concat", FE_INJECTIVE, 1, V, 1, 0, "axis:int", "join along axis",
                      fe_infer_concat, NULL, 0},
    [FE_OP_PAD] = {"pad", FE_INJECTIVE, 1, 1, 1, 0, "pads:ints value:num mode:constant|reflect|replicate",
                   "pad (torch F.pad order)", fe_infer_pad, NULL, 0},
    [FE_OP_EXPAND] = {"expand", FE_INJECTIVE, 1, 1, 1, 0, "shape:shape", "broadcast to shape",
                      fe_infer_expand, NULL, FE_OPF_VIEW},
    [FE_OP_GATHER] = {"gather", FE_INJECTIVE, 2, 2, 1, 0, "axis:int", "numpy.take along axis",
                      fe_infer_gather, cost_take, 0},
    [FE_OP_EMBEDDING] = {"embedding", FE_INJECTIVE, 2, 2, 1, 0, "", "rows of a table",
                         fe_infer_embedding, cost_take, 0},

    [FE_OP_MATMUL] = {"matmul", FE_OUT_FUSABLE, 2, 2, 8, 0, "transpose_a:bool transpose_b:bool",
                      "torch.matmul with batch broadcasting", fe_infer_matmul, cost_matmul, FE_OPF_LIBRARY},
    [FE_OP_CONV2D] = {"conv2d", FE_OUT_FUSABLE, 2, 3, 8, 0, "stride:ints padding:ints dilation:ints groups:int",
                      "NCHW 2-D convolution", fe_infer_conv2d, cost_conv, FE_OPF_LIBRARY},

    [FE_OP_SDPA] = {"sdpa", FE_OPAQUE, 3, 4, 8, 0, "causal:bool scale:num",
                    "scaled dot-product attention", fe_infer_sdpa, cost_sdpa, FE_OPF_LIBRARY},
    [FE_OP_MAX_POOL2D] = {"max_pool2d", FE_OPAQUE, 1, 1, 2, 0,
                          "kernel:ints stride:ints padding:ints dilation:ints ceil_mode:bool", "2-D max pooling",
                          fe_infer_max_pool2d, cost_pool, 0},
    [FE_OP_AVG_POOL2D] = {"avg_pool2d", FE_OPAQUE, 1, 1, 2, 0,
                          "kernel:ints stride:ints padding:ints ceil_mode:bool count_include_pad:bool",
                          "2-D average pooling", fe_infer_avg_pool2d, cost_pool, 0},
    /* pointwise in inference: (x - mean) * w / sqrt(var + eps) + b, each
     * parameter broadcast along axis 1 (docs/policies.md#op-kinds) */
    [FE_OP_BATCH_NORM] = {"batch_norm", FE_BROADCAST, 5, 5, 3, 2, "eps:num",
                          "inference batch norm over axis 1", fe_infer_batch_norm, NULL, 0},
    [FE_OP_ALL_REDUCE] = {"all_reduce", FE_OPAQUE, 1, 1, 2, 1, "world_size:int reduce:sum|avg|mean|max|min",
                          "sum across ranks (collective)", fe_infer_all_reduce, NULL, 0},
    [FE_OP_CUSTOM] = {"custom", FE_OPAQUE, 0, V, 2, 0, "pattern:str flops:count bytes:count",
                      "an op fuseeng does not know; outputs must be declared", NULL,
                      cost_custom, 0},

    [FE_OP_COMPARE] = {"compare", FE_BROADCAST, 1, 2, 2, 1, "cmp:eq|ne|lt|le|gt|ge scalar:num scalar_index:int",
                       "a cmp b as bool (eq ne lt le gt ge)", fe_infer_compare, NULL, 0},
    /* a source of values computed from the index alone: elementwise, as
     * Inductor (ops.index_expr) and XLA (iota, fused into its readers) take it */
    [FE_OP_ARANGE] = {"arange", FE_ELEMWISE, 0, 0, 1, 1, "start:dim end:dim step:int dtype:dtype",
                      "start, start + step, ... before end", fe_infer_arange, NULL, 0},
    [FE_OP_TRILU] = {"trilu", FE_INJECTIVE, 1, 1, 1, 0, "upper:bool diagonal:int",
                     "triu (upper) / tril of the last two axes, the rest zero", fe_infer_trilu,
                     NULL, 0},
};
#undef V

/* What attribute a holds, for messages. */
static const char *attr_kind(const fe_graph *g, const fe_attr *a, char *buf, size_t cap)
{
    switch (a->type) {
    case FE_ATTR_BOOL: return a->v.i ? "true" : "false";
    case FE_ATTR_INT: snprintf(buf, cap, "%lld", (long long)a->v.i); return buf;
    case FE_ATTR_FLOAT: snprintf(buf, cap, "%.17g", a->v.f); return buf;
    case FE_ATTR_STR: snprintf(buf, cap, "\"%.60s\"", fe_graph_str(g, a->v.s)); return buf;
    case FE_ATTR_INTS: return "a list of ints";
    default: return a->n > 0 && g->blob[a->v.off] == '[' ? "a list that is not all ints"
                                                          : "an object";
    }
}

/* Whether a fits type t (t_len bytes of a spec); want gets what t means. */
static int attr_fits(const fe_graph *g, const fe_attr *a, const char *t, int t_len,
                     char *want, size_t cap)
{
#define IS(word) (t_len == (int)sizeof word - 1 && !memcmp(t, word, sizeof word - 1))
    int ok;
    if (IS("bool")) {
        snprintf(want, cap, "true or false");
        ok = a->type == FE_ATTR_BOOL || (a->type == FE_ATTR_INT && (a->v.i == 0 || a->v.i == 1));
    } else if (IS("int") || IS("dim")) {
        /* exports write huge slice ends as reals: 9.2233720368547758e18;
         * a dim is an int or a dim name, held as a list of one FE_SYM
         * (build_finish.c) */
        snprintf(want, cap, IS("dim") ? "an integer or a dim name" : "an integer");
        ok = a->type == FE_ATTR_INT ||
             (a->type == FE_ATTR_FLOAT && (a->v.f >= 9.2e18 || a->v.f <= -9.2e18 ||
                                           (a->v.f == a->v.f && a->v.f == (double)(int64_t)a->v.f))) ||
             (IS("dim") && a->type == FE_ATTR_INTS && a->n == 1);
    } else if (IS("count")) {
        snprintf(want, cap, "an integer >= 0");
        ok = a->type == FE_ATTR_INT && a->v.i >= 0;
    } else if (IS("num")) {
        snprintf(want, cap, "a number");
        ok = a->type == FE_ATTR_INT || a->type == FE_ATTR_FLOAT || a->type == FE_ATTR_BOOL;
    } else if (IS("str")) {
        snprintf(want, cap, "a string");
        ok = a->type == FE_ATTR_STR;
    } else if (IS("dtype")) {
        snprintf(want, cap, "one of f32 f16 bf16 i64 i32 i8 bool");
        ok = a->type == FE_ATTR_STR && fe_dtype_parse(fe_graph_str(g, a->v.s)) >= 0;
    } else if (IS("ints")) {
        snprintf(want, cap, "an integer or a list of integers");
        ok = a->type == FE_ATTR_INT;
        if (a->type == FE_ATTR_INTS) {
            ok = 1;
            for (int i = 0; i < a->n; i++)
                ok &= !FE_IS_SYM(g->ints[a->v.off + i]);
        }
    } else if (IS("shape")) {
        snprintf(want, cap, "a list of integers and dim names");
        ok = a->type == FE_ATTR_INTS;
    } else {   /* choices a|b|c */
        snprintf(want, cap, "one of %.*s", t_len, t);
        ok = 0;
        if (a->type == FE_ATTR_STR) {
            const char *v = fe_graph_str(g, a->v.s);
            size_t vn = strlen(v);
            for (const char *c = t, *e = t + t_len; c < e && !ok;) {
                const char *bar = memchr(c, '|', (size_t)(e - c));
                size_t cn = (size_t)((bar ? bar : e) - c);
                ok = cn == vn && !memcmp(c, v, vn);
                c += cn + 1;
            }
        }
    }
    return ok;
#undef IS
}

int fe_op_attr_is_dim(int op, const char *key)
{
    size_t kn = strlen(key);
    for (const char *p = ops[op].attrs; *p;) {
        const char *colon = strchr(p, ':'), *end = strchr(colon, ' ');
        if (!end)
            end = colon + strlen(colon);
        if ((size_t)(colon - p) == kn && !memcmp(p, key, kn))
            return end - colon - 1 == 3 && !memcmp(colon + 1, "dim", 3);
        p = *end ? end + 1 : end;
    }
    return 0;
}

int fe_op_check_attrs(const fe_graph *g, const fe_node *n, char *msg, size_t cap)
{
    const char *p = fe_op_get(n->op)->attrs;
    while (*p) {
        const char *colon = strchr(p, ':'), *end = strchr(colon, ' ');
        if (!end)
            end = colon + strlen(colon);
        char key[32], want[96], got[96];
        snprintf(key, sizeof key, "%.*s", (int)(colon - p), p);
        const fe_attr *a = fe_node_attr(g, n, key);
        if (a && a->type != FE_ATTR_NULL &&
            !attr_fits(g, a, colon + 1, (int)(end - colon - 1), want, sizeof want)) {
            snprintf(msg, cap, "attrs.%s is %s; expected %s", key,
                     attr_kind(g, a, got, sizeof got), want);
            return -1;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

const fe_op *fe_op_get(int id)
{
    return &ops[id];
}

const char *fe_node_op_name(const fe_node *n)
{
    return ops[n->op].name;
}

int fe_op_find(const char *name)
{
    for (int i = 0; i < FE_NOPS; i++)
        if (strcmp(ops[i].name, name) == 0)
            return i;
    return -1;
}

const char *fe_op_names(void)
{
    static _Thread_local char buf[1024];
    size_t len = 0;
    for (int i = 0; i < FE_NOPS; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : "",
                                ops[i].name);
    return buf;
}
