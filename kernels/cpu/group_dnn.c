/* group_dnn.c: a plan group as one oneDNN primitive (see group_dnn.h).
 *
 * The epilogue must be a chain: starting at the anchor's output, each
 * member reads the previous value once and otherwise only tensors from
 * outside the group, and only the last value leaves the group (oneDNN
 * writes one destination). Each member becomes one or two post-ops:
 *
 *   relu gelu silu sigmoid tanh exp log abs sqrt hardswish   eltwise of that name
 *   neg, rsqrt, reciprocal, hardsigmoid                      linear, pow, clip_v2
 *   add sub mul div maximum minimum with a tensor             binary (its operand
 *       broadcast numpy-style to the output: per channel, full, ...)
 *   the same with a scalar                                    linear; maximum and
 *                                                             minimum a clip; else
 *                                                             binary on a one-element
 *                                                             operand
 *   batch_norm (inference)                                    binary mul + binary add
 *       of scale = w / sqrt(var + eps) and shift = b - mean * scale, per channel,
 *       computed from the parameters on every run (weights may change between runs)
 *
 * The chain ends at the first member that is none of these, or that reads
 * the value with another, or where the value is also read outside the
 * group. The members left (layer_norm after a residual, say) run after the
 * primitive as one fused program over its output: the epilogue pass. They
 * may read that output and tensors from outside the group, nothing the
 * post-ops computed on the way.
 *
 * Two cheaper forms come first, because the implementation oneDNN picks for
 * plain NCHW (gemm:jit, im2col and its own sgemm) applies binary post-ops
 * element by element (measured 10-50x slower than the convolution itself):
 *
 * - A conv2d's leading per-channel steps (batch_norm, add / sub / mul of an
 *   [O, 1, 1] tensor or a scalar) fold into its weights and bias: the
 *   weights are scaled per output channel while oneDNN reorders them into
 *   its layout (a reorder with runtime output scales, once per run: the
 *   parameters may change between runs), the bias becomes
 *   bias * scale + shift.
 * - The first remaining add of a tensor of the output's full shape (the
 *   residual) is oneDNN's sum post-op: the residual is copied into the
 *   destination and the GEMM accumulates onto it. A matmul's first add of a
 *   [N] row is its bias.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "convert.h"
#include "fused.h"
#include "group_dnn.h"
#include "node.h"
#include "onednn.h"
#include "ops.h"
#include "scratch.h"
#include "versus.h"

enum { A_NONE, A_TENSOR, A_OWN, A_BN_SCALE, A_BN_SHIFT, A_SUM };

typedef struct parg {
    int kind;
    int32_t t;          /* A_TENSOR: the operand */
    int32_t node;       /* A_BN_*: the batch_norm */
    int64_t off, n;     /* A_OWN, A_BN_*: place and size in own */
} parg;

/* A per-output-channel affine step folded into the conv's weights and bias */
enum { F_BN, F_ADD, F_SUB, F_MUL };
typedef struct fstep {
    int kind;
    int32_t t;          /* the operand ([O] values), or the batch_norm node; -1: v */
    float v;
} fstep;

#define MAX_FOLD 16

struct fe_k_dnn_group {
    const fe_graph *g;
    fe_k_dnn *d;
    fe_k_dnn_spec sp;
    parg arg[FE_K_DNN_MAX_POST];
    int32_t x, w, bias, out;
    int32_t pad;        /* a zero pad folded into the conv's padding, or -1 */
    int32_t mbias;      /* matmul: the tensor added as its bias, or -1 */
    fstep fold[MAX_FOLD];
    int nfold;
    float *fscale, *fbias;   /* [O] each, when nfold */
    int32_t post_node[FE_K_DNN_MAX_POST];   /* the member each post-op comes from */
    fe_k_prog *pro;     /* a prologue on x, run as a pass of its own first */
    int npro;
    char pro_ops[160];
    fe_k_prog *epi;     /* the members after the chain, a pass of its own over out */
    int out_temp;       /* out is read only by the epilogue: a scratch buffer per run */
    int nepi;
    char epi_ops[160];
    float *own;
    int64_t nown;
    char desc[512];
    char key[1024];
};

static const char *alg_name(int kind, int alg)
{
    if (kind == FE_K_DNN_SUM)
        return "sum";
    if (kind == FE_K_DNN_BINARY)
        switch (alg) {
        case dnnl_binary_add: return "binary_add";
        case dnnl_binary_mul: return "binary_mul";
        case dnnl_binary_sub: return "binary_sub";
        case dnnl_binary_div: return "binary_div";
        case dnnl_binary_max: return "binary_max";
        default: return "binary_min";
        }
    switch (alg) {
    case dnnl_eltwise_relu: return "eltwise_relu";
    case dnnl_eltwise_gelu_erf: return "eltwise_gelu_erf";
    case dnnl_eltwise_gelu_tanh: return "eltwise_gelu_tanh";
    case dnnl_eltwise_swish: return "eltwise_swish";
    case dnnl_eltwise_logistic: return "eltwise_logistic";
    case dnnl_eltwise_tanh: return "eltwise_tanh";
    case dnnl_eltwise_exp: return "eltwise_exp";
    case dnnl_eltwise_log: return "eltwise_log";
    case dnnl_eltwise_abs: return "eltwise_abs";
    case dnnl_eltwise_sqrt: return "eltwise_sqrt";
    case dnnl_eltwise_hardswish: return "eltwise_hardswish";
    case dnnl_eltwise_linear: return "eltwise_linear";
    case dnnl_eltwise_pow: return "eltwise_pow";
    default: return "eltwise_clip_v2";
    }
}

/* Append an eltwise post-op. */
static int elt(fe_k_dnn_group *dg, int alg, float alpha, float beta)
{
    if (dg->sp.npost >= FE_K_DNN_MAX_POST)
        return -1;
    fe_k_dnn_post *p = &dg->sp.post[dg->sp.npost];
    memset(p, 0, sizeof *p);
    p->alg = alg;
    p->alpha = alpha;
    p->beta = beta;
    dg->arg[dg->sp.npost++].kind = A_NONE;
    return 0;
}

/* Append a binary post-op whose operand has dims shape (rank of y). */
static int bin(fe_k_dnn_group *dg, int alg, const int64_t *shape, parg a)
{
    if (dg->sp.npost >= FE_K_DNN_MAX_POST)
        return -1;
    fe_k_dnn_post *p = &dg->sp.post[dg->sp.npost];
    memset(p, 0, sizeof *p);
    p->kind = FE_K_DNN_BINARY;
    p->alg = alg;
    memcpy(p->shape, shape, (size_t)dg->sp.rank * sizeof(int64_t));
    dg->arg[dg->sp.npost++] = a;
    return 0;
}

/* A binary post-op on an owned operand of n floats with dims shape. */
static int bin_own(fe_k_dnn_group *dg, int alg, const int64_t *shape, int kind, int32_t node,
                   int64_t n)
{
    parg a = {kind, -1, node, dg->nown, n};
    float *own = realloc(dg->own, (size_t)(dg->nown + n) * sizeof(float));
    if (!own)
        return -1;
    dg->own = own;
    dg->nown += n;
    return bin(dg, alg, shape, a);
}

static int unary_post(fe_k_dnn_group *dg, const fe_node *nd)
{
    const fe_graph *g = dg->g;
    switch (nd->op) {
    case FE_OP_RELU: return elt(dg, dnnl_eltwise_relu, 0, 0);
    case FE_OP_GELU:
        return elt(dg, strcmp(fe_node_attr_str(g, nd, "approximate", "none"), "tanh")
                           ? dnnl_eltwise_gelu_erf : dnnl_eltwise_gelu_tanh, 0, 0);
    case FE_OP_SILU: return elt(dg, dnnl_eltwise_swish, 1, 0);
    case FE_OP_SIGMOID: return elt(dg, dnnl_eltwise_logistic, 0, 0);
    case FE_OP_TANH: return elt(dg, dnnl_eltwise_tanh, 0, 0);
    case FE_OP_EXP: return elt(dg, dnnl_eltwise_exp, 0, 0);
    case FE_OP_LOG: return elt(dg, dnnl_eltwise_log, 0, 0);
    case FE_OP_ABS: return elt(dg, dnnl_eltwise_abs, 0, 0);
    case FE_OP_SQRT: return elt(dg, dnnl_eltwise_sqrt, 0, 0);
    case FE_OP_HARDSWISH: return elt(dg, dnnl_eltwise_hardswish, 0, 0);
    case FE_OP_NEG: return elt(dg, dnnl_eltwise_linear, -1, 0);
    case FE_OP_RSQRT: return elt(dg, dnnl_eltwise_pow, 1, -0.5f);
    case FE_OP_RECIPROCAL: return elt(dg, dnnl_eltwise_pow, 1, -1);
    case FE_OP_HARDSIGMOID:   /* min(max(x / 6 + 1/2, 0), 1): one linear (fold_repeats) */
        if (elt(dg, dnnl_eltwise_linear, 1.0f / 6.0f, 0.5f))
            return -1;
        return elt(dg, dnnl_eltwise_clip_v2, 0, 1);
    case FE_OP_CAST: return 0;  /* f32 to f32 (dtypes are checked) */
    default: return 1;
    }
}

static int is_elt(const fe_k_dnn_post *p, int alg)
{
    return p->kind == FE_K_DNN_ELTWISE && p->alg == alg;
}

/* oneDNN 2.6 runs every eltwise post-op of one algorithm with the first
 * one's parameters (gemm:jit, measured: matmul, + 4, neg gave x + 8; x 4,
 * + 4 gave 16x). So adjacent linear post-ops (a scale, then a shift) fold
 * into one, and so do adjacent clips whose ranges meet; 1 when another
 * algorithm would still repeat with other parameters, and then dg is
 * unchanged. */
static int fold_repeats(fe_k_dnn_group *dg)
{
    fe_k_dnn_post post[FE_K_DNN_MAX_POST];
    parg arg[FE_K_DNN_MAX_POST];
    int32_t node[FE_K_DNN_MAX_POST];
    int m = 0;
    for (int p = 0; p < dg->sp.npost; p++) {
        const fe_k_dnn_post *q = &dg->sp.post[p];
        fe_k_dnn_post *last = m ? &post[m - 1] : NULL;
        if (last && is_elt(last, dnnl_eltwise_linear) && is_elt(q, dnnl_eltwise_linear)) {
            last->beta = q->alpha * last->beta + q->beta;   /* a2 (a1 x + b1) + b2 */
            last->alpha *= q->alpha;
            continue;
        }
        if (last && is_elt(last, dnnl_eltwise_clip_v2) && is_elt(q, dnnl_eltwise_clip_v2) &&
            fmaxf(last->alpha, q->alpha) <= fminf(last->beta, q->beta)) {
            last->alpha = fmaxf(last->alpha, q->alpha);
            last->beta = fminf(last->beta, q->beta);
            continue;
        }
        post[m] = *q;
        arg[m] = dg->arg[p];
        node[m++] = dg->post_node[p];
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < i; j++)
            if (post[i].kind == FE_K_DNN_ELTWISE && is_elt(&post[j], post[i].alg) &&
                (post[i].alpha != post[j].alpha || post[i].beta != post[j].beta))
                return 1;
    memcpy(dg->sp.post, post, (size_t)m * sizeof *post);
    memcpy(dg->arg, arg, (size_t)m * sizeof *arg);
    memcpy(dg->post_node, node, (size_t)m * sizeof *node);
    dg->sp.npost = m;
    return 0;
}

static int bin_alg(int op)
{
    switch (op) {
    case FE_OP_ADD: return dnnl_binary_add;
    case FE_OP_SUB: return dnnl_binary_sub;
    case FE_OP_MUL: return dnnl_binary_mul;
    case FE_OP_DIV: return dnnl_binary_div;
    case FE_OP_MAXIMUM: return dnnl_binary_max;
    case FE_OP_MINIMUM: return dnnl_binary_min;
    default: return -1;
    }
}

/* Member nd reads the chain value cur; add its post-ops. 1 = no post-op
 * for it, -1 = too many, with why set. */
static int add_posts(fe_k_dnn_group *dg, const fe_node *nd, int32_t cur, const int32_t *nodes,
                     int n, fe_error *why)
{
    const fe_graph *g = dg->g;
    int r = dg->sp.rank, alg = bin_alg(nd->op);
    int64_t ones[FE_MAX_RANK];
    double v;
    for (int i = 0; i < FE_MAX_RANK; i++)
        ones[i] = 1;
    if (fe_op_get(nd->op)->pattern == FE_ELEMWISE) {
        int rc = unary_post(dg, nd);
        if (rc > 0)
            fe_error_set(why, FE_EINPUT, "oneDNN has no post-op for %s (node '%s')",
                         fe_node_op_name(nd), fe_node_name(g, nd));
        return rc;
    }
    if (nd->op == FE_OP_BATCH_NORM) {
        int64_t C = dg->sp.y[1], sh[FE_MAX_RANK];
        if (fe_node_input(g, nd, 0) != cur)
            return fe_error_set(why, FE_EINPUT, "batch_norm '%s' normalises a parameter",
                                fe_node_name(g, nd)), 1;
        memcpy(sh, ones, sizeof sh);
        sh[1] = C;
        if (bin_own(dg, dnnl_binary_mul, sh, A_BN_SCALE, fe_node_id(g, nd), C) ||
            bin_own(dg, dnnl_binary_add, sh, A_BN_SHIFT, fe_node_id(g, nd), C))
            return -1;
        return 0;
    }
    if (alg < 0)
        return fe_error_set(why, FE_EINPUT, "oneDNN has no post-op for %s (node '%s')",
                            fe_node_op_name(nd), fe_node_name(g, nd)), 1;
    if (nd->nin == 1 && fe_node_scalar(g, nd, &v)) {
        int first = fe_node_attr_int(g, nd, "scalar_index", 1) == 0;   /* s op x */
        float s = (float)v;
        switch (nd->op) {
        case FE_OP_ADD: return elt(dg, dnnl_eltwise_linear, 1, s);
        case FE_OP_MUL: return elt(dg, dnnl_eltwise_linear, s, 0);
        case FE_OP_SUB: return first ? elt(dg, dnnl_eltwise_linear, -1, s)
                                     : elt(dg, dnnl_eltwise_linear, 1, -s);
        case FE_OP_DIV:
            if (first)
                return elt(dg, dnnl_eltwise_pow, s, -1);
            break;
        /* A clip, not a binary op on a one-element operand: oneDNN's gemm:jit
         * convolutions apply binary post-ops element by element (opu_convnet's
         * conv5 + maximum(x, 0): 15.8 ms against 7 ms apart). */
        case FE_OP_MAXIMUM: return elt(dg, dnnl_eltwise_clip_v2, s, INFINITY);
        case FE_OP_MINIMUM: return elt(dg, dnnl_eltwise_clip_v2, -INFINITY, s);
        default: break;
        }
        if (bin_own(dg, alg, ones, A_OWN, -1, 1))
            return -1;
        dg->own[dg->nown - 1] = s;
        return 0;
    }
    if (nd->nin != 2)
        return fe_error_set(why, FE_EINPUT, "node '%s' has no operand for a post-op",
                            fe_node_name(g, nd)), 1;
    int ci = fe_node_input(g, nd, 0) == cur ? 0 : 1;
    int32_t o = fe_node_input(g, nd, 1 - ci);
    const fe_tensor *ot = fe_graph_tensor(g, o);
    if (ot->producer >= 0 && fe_k_ids_has(nodes, n, ot->producer))
        return fe_error_set(why, FE_EINPUT, "%s '%s' reads two values of the group",
                            fe_node_op_name(nd), fe_node_name(g, nd)), 1;
    if (ot->dtype != FE_F32)
        return fe_error_set(why, FE_EINPUT, "%s is %s (oneDNN's post-ops here take f32)",
                            fe_tensor_name(g, ot), fe_dtype_name(ot->dtype)), 1;
    /* the operand right-aligned to the output, each dim full or 1 */
    int64_t sh[FE_MAX_RANK];
    const int64_t *os = fe_tensor_shape(g, ot);
    if (ot->rank > r)
        return fe_error_set(why, FE_EINPUT, "%s has more axes than the output",
                            fe_tensor_name(g, ot)), 1;
    for (int i = 0; i < r; i++) {
        int j = i - (r - ot->rank);
        sh[i] = j < 0 ? 1 : os[j];
        if (sh[i] != 1 && sh[i] != dg->sp.y[i])
            return fe_error_set(why, FE_EINPUT, "%s does not broadcast to the output",
                                fe_tensor_name(g, ot)), 1;
    }
    parg a = {A_TENSOR, o, -1, 0, 0};
    int full = 1, col = 1;
    for (int i = 0; i < r; i++) {
        full &= sh[i] == dg->sp.y[i];
        col &= i == r - 1 || sh[i] == 1;
    }
    if (nd->op == FE_OP_ADD && dg->sp.npost == 0 && full) {
        /* a residual: copied into the destination, then accumulated there */
        a.kind = A_SUM;
        dg->sp.post[dg->sp.npost].kind = FE_K_DNN_SUM;
        dg->arg[dg->sp.npost++] = a;
        return 0;
    }
    if (nd->op == FE_OP_ADD && !dg->sp.conv && dg->sp.npost == 0 && dg->mbias < 0 && col) {
        dg->mbias = o;      /* the matmul's own bias */
        dg->sp.bias = 1;
        return 0;
    }
    if (ci == 1 && nd->op == FE_OP_SUB)   /* o - x = -x + o */
        return elt(dg, dnnl_eltwise_linear, -1, 0) || bin(dg, dnnl_binary_add, sh, a) ? -1 : 0;
    if (ci == 1 && nd->op == FE_OP_DIV)
        return fe_error_set(why, FE_EINPUT, "div '%s' divides by the chain's value",
                            fe_node_name(g, nd)), 1;
    return bin(dg, alg, sh, a);
}

/* The values of a per-channel operand of a conv output [N, O, OH, OW]:
 * [O, 1, 1], [1, O, 1, 1] and the like, or -1. */
static int per_channel(const fe_graph *g, const fe_tensor *t, int64_t O)
{
    const int64_t *sh = fe_tensor_shape(g, t);
    if (t->rank > 4 || t->dtype != FE_F32 || t->rank < 3)
        return 0;
    for (int i = 0; i < t->rank; i++)
        if (sh[i] != (i == t->rank - 3 ? O : 1))
            return 0;
    return 1;
}

/* Fold member nd, which reads cur, into the conv's weights and bias if it
 * is a per-channel affine step; 1 if folded. */
static int fold_step(fe_k_dnn_group *dg, const fe_node *nd, int32_t cur, const int32_t *nodes, int n)
{
    const fe_graph *g = dg->g;
    fstep f = {-1, -1, 0};
    double v;
    if (dg->nfold >= MAX_FOLD || fe_node_input(g, nd, 0) != cur)
        return 0;   /* the chain value first: x + t, x - t, x * t, bn(x) */
    if (nd->op == FE_OP_BATCH_NORM) {
        f.kind = F_BN;
        f.t = fe_node_id(g, nd);
        for (int k = 1; k < 5; k++) {
            int32_t p = fe_graph_tensor(g, fe_node_input(g, nd, k))->producer;
            if (p >= 0 && fe_k_ids_has(nodes, n, p))
                return 0;
        }
    } else if (nd->op == FE_OP_ADD || nd->op == FE_OP_SUB || nd->op == FE_OP_MUL) {
        f.kind = nd->op == FE_OP_ADD ? F_ADD : nd->op == FE_OP_SUB ? F_SUB : F_MUL;
        if (nd->nin == 1 && fe_node_scalar(g, nd, &v) &&
            fe_node_attr_int(g, nd, "scalar_index", 1) == 1) {
            f.v = (float)v;
        } else if (nd->nin == 2) {
            const fe_tensor *ot = fe_graph_tensor(g, fe_node_input(g, nd, 1));
            if (!per_channel(g, ot, dg->sp.y[1]) || (ot->producer >= 0 && fe_k_ids_has(nodes, n, ot->producer)))
                return 0;
            f.t = fe_node_input(g, nd, 1);
        } else {
            return 0;
        }
    } else {
        return 0;
    }
    dg->fold[dg->nfold++] = f;
    return 1;
}

/* scale and bias of the folded steps now: y = conv(x, w * scale) + bias */
static void fold_params(fe_k_dnn_group *dg, const fe_k_tensor *bufs)
{
    const fe_graph *g = dg->g;
    int64_t O = dg->sp.y[1];
    float *sc = dg->fscale, *sh = dg->fbias;
    for (int64_t o = 0; o < O; o++) {
        sc[o] = 1.0f;
        sh[o] = 0.0f;
    }
    for (int k = 0; k < dg->nfold; k++) {
        const fstep *f = &dg->fold[k];
        if (f->kind == F_BN) {
            const fe_node *nd = fe_graph_node(g, f->t);
            float eps = (float)fe_node_attr_float(g, nd, "eps", 1e-5);
            for (int64_t o = 0; o < O; o++) {
                float p[4];   /* w, b, mean, var */
                for (int j = 0; j < 4; j++) {
                    const fe_k_tensor *t = &bufs[fe_node_input(g, nd, j + 1)];
                    fe_k_load_f32(t->data, t->dtype, o, &p[j], 1);
                }
                float m = 1.0f / sqrtf(p[3] + eps) * p[0];
                sc[o] *= m;
                sh[o] = sh[o] * m + (p[1] - p[2] * m);
            }
            continue;
        }
        for (int64_t o = 0; o < O; o++) {
            float v = f->t >= 0 ? ((const float *)bufs[f->t].data)[o] : f->v;
            if (f->kind == F_MUL) {
                sc[o] *= v;
                sh[o] *= v;
            } else {
                sh[o] += f->kind == F_ADD ? v : -v;
            }
        }
    }
    if (dg->bias >= 0) {
        const float *b = bufs[dg->bias].data;
        for (int64_t o = 0; o < O; o++)
            sh[o] += b[o] * sc[o];
    }
}

/* gemm:jit runs a sum followed by eltwise post-ops far slower than the
 * sum alone (measured 3.4 against 0.9 ms on a ResNet-50 1x1 conv): when
 * only unary ops follow the sum, the chain ends at the sum and they join
 * the epilogue pass. The chain's new length, or nchain. */
static int untail_sum(const fe_k_dnn_group *dg, const int32_t *chain, int nchain)
{
    const fe_graph *g = dg->g;
    if (dg->sp.npost < 2 || dg->sp.post[0].kind != FE_K_DNN_SUM)
        return nchain;
    for (int p = 1; p < dg->sp.npost; p++) {
        const fe_node *nd = fe_graph_node(g, dg->post_node[p]);
        if (dg->sp.post[p].kind != FE_K_DNN_ELTWISE || nd->nin != 1 ||
            fe_op_get(nd->op)->pattern != FE_ELEMWISE)
            return nchain;
    }
    for (int k = 0; k < nchain; k++)
        if (chain[k] == dg->post_node[0])
            return k + 1;
    return nchain;
}

/* The anchor's geometry into dg->sp; 1 with why if oneDNN cannot take it. */
static int anchor_spec(fe_k_dnn_group *dg, const fe_node *an, fe_error *why)
{
    const fe_graph *g = dg->g;
    fe_k_dnn_spec *sp = &dg->sp;
    const fe_tensor *xt = fe_graph_tensor(g, fe_node_input(g, an, 0));
    const fe_tensor *wt = fe_graph_tensor(g, fe_node_input(g, an, 1));
    const fe_tensor *yt = fe_graph_tensor(g, fe_node_output(g, an, 0));
    dg->x = fe_node_input(g, an, 0);
    dg->w = fe_node_input(g, an, 1);
    dg->bias = an->op == FE_OP_CONV2D && an->nin > 2 ? fe_node_input(g, an, 2) : -1;
    const fe_tensor *ts[4] = {xt, wt, yt, dg->bias >= 0 ? fe_graph_tensor(g, dg->bias) : NULL};
    for (int k = 0; k < 4; k++)
        if (ts[k] && ts[k]->dtype != FE_F32)
            return fe_error_set(why, FE_EINPUT, "%s is %s (the oneDNN choice takes f32)",
                                fe_tensor_name(g, ts[k]), fe_dtype_name(ts[k]->dtype)), 1;
    if (an->op == FE_OP_CONV2D) {
        int64_t t[3];
        const char *keys[3] = {"stride", "padding", "dilation"};
        int64_t dflt[3] = {1, 0, 1}, *dst[3] = {sp->stride, sp->pad, sp->dil};
        sp->conv = 1;
        sp->rank = 4;
        for (int k = 0; k < 3; k++) {
            int c = fe_node_attr_ints(g, an, keys[k], t, 3);
            dst[k][0] = c == -1 ? dflt[k] : t[0];
            dst[k][1] = c == -1 ? dflt[k] : c == 1 ? t[0] : t[1];
        }
        sp->groups = fe_node_attr_int(g, an, "groups", 1);
        sp->bias = dg->bias >= 0;
        memcpy(sp->a, fe_tensor_shape(g, xt), 4 * sizeof(int64_t));
        memcpy(sp->b, fe_tensor_shape(g, wt), 4 * sizeof(int64_t));
        memcpy(sp->y, fe_tensor_shape(g, yt), 4 * sizeof(int64_t));
        return 0;
    }
    if (xt->rank < 2 || wt->rank < 2)
        return fe_error_set(why, FE_EINPUT, "matmul '%s' has a 1-D operand", fe_node_name(g, an)), 1;
    int r = yt->rank;
    sp->rank = r;
    sp->ta = fe_node_attr_bool(g, an, "transpose_a", 0);
    sp->tb = fe_node_attr_bool(g, an, "transpose_b", 0);
    for (int i = 0; i < r; i++) {   /* batch axes padded with 1 on the left */
        int ja = i - (r - xt->rank), jb = i - (r - wt->rank);
        sp->a[i] = ja < 0 ? 1 : fe_tensor_shape(g, xt)[ja];
        sp->b[i] = jb < 0 ? 1 : fe_tensor_shape(g, wt)[jb];
        sp->y[i] = fe_tensor_shape(g, yt)[i];
    }
    return 0;
}

/* A linear layer [.., M, K] x [K, N]: fold the batch into M when every
 * binary operand folds alike (all its leading dims 1, or all full). */
static void fold_batch(fe_k_dnn_group *dg)
{
    fe_k_dnn_spec *sp = &dg->sp;
    int r = sp->rank;
    if (sp->conv || r <= 2 || sp->ta)
        return;
    for (int i = 0; i < r - 2; i++)
        if (sp->b[i] != 1)
            return;
    int full[FE_K_DNN_MAX_POST];
    for (int p = 0; p < sp->npost; p++) {
        int ones = 1, all = 1;
        for (int i = 0; i < r - 1; i++) {
            ones &= sp->post[p].shape[i] == 1;
            all &= sp->post[p].shape[i] == sp->y[i];
        }
        if (sp->post[p].kind == FE_K_DNN_BINARY && !ones && !all)
            return;
        full[p] = all;
    }
    int64_t M = 1;
    for (int i = 0; i < r - 1; i++)
        M *= sp->y[i];
    sp->a[0] = M;
    sp->a[1] = sp->a[r - 1];
    sp->b[0] = sp->b[r - 2];
    sp->b[1] = sp->b[r - 1];
    sp->y[0] = M;
    sp->y[1] = sp->y[r - 1];
    for (int p = 0; p < sp->npost; p++) {
        int64_t *s = sp->post[p].shape;
        s[0] = full[p] ? M : 1;
        s[1] = s[r - 1];
    }
    sp->rank = 2;
}

static void describe(fe_k_dnn_group *dg, const fe_node *an)
{
    const fe_k_dnn_spec *sp = &dg->sp;
    size_t l;
    if (sp->conv)
        l = (size_t)snprintf(dg->desc, sizeof dg->desc, "conv2d %lldx%lld s%lld%s%s",
                             (long long)sp->b[2], (long long)sp->b[3], (long long)sp->stride[0],
                             sp->groups > 1 ? (sp->groups == sp->y[1] ? " depthwise" : " grouped") : "",
                             dg->bias >= 0 ? " +bias" : "");
    else
        l = (size_t)snprintf(dg->desc, sizeof dg->desc, "matmul %lldx%lldx%lld%s",
                             (long long)sp->y[sp->rank - 2], (long long)sp->a[sp->rank - 1 - sp->ta],
                             (long long)sp->y[sp->rank - 1], sp->rank > 2 ? " batched" : "");
    (void)an;
    if (dg->pad >= 0)
        l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, " padding %lldx%lld (pad '%s' "
                              "folded in)", (long long)sp->pad[0], (long long)sp->pad[1],
                              fe_node_name(dg->g, fe_graph_node(dg->g, dg->pad)));
    if (dg->npro)
        l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, " after a pass of its prologue "
                              "(%d ops: %s)", dg->npro, dg->pro_ops);
    if (dg->nfold)
        l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, ", %d per-channel op%s folded into "
                              "its weights and bias", dg->nfold, dg->nfold > 1 ? "s" : "");
    if (dg->mbias >= 0)
        l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, " +bias");
    if (sp->npost) {
        l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, " with post-ops [");
        for (int p = 0; p < sp->npost && l < sizeof dg->desc; p++)
            l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, "%s%s", p ? ", " : "",
                                  alg_name(sp->post[p].kind, sp->post[p].alg));
        if (l < sizeof dg->desc)
            l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, "]");
    }
    if (dg->nepi && l < sizeof dg->desc)
        l += (size_t)snprintf(dg->desc + l, sizeof dg->desc - l, ", then a pass of its epilogue "
                              "(%d ops: %s)", dg->nepi, dg->epi_ops);
    if (l < sizeof dg->desc)
        snprintf(dg->desc + l, sizeof dg->desc - l, " (%s%s)", fe_k_dnn_impl(dg->d),
                 fe_k_dnn_reorders(dg->d) ? ", weights reordered every run" : "");
    /* the key: everything the primitive depends on */
    l = (size_t)snprintf(dg->key, sizeof dg->key, "%d %d %d %d %lld %d %d", sp->conv, sp->rank, sp->ta,
                         sp->tb, (long long)sp->groups, sp->bias, dg->nfold);
    if (dg->npro && l < sizeof dg->key)
        l += (size_t)snprintf(dg->key + l, sizeof dg->key - l, " pro:%s", dg->pro_ops);
    if (dg->nepi && l < sizeof dg->key)
        l += (size_t)snprintf(dg->key + l, sizeof dg->key - l, " epi:%s", dg->epi_ops);
    for (int i = 0; i < sp->rank && l < sizeof dg->key; i++)
        l += (size_t)snprintf(dg->key + l, sizeof dg->key - l, " %lld,%lld,%lld", (long long)sp->a[i],
                              (long long)sp->b[i], (long long)sp->y[i]);
    for (int k = 0; k < 2 && l < sizeof dg->key; k++)
        l += (size_t)snprintf(dg->key + l, sizeof dg->key - l, " %lld,%lld,%lld", (long long)sp->stride[k],
                              (long long)sp->pad[k], (long long)sp->dil[k]);
    for (int p = 0; p < sp->npost && l < sizeof dg->key; p++) {
        l += (size_t)snprintf(dg->key + l, sizeof dg->key - l, " %d:%x:%g:%g", sp->post[p].kind, sp->post[p].alg,
                              sp->post[p].alpha, sp->post[p].beta);
        for (int i = 0; sp->post[p].kind == FE_K_DNN_BINARY && i < sp->rank && l < sizeof dg->key; i++)
            l += (size_t)snprintf(dg->key + l, sizeof dg->key - l, ",%lld", (long long)sp->post[p].shape[i]);
    }
}

/* A conv2d's input padded with zeros on H and W by a member read by
 * nothing else: oneDNN pads the unpadded input itself, with the pad's
 * sizes added to the conv's own (a far side's follows from the output
 * size), and no padded copy is made. Sets dg->pad and takes its input as
 * x. */
static void fold_pad(fe_k_dnn_group *dg, const int32_t *nodes, int n, const int32_t *outs,
                     int nouts)
{
    const fe_graph *g = dg->g;
    const fe_tensor *xt = fe_graph_tensor(g, dg->x);
    int32_t p = xt->producer;
    if (p < 0 || !fe_k_ids_has(nodes, n, p) || xt->ncons != 1 || fe_k_ids_has(outs, nouts, dg->x))
        return;
    const fe_node *pn = fe_graph_node(g, p);
    int64_t lo[2], hi[2];
    double value;
    if (!fe_k_node_pad_hw(g, pn, lo, hi, &value) || value != 0.0)
        return;
    int32_t src = fe_node_input(g, pn, 0);
    if (fe_graph_tensor(g, src)->dtype != FE_F32 || fe_graph_tensor(g, src)->rank != 4)
        return;
    dg->pad = p;
    dg->x = src;
    memcpy(dg->sp.a, fe_tensor_shape(g, fe_graph_tensor(g, src)), 4 * sizeof(int64_t));
    dg->sp.pad[0] += lo[0];
    dg->sp.pad[1] += lo[1];
}

/* Members gathered into a pass of their own: their ids, the group's
 * outputs they produce (with room for one more), and their op names for
 * the description. */
typedef struct pass_set {
    int32_t *ids, *st;
    int n, ns;
    char *ops;
    size_t size, l;
} pass_set;

static int pass_init(pass_set *ps, int n, int nouts, char *ops, size_t size, fe_error *why)
{
    *ps = (pass_set){malloc((size_t)n * sizeof(int32_t)), malloc((size_t)(nouts + 1) * sizeof(int32_t)),
                     0, 0, ops, size, 0};
    return ps->ids && ps->st ? 0 : (fe_error_set(why, FE_ENOMEM, "out of memory"), -1);
}

static void pass_add(const fe_graph *g, pass_set *ps, int32_t id, const int32_t *outs, int nouts)
{
    ps->ids[ps->n++] = id;
    if (ps->l < ps->size)
        ps->l += (size_t)snprintf(ps->ops + ps->l, ps->size - ps->l, "%s%s", ps->n > 1 ? ", " : "",
                                  fe_node_op_name(fe_graph_node(g, id)));
    for (int k = 0; k < nouts; k++)
        if (fe_graph_tensor(g, outs[k])->producer == id)
            ps->st[ps->ns++] = outs[k];
}

static void pass_free(pass_set *ps)
{
    free(ps->ids);
    free(ps->st);
}

/* The members feeding x (all before the anchor) as one fused program that
 * writes x, plus whatever else of theirs leaves the group. */
static int compile_prologue(fe_k_dnn_group *dg, const int32_t *nodes, int n, int32_t anchor,
                            const int32_t *outs, int nouts, fe_error *why)
{
    const fe_graph *g = dg->g;
    pass_set ps;
    int rc = -1;
    if (pass_init(&ps, n, nouts, dg->pro_ops, sizeof dg->pro_ops, why))
        goto out;
    for (int i = 0; i < n; i++)   /* ids are topological: members before the anchor feed it */
        if (nodes[i] < anchor && nodes[i] != dg->pad)
            pass_add(g, &ps, nodes[i], outs, nouts);
    ps.st[ps.ns++] = dg->x;
    if (!ps.n) {
        rc = 0;
        goto out;
    }
    if ((dg->pro = fe_k_prog_compile_nodes(g, ps.ids, ps.n, ps.st, ps.ns, why))) {
        dg->npro = ps.n;
        rc = 0;
    }
out:
    pass_free(&ps);
    return rc;
}

/* The members after the chain chain[0..nchain) as one fused program over
 * out, the primitive's output, storing what of theirs leaves the group.
 * after says why the chain ended, for the message when they cannot. */
static int compile_epilogue(fe_k_dnn_group *dg, const int32_t *nodes, int n, int32_t anchor,
                            const int32_t *chain, int nchain, const int32_t *outs, int nouts,
                            const char *after, fe_error *why)
{
    const fe_graph *g = dg->g;
    pass_set ps;
    int rc = -1;
    if (pass_init(&ps, n, nouts, dg->epi_ops, sizeof dg->epi_ops, why))
        goto out;
    for (int i = 0; i < n; i++) {
        if (nodes[i] == anchor || nodes[i] == dg->pad || fe_k_ids_has(chain, nchain, nodes[i]) ||
            (dg->npro && nodes[i] < anchor))
            continue;
        if (nodes[i] < anchor) {
            const fe_node *nd = fe_graph_node(g, nodes[i]);
            fe_error_set(why, FE_EINPUT, "node '%s' (%s) is a prologue of %s '%s' (oneDNN "
                         "takes none)", fe_node_name(g, nd), fe_node_op_name(nd),
                         fe_node_op_name(fe_graph_node(g, anchor)),
                         fe_node_name(g, fe_graph_node(g, anchor)));
            goto out;
        }
        pass_add(g, &ps, nodes[i], outs, nouts);
    }
    /* what it reads of the group: out, x (kept until it is done), its own
     * values, and outputs written before it */
    for (int i = 0; i < ps.n; i++) {
        const fe_node *nd = fe_graph_node(g, ps.ids[i]);
        for (int k = 0; k < nd->nin; k++) {
            int32_t t = fe_node_input(g, nd, k), p = fe_graph_tensor(g, t)->producer;
            if (t == dg->out || t == dg->x || p < 0 || !fe_k_ids_has(nodes, n, p) ||
                fe_k_ids_has(ps.ids, ps.n, p) || fe_k_ids_has(outs, nouts, t))
                continue;
            fe_error_set(why, FE_EINPUT, "%s '%s' reads %s, which no pass before it writes out "
                         "(the post-ops end where %s)", fe_node_op_name(nd), fe_node_name(g, nd),
                         fe_tensor_name(g, fe_graph_tensor(g, t)), after);
            goto out;
        }
    }
    fe_error cw = {0};
    if (!(dg->epi = fe_k_prog_compile_nodes(g, ps.ids, ps.n, ps.st, ps.ns, &cw))) {
        if (cw.code == FE_ENOMEM)
            *why = cw;
        else
            fe_error_set(why, FE_EINPUT, "the post-ops end where %s, and the %d ops after are no "
                         "fused pass: %s", after, ps.n, cw.message);
        goto out;
    }
    dg->nepi = ps.n;
    rc = 0;
out:
    pass_free(&ps);
    return rc;
}

fe_k_dnn_group *fe_k_dnn_group_new(const fe_graph *g, const int32_t *nodes, int n, int32_t anchor,
                                   const int32_t *outs, int nouts, int prologue, fe_error *why)
{
    const fe_node *an = fe_graph_node(g, anchor);
    int32_t *chain = NULL;   /* the members whose post-ops follow the anchor, in order */
    fe_k_dnn_group *dg = calloc(1, sizeof *dg);
    if (!dg)
        return fe_error_set(why, FE_ENOMEM, "out of memory"), NULL;
    dg->g = g;
    dg->mbias = -1;
    dg->pad = -1;
    if (anchor_spec(dg, an, why))
        goto fail;
    if (dg->sp.conv)
        fold_pad(dg, nodes, n, outs, nouts);
    for (int k = 0; k < an->nin; k++) {
        int32_t p = fe_graph_tensor(g, k ? fe_node_input(g, an, k) : dg->x)->producer;
        if (p >= 0 && fe_k_ids_has(nodes, n, p) && (k || !prologue)) {
            const fe_node *pn = fe_graph_node(g, p);
            fe_error_set(why, FE_EINPUT, "node '%s' (%s) is a prologue of %s '%s' (oneDNN "
                         "takes none)", fe_node_name(g, pn), fe_node_op_name(pn),
                         fe_node_op_name(an), fe_node_name(g, an));
            goto fail;
        }
    }
    if (prologue && compile_prologue(dg, nodes, n, anchor, outs, nouts, why))
        goto fail;
    /* walk the chain from the anchor's output */
    int32_t cur = fe_node_output(g, an, 0);
    int done = 1 + dg->npro + (dg->pad >= 0), nchain = 0;
    fe_error stop = {0};   /* why the chain ended before the last member */
    if (!(chain = malloc((size_t)n * sizeof(int32_t)))) {
        fe_error_set(why, FE_ENOMEM, "out of memory");
        goto fail;
    }
    /* Folding scales the weights at every run: where they outweigh the
     * output (the late layers of a CNN at batch 1: 9.4 MiB of 3x3 weights
     * for a 0.1 MiB output), one pass over the output is cheaper, so the
     * whole epilogue is that pass. */
    if (dg->sp.conv && fe_graph_tensor(g, dg->w)->bytes > fe_graph_tensor(g, cur)->bytes)
        fe_error_set(&stop, FE_EINPUT, "the weights outweigh the output");
    while (done + nchain < n && !stop.code) {
        const fe_tensor *ct = fe_graph_tensor(g, cur);
        int32_t next = -1;
        int nin = 0;
        if (fe_k_ids_has(outs, nouts, cur)) {
            fe_error_set(&stop, FE_EINPUT, "%s is also read outside the group",
                         fe_tensor_name(g, ct));
            break;
        }
        for (int k = 0; k < ct->ncons; k++) {
            int32_t c = fe_tensor_consumer(g, ct, k);
            if (fe_k_ids_has(nodes, n, c) && c != next) {
                nin++;
                next = c;
            }
        }
        if (nin != 1) {
            fe_error_set(&stop, FE_EINPUT, nin ? "%s feeds %d members" : "no member reads %s",
                         fe_tensor_name(g, ct), nin);
            break;
        }
        const fe_node *nd = fe_graph_node(g, next);
        int uses = 0;
        for (int k = 0; k < nd->nin; k++)
            uses += fe_node_input(g, nd, k) == cur;
        const fe_tensor *ot = fe_graph_tensor(g, fe_node_output(g, nd, 0));
        if (uses != 1 || nd->nout != 1 || ot->dtype != FE_F32 || ot->rank != dg->sp.rank ||
            memcmp(fe_tensor_shape(g, ot), fe_tensor_shape(g, ct), (size_t)ot->rank * sizeof(int64_t))) {
            fe_error_set(&stop, FE_EINPUT, "node '%s' (%s) is no post-op: it %s", fe_node_name(g, nd),
                         fe_node_op_name(nd), uses != 1 ? "reads the value twice"
                         : ot->dtype != FE_F32 ? "does not give f32" : "changes the shape");
            break;
        }
        int np0 = dg->sp.npost;
        int rc = dg->sp.conv && dg->sp.npost == 0 && fold_step(dg, nd, cur, nodes, n)
                     ? 0 : add_posts(dg, nd, cur, nodes, n, &stop);
        if (rc) {   /* none of its post-ops stay */
            dg->sp.npost = np0;
            if (stop.code == FE_ENOMEM) {
                *why = stop;
                goto fail;
            }
            if (rc < 0)
                fe_error_set(&stop, FE_EINPUT, "more than %d post-ops", FE_K_DNN_MAX_POST);
            break;
        }
        for (int p = np0; p < dg->sp.npost; p++)
            dg->post_node[p] = next;
        if (fold_repeats(dg)) {
            dg->sp.npost = np0;
            fe_error_set(&stop, FE_EINPUT, "node '%s' (%s) would repeat an eltwise post-op with "
                         "other parameters, which oneDNN 2.6 runs with the first one's",
                         fe_node_name(g, nd), fe_node_op_name(nd));
            break;
        }
        chain[nchain++] = next;
        cur = fe_node_output(g, nd, 0);
    }
    int cut = untail_sum(dg, chain, nchain);
    if (cut < nchain) {
        nchain = cut;
        dg->sp.npost = 1;
        cur = fe_node_output(g, fe_graph_node(g, chain[cut - 1]), 0);
        fe_error_set(&stop, FE_EINPUT, "gemm:jit runs unary post-ops after a sum slowly");
    }
    dg->out = cur;
    dg->out_temp = !fe_k_ids_has(outs, nouts, cur);
    if (done + nchain < n && compile_epilogue(dg, nodes, n, anchor, chain, nchain, outs, nouts,
                                              stop.message, why))
        goto fail;
    free(chain);
    chain = NULL;
    if (!dg->epi && dg->out_temp) {   /* the chain ends in a value nothing reads */
        fe_error_set(why, FE_EINPUT, "the chain's last value %s does not leave the group",
                     fe_tensor_name(g, fe_graph_tensor(g, cur)));
        goto fail;
    }
    if (dg->nfold) {
        dg->sp.wscale = dg->sp.bias = 1;
        dg->fscale = malloc((size_t)dg->sp.y[1] * sizeof(float));
        dg->fbias = malloc((size_t)dg->sp.y[1] * sizeof(float));
        if (!dg->fscale || !dg->fbias) {
            fe_error_set(why, FE_ENOMEM, "out of memory");
            goto fail;
        }
    }
    dg->sp.wany = 1;
    fold_batch(dg);
    if (!(dg->d = fe_k_dnn_new(&dg->sp, why)))
        goto fail;
    describe(dg, an);
    return dg;
fail:
    free(chain);
    fe_k_dnn_group_free(dg);
    return NULL;
}

void fe_k_dnn_group_free(fe_k_dnn_group *dg)
{
    if (!dg)
        return;
    fe_k_dnn_free(dg->d);
    fe_k_prog_free(dg->pro);
    fe_k_prog_free(dg->epi);
    free(dg->fscale);
    free(dg->fbias);
    free(dg->own);
    free(dg);
}

/* batch_norm's scale (or shift) from its parameters now, into dst[C] */
static void bn_params(const fe_k_dnn_group *dg, const parg *a, const fe_k_tensor *bufs, float *dst)
{
    const fe_graph *g = dg->g;
    const fe_node *nd = fe_graph_node(g, a->node);
    float eps = (float)fe_node_attr_float(g, nd, "eps", 1e-5);
    for (int64_t c = 0; c < a->n; c++) {
        float p[4];   /* w, b, mean, var */
        for (int k = 0; k < 4; k++) {
            const fe_k_tensor *t = &bufs[fe_node_input(g, nd, k + 1)];
            fe_k_load_f32(t->data, t->dtype, c, &p[k], 1);
        }
        float sc = 1.0f / sqrtf(p[3] + eps) * p[0];
        dst[c] = a->kind == A_BN_SCALE ? sc : p[1] - p[2] * sc;
    }
}

/* The primitive into dst (after the prologue's pass). */
static int run_primitive(fe_k_dnn_group *dg, fe_k_tensor *bufs, void *dst, fe_error *err)
{
    void *args[FE_K_DNN_MAX_POST];
    for (int p = 0; p < dg->sp.npost; p++) {
        const parg *a = &dg->arg[p];
        args[p] = NULL;
        if (a->kind == A_TENSOR)
            args[p] = bufs[a->t].data;
        else if (a->kind != A_NONE && a->kind != A_SUM)
            args[p] = dg->own + a->off;
        if (a->kind == A_BN_SCALE || a->kind == A_BN_SHIFT)
            bn_params(dg, a, bufs, dg->own + a->off);
        if (a->kind == A_SUM && bufs[a->t].data != dst)
            memcpy(dst, bufs[a->t].data, fe_k_nbytes(&bufs[dg->out]));
    }
    const void *bias = dg->mbias >= 0 ? bufs[dg->mbias].data : dg->bias >= 0 ? bufs[dg->bias].data : NULL;
    if (dg->nfold) {
        fold_params(dg, bufs);
        bias = dg->fbias;
    }
    return fe_k_dnn_run(dg->d, bufs[dg->x].data, bufs[dg->w].data, bias, dg->fscale, dst, args, err);
}

/* A scratch buffer for tensor t, viewed in bufs; NULL when out of memory. */
static void *scratch_view(const fe_graph *g, int32_t t, fe_k_tensor *bufs)
{
    void *d = fe_k_scratch_get((size_t)fe_graph_tensor(g, t)->bytes);
    if (d)
        bufs[t] = fe_k_graph_view(g, t, d);
    return d;
}

int fe_k_dnn_group_run(fe_k_dnn_group *dg, fe_k_tensor *bufs, fe_error *err)
{
    const fe_graph *g = dg->g;
    void *xtmp = NULL, *otmp = NULL;
    int rc = FE_OK;
    /* Temporaries come from the kernels' scratch pool: fresh memory would
     * fault its pages in on every run. */
    if (!bufs[dg->out].data && (!dg->out_temp || !(otmp = scratch_view(g, dg->out, bufs))))
        return dg->out_temp ? fe_error_set(err, FE_ENOMEM, "out of memory for oneDNN's output")
                            : fe_error_set(err, FE_ERUNTIME, "no buffer for %s",
                                           fe_tensor_name(g, fe_graph_tensor(g, dg->out)));
    if (dg->pro) {   /* the prologue's pass writes x, into a temporary unless x leaves the group */
        if (!bufs[dg->x].data && !(xtmp = scratch_view(g, dg->x, bufs)))
            rc = fe_error_set(err, FE_ENOMEM, "out of memory for a prologue pass");
        if (rc == FE_OK)
            rc = fe_k_prog_run_all(dg->pro, bufs, 1, err);
    }
    if (rc == FE_OK)
        rc = run_primitive(dg, bufs, bufs[dg->out].data, err);
    if (rc == FE_OK && dg->epi)
        rc = fe_k_prog_run_all(dg->epi, bufs, 1, err);
    if (xtmp) {
        fe_k_scratch_put(xtmp);
        bufs[dg->x].data = NULL;
    }
    if (otmp) {
        fe_k_scratch_put(otmp);
        bufs[dg->out].data = NULL;
    }
    return rc;
}

const char *fe_k_dnn_group_desc(const fe_k_dnn_group *dg) { return dg->desc; }
const char *fe_k_dnn_group_key(const fe_k_dnn_group *dg) { return dg->key; }

int64_t fe_k_dnn_group_temp_bytes(const fe_k_dnn_group *dg)
{
    return (dg->pro ? fe_graph_tensor(dg->g, dg->x)->bytes : 0) +
           (dg->out_temp ? fe_graph_tensor(dg->g, dg->out)->bytes : 0);
}

/* ---- measured against our kernels (versus.c) ---- */

static int run_dnn(void *ctx, fe_k_tensor *bufs, fe_error *err)
{
    return fe_k_dnn_group_run(ctx, bufs, err);
}

int fe_k_dnn_group_choose(fe_k_dnn_group *dg, const char *versus, const int32_t *ins, int nins,
                          const int32_t *outs, int nouts,
                          int (*ours)(void *ctx, fe_k_tensor *bufs, fe_error *err), void *ctx,
                          double *dnn_ms, double *ours_ms)
{
    char key[sizeof dg->key + 32];
    snprintf(key, sizeof key, "%s|%s", versus, dg->key);
    return fe_k_versus(key, dg->g, ins, nins, outs, nouts, run_dnn, dg, ours, ctx, dnn_ms, ours_ms);
}
