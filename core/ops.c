/* ops.c: the op registry table and the FLOP/byte counts that need more than
 * "per output element".
 *
 * Counting conventions (the simulator's compute time rests on them):
 * an add, multiply, compare or divide is one FLOP; a transcendental (exp,
 * log, sin, cos, tanh, erf, sigmoid) counts as 4; matmul and conv count a
 * multiply-add as 2. Bytes read are what a kernel must load: every input in
 * full, except gathers and slices, which touch only what they select.
 * "live" is how many values per element a kernel keeps in registers at
 * once; the simulator's register model adds them up over a fused group.
 */
#include <stdio.h>
#include <string.h>

#include "infer.h"
#include "ops.h"

static int64_t out_numel(const fe_graph *g, const fe_node *n)
{
    int64_t s = 0;
    for (int k = 0; k < n->nout; k++)
        s += fe_graph_tensor(g, fe_node_output(g, n, k))->numel;
    return s;
}

static int64_t in_bytes(const fe_graph *g, const fe_node *n, int from)
{
    int64_t s = 0;
    for (int k = from; k < n->nin; k++)
        s += fe_graph_tensor(g, fe_node_input(g, n, k))->bytes;
    return s;
}

static int64_t out_bytes(const fe_graph *g, const fe_node *n)
{
    int64_t s = 0;
    for (int k = 0; k < n->nout; k++)
        s += fe_graph_tensor(g, fe_node_output(g, n, k))->bytes;
    return s;
}

static const fe_tensor *input(const fe_graph *g, const fe_node *n, int k)
{
    return fe_graph_tensor(g, fe_node_input(g, n, k));
}

/* Reductions read every input element once per pass; the per-element count
 * is the op's flops field times the input, not the (smaller) output. */
static void cost_reduce(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    *flops = (int64_t)fe_op_get(n->op)->flops * input(g, n, 0)->numel;
    *rd = in_bytes(g, n, 0);
}

/* Gathers read the selected rows and the indices, not the whole table. */
static void cost_take(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    *flops = 0;
    *rd = out_bytes(g, n) + input(g, n, 1)->bytes;
}

static void cost_slice(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    *flops = 0;
    *rd = out_bytes(g, n);
}

static void cost_matmul(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    const fe_tensor *a = input(g, n, 0);
    const int64_t *as = fe_tensor_shape(g, a);
    int ta = fe_node_attr_bool(g, n, "transpose_a", 0);
    int64_t k = a->rank == 1 ? as[0] : as[a->rank - (ta ? 2 : 1)];
    *flops = 2 * out_numel(g, n) * k;
    *rd = in_bytes(g, n, 0);
}

static void cost_conv(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    const fe_tensor *w = input(g, n, 1);
    const int64_t *ws = fe_tensor_shape(g, w);
    /* Each output element sums C/groups * kh * kw products. */
    *flops = 2 * out_numel(g, n) * ws[1] * ws[2] * ws[3];
    *rd = in_bytes(g, n, 0);
}

static void cost_pool(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int64_t k[2] = {1, 1};
    int nk = fe_node_attr_ints(g, n, "kernel", k, 2);
    if (nk == 1)
        k[1] = k[0];
    *flops = out_numel(g, n) * k[0] * k[1];
    *rd = in_bytes(g, n, 0);
}

static void cost_sdpa(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    const fe_tensor *q = input(g, n, 0), *k = input(g, n, 1), *o;
    const int64_t *qs = fe_tensor_shape(g, q), *ks = fe_tensor_shape(g, k);
    int64_t E = qs[q->rank - 1], S = ks[k->rank - 2];
    o = fe_graph_tensor(g, fe_node_output(g, n, 0));
    const int64_t *os = fe_tensor_shape(g, o);
    int64_t Ev = os[o->rank - 1];
    int64_t rows = o->numel / Ev;            /* batch x L */
    /* q k^T, softmax over S (5 per score), then p v. */
    *flops = rows * S * (2 * E + 5 + 2 * Ev);
    *rd = in_bytes(g, n, 0);
}

static void cost_custom(const fe_graph *g, const fe_node *n, int64_t *flops, int64_t *rd)
{
    int64_t wr = out_bytes(g, n);
    int64_t total = fe_node_attr_int(g, n, "bytes", in_bytes(g, n, 0) + wr);
    *flops = fe_node_attr_int(g, n, "flops", 0);
    *rd = total > wr ? total - wr : 0;
}

#define V FE_VARIADIC
static const fe_op ops[FE_NOPS] = {
    /* name        pattern          in    live flops  attrs / description / infer / cost */
    [FE_OP_RELU] = {"relu", FE_ELEMWISE, 1, 1, 1, 1, "", "max(x, 0)", fe_infer_unary, NULL},
    [FE_OP_GELU] = {"gelu", FE_ELEMWISE, 1, 1, 3, 10, "approximate",
                    "Gaussian error linear unit (erf form, or tanh with approximate=\"tanh\")",
                    fe_infer_unary, NULL},
    [FE_OP_SILU] = {"silu", FE_ELEMWISE, 1, 1, 2, 5, "", "x * sigmoid(x)", fe_infer_unary, NULL},
    [FE_OP_SIGMOID] = {"sigmoid", FE_ELEMWISE, 1, 1, 2, 4, "", "1 / (1 + exp(-x))",
                       fe_infer_unary, NULL},
    [FE_OP_TANH] = {"tanh", FE_ELEMWISE, 1, 1, 2, 4, "", "hyperbolic tangent", fe_infer_unary, NULL},
    [FE_OP_EXP] = {"exp", FE_ELEMWISE, 1, 1, 1, 4, "", "e^x", fe_infer_unary, NULL},
    [FE_OP_LOG] = {"log", FE_ELEMWISE, 1, 1, 1, 4, "", "natural logarithm", fe_infer_unary, NULL},
    [FE_OP_NEG] = {"neg", FE_ELEMWISE, 1, 1, 1, 1, "", "-x", fe_infer_unary, NULL},
    [FE_OP_ABS] = {"abs", FE_ELEMWISE, 1, 1, 1, 1, "", "|x|", fe_infer_unary, NULL},
    [FE_OP_SQRT] = {"sqrt", FE_ELEMWISE, 1, 1, 1, 1, "", "square root", fe_infer_unary, NULL},
    [FE_OP_RSQRT] = {"rsqrt", FE_ELEMWISE, 1, 1, 1, 1, "", "1 / sqrt(x)", fe_infer_unary, NULL},
    [FE_OP_RECIPROCAL] = {"reciprocal", FE_ELEMWISE, 1, 1, 1, 1, "", "1 / x", fe_infer_unary, NULL},
    [FE_OP_SIN] = {"sin", FE_ELEMWISE, 1, 1, 2, 4, "", "sine", fe_infer_unary, NULL},
    [FE_OP_COS] = {"cos", FE_ELEMWISE, 1, 1, 2, 4, "", "cosine", fe_infer_unary, NULL},
    [FE_OP_ERF] = {"erf", FE_ELEMWISE, 1, 1, 3, 4, "", "error function", fe_infer_unary, NULL},
    [FE_OP_CAST] = {"cast", FE_ELEMWISE, 1, 1, 1, 0, "dtype", "convert to attrs.dtype",
                    fe_infer_cast, NULL},

    [FE_OP_ADD] = {"add", FE_BROADCAST, 1, 2, 2, 1, "scalar scalar_index", "a + b",
                   fe_infer_binary, NULL},
    [FE_OP_SUB] = {"sub", FE_BROADCAST, 1, 2, 2, 1, "scalar scalar_index", "a - b",
                   fe_infer_binary, NULL},
    [FE_OP_MUL] = {"mul", FE_BROADCAST, 1, 2, 2, 1, "scalar scalar_index", "a * b",
                   fe_infer_binary, NULL},
    [FE_OP_DIV] = {"div", FE_BROADCAST, 1, 2, 2, 1, "scalar scalar_index", "a / b",
                   fe_infer_binary, NULL},
    [FE_OP_MAXIMUM] = {"maximum", FE_BROADCAST, 1, 2, 2, 1, "scalar scalar_index",
                       "elementwise max", fe_infer_binary, NULL},
    [FE_OP_MINIMUM] = {"minimum", FE_BROADCAST, 1, 2, 2, 1, "scalar scalar_index",
                       "elementwise min", fe_infer_binary, NULL},
    [FE_OP_POW] = {"pow", FE_BROADCAST, 1, 2, 2, 4, "scalar scalar_index", "a ^ b",
                   fe_infer_binary, NULL},
    [FE_OP_WHERE] = {"where", FE_BROADCAST, 2, 3, 3, 1, "scalar scalar_index",
                     "cond ? a : b (masked_fill)", fe_infer_where, NULL},

    [FE_OP_SUM] = {"sum", FE_REDUCTION, 1, 1, 2, 1, "axes keepdim", "sum over axes",
                   fe_infer_reduce, cost_reduce},
    [FE_OP_MEAN] = {"mean", FE_REDUCTION, 1, 1, 2, 1, "axes keepdim", "mean over axes",
                    fe_infer_reduce, cost_reduce},
    [FE_OP_AMAX] = {"amax", FE_REDUCTION, 1, 1, 2, 1, "axes keepdim", "max over axes",
                    fe_infer_reduce, cost_reduce},
    [FE_OP_AMIN] = {"amin", FE_REDUCTION, 1, 1, 2, 1, "axes keepdim", "min over axes",
                    fe_infer_reduce, cost_reduce},
    [FE_OP_SOFTMAX] = {"softmax", FE_REDUCTION, 1, 1, 3, 5, "axis", "softmax along axis",
                       fe_infer_softmax, cost_reduce},
    [FE_OP_LOG_SOFTMAX] = {"log_softmax", FE_REDUCTION, 1, 1, 3, 5, "axis",
                           "log of softmax along axis", fe_infer_softmax, cost_reduce},
    [FE_OP_RMS_NORM] = {"rms_norm", FE_REDUCTION, 1, 2, 3, 4, "eps normalized_shape",
                        "x * rsqrt(mean(x^2) + eps) * weight", fe_infer_norm, cost_reduce},
    [FE_OP_LAYER_NORM] = {"layer_norm", FE_REDUCTION, 1, 3, 4, 7, "eps normalized_shape",
                          "(x - mean) * rsqrt(var + eps) * weight + bias", fe_infer_norm,
                          cost_reduce},

    [FE_OP_RESHAPE] = {"reshape", FE_INJECTIVE, 1, 1, 1, 0, "shape", "same elements, new shape",
                       fe_infer_reshape, NULL},
    [FE_OP_TRANSPOSE] = {"transpose", FE_INJECTIVE, 1, 1, 1, 0, "perm", "permute axes",
                         fe_infer_transpose, NULL},
    [FE_OP_SLICE] = {"slice", FE_INJECTIVE, 1, 1, 1, 0, "axis start end step",
                     "Python slice along one axis", fe_infer_slice, cost_slice},
    [FE_OP_CONCAT] = {"concat", FE_INJECTIVE, 1, V, 1, 0, "axis", "join along axis",
                      fe_infer_concat, NULL},
    [FE_OP_PAD] = {"pad", FE_INJECTIVE, 1, 1, 1, 0, "pads value mode",
                   "pad (torch F.pad order)", fe_infer_pad, NULL},
    [FE_OP_EXPAND] = {"expand", FE_INJECTIVE, 1, 1, 1, 0, "shape", "broadcast to shape",
                      fe_infer_expand, NULL},
    [FE_OP_GATHER] = {"gather", FE_INJECTIVE, 2, 2, 1, 0, "axis", "numpy.take along axis",
                      fe_infer_gather, cost_take},
    [FE_OP_EMBEDDING] = {"embedding", FE_INJECTIVE, 2, 2, 1, 0, "", "rows of a table",
                         fe_infer_embedding, cost_take},

    [FE_OP_MATMUL] = {"matmul", FE_OUT_FUSABLE, 2, 2, 8, 0, "transpose_a transpose_b",
                      "torch.matmul with batch broadcasting", fe_infer_matmul, cost_matmul},
    [FE_OP_CONV2D] = {"conv2d", FE_OUT_FUSABLE, 2, 3, 8, 0, "stride padding dilation groups",
                      "NCHW 2-D convolution", fe_infer_conv2d, cost_conv},

    [FE_OP_SDPA] = {"sdpa", FE_OPAQUE, 3, 4, 8, 0, "causal scale",
                    "scaled dot-product attention", fe_infer_sdpa, cost_sdpa},
    [FE_OP_MAX_POOL2D] = {"max_pool2d", FE_OPAQUE, 1, 1, 2, 0,
                          "kernel stride padding dilation ceil_mode", "2-D max pooling",
                          fe_infer_pool2d, cost_pool},
    [FE_OP_AVG_POOL2D] = {"avg_pool2d", FE_OPAQUE, 1, 1, 2, 0,
                          "kernel stride padding ceil_mode count_include_pad",
                          "2-D average pooling", fe_infer_pool2d, cost_pool},
    [FE_OP_BATCH_NORM] = {"batch_norm", FE_OPAQUE, 5, 5, 3, 2, "eps",
                          "inference batch norm over axis 1", fe_infer_batch_norm, NULL},
    [FE_OP_ALL_REDUCE] = {"all_reduce", FE_OPAQUE, 1, 1, 2, 1, "world_size reduce",
                          "sum across ranks (collective)", fe_infer_all_reduce, NULL},
    [FE_OP_CUSTOM] = {"custom", FE_OPAQUE, 0, V, 2, 0, "pattern flops bytes",
                      "an op fuseeng does not know; outputs must be declared", NULL,
                      cost_custom},
};
#undef V

const fe_op *fe_op_get(int id)
{
    return &ops[id];
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
