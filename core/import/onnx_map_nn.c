/* onnx_map_nn.c: the neural-network operators of ONNX onto our op set
 * (Conv, Gemm, MatMul, BatchNormalization, LayerNormalization, Softmax,
 * Reduce*, pooling) and the custom fallback for operators without a
 * mapping.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "onnx_map.h"

/* Concrete size of a dim or an error naming what needs it. */
static int concrete(imp *im, int64_t d, const char *what)
{
    if (FE_IS_SYM(d))
        return -!!imp_fail(im, "%s needs a fixed size, but it is symbolic dim '%s' (give it a "
                           "fixed size when exporting)", what, imp_dim_name(im, d));
    return 0;
}

int imp_window_pads(imp *im, const char *auto_pad, int64_t in, int64_t k, int64_t s, int64_t d,
                    int64_t *b, int64_t *e)
{
    if (!strcmp(auto_pad, "VALID")) {
        *b = *e = 0;
    } else if (!strncmp(auto_pad, "SAME", 4)) {
        if (concrete(im, in, "SAME padding"))
            return im->err->code;
        int64_t out = (in + s - 1) / s, total = (out - 1) * s + (k - 1) * d + 1 - in;
        total = total < 0 ? 0 : total;
        *b = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
        *e = total - *b;
    } else if (strcmp(auto_pad, "NOTSET") != 0) {
        return imp_fail(im, "auto_pad '%s' is not one ONNX defines", auto_pad);
    }
    return FE_OK;
}

typedef struct window {
    int64_t k[2], s[2], d[2], pb[2], pe[2];
} window;

/* An ints attribute of a 2-D window (strides, dilations) into v[2]: one
 * item serves both axes. Values are 1..INT32_MAX (onnx_check.c). */
static int window_pair(imp *im, const char *key, int64_t *v)
{
    int n = imp_attr_ints(im->node, key, v, 2);
    if (n == 1)
        v[1] = v[0];
    if (n == 0 || n > 2)
        return imp_fail(im, "attribute '%s' has %d items; a 2-D window takes 2", key, n);
    return FE_OK;
}

/* kernel_shape (or from the weight), strides, dilations, pads, auto_pad. */
static int window_of(imp *im, const imp_val *x, const int64_t *kernel, window *w)
{
    int64_t pads[4] = {0, 0, 0, 0};
    char buf[32];
    for (int i = 0; i < 2; i++) {
        w->k[i] = kernel[i], w->s[i] = 1, w->d[i] = 1;
        if (concrete(im, x->shape[2 + i], "a spatial dim of a window op"))
            return im->err->code;
    }
    if (window_pair(im, "strides", w->s) || window_pair(im, "dilations", w->d))
        return im->err->code;
    int np = imp_attr_ints(im->node, "pads", pads, 4);
    if (np >= 0 && np != 4)
        return imp_fail(im, "pads has %d items; a 2-D window needs 4", np);
    const char *auto_pad = imp_attr_str(im->node, "auto_pad", "NOTSET", buf, sizeof buf);
    for (int i = 0; i < 2; i++) {
        w->pb[i] = pads[i];
        w->pe[i] = pads[i + 2];
        if (imp_window_pads(im, auto_pad, x->shape[2 + i], w->k[i], w->s[i], w->d[i], &w->pb[i],
                        &w->pe[i]))
            return im->err->code;
    }
    return FE_OK;
}

static int window_out(imp *im, const imp_val *x, const window *w, int ceil_mode, int64_t *shape)
{
    for (int i = 0; i < 2; i++) {
        if (concrete(im, x->shape[2 + i], "a spatial dim"))
            return im->err->code;
        shape[2 + i] = fe_window_out(x->shape[2 + i], w->k[i], w->s[i], w->pb[i], w->d[i], ceil_mode);
        if (shape[2 + i] < 1)
            return imp_fail(im, "the window does not fit the input (%lld)", (long long)x->shape[2 + i]);
    }
    return FE_OK;
}

/* Asymmetric pads: an explicit pad node first (torch order), then the
 * window op without padding. */
static imp_val *pad_first(imp *im, imp_val *x, window *w, double value)
{
    if (w->pb[0] == w->pe[0] && w->pb[1] == w->pe[1])
        return x;
    int64_t tp[4] = {w->pb[1], w->pe[1], w->pb[0], w->pe[0]}, shape[4];
    memcpy(shape, x->shape, sizeof shape);
    shape[2] += w->pb[0] + w->pe[0];
    shape[3] += w->pb[1] + w->pe[1];
    int32_t nd;
    imp_val *o = imp_op1(im, "pad", x, x->dtype, 4, shape, -1, &nd);
    if (!o || fe_builder_attr_ints(im->b, nd, "pads", tp, 4) ||
        (value != 0 && fe_builder_attr_float(im->b, nd, "value", value)))
        return NULL;
    for (int i = 0; i < 2; i++)
        w->pb[i] = w->pe[i] = 0;
    return o;
}

static int window_attrs(imp *im, int32_t nd, const window *w, int dil)
{
    int64_t pad[2] = {w->pb[0], w->pb[1]};
    return fe_builder_attr_ints(im->b, nd, "stride", w->s, 2) ||
           fe_builder_attr_ints(im->b, nd, "padding", pad, 2) ||
           (dil && fe_builder_attr_ints(im->b, nd, "dilation", w->d, 2));
}

static int map_conv(imp *im)
{
    imp_val *x = imp_in(im, 0), *wt = imp_in(im, 1), *bias = imp_opt(im, 2);
    if ((x->rank == 3 || x->rank == 5) && wt->rank == x->rank)
        return imp_map_convnd(im);
    if (x->rank != 4 || wt->rank != 4)
        return imp_custom(im, "a convolution that is not 1-D, 2-D or 3-D");
    window w;
    if (concrete(im, wt->shape[2], "the kernel") || concrete(im, wt->shape[3], "the kernel") ||
        window_of(im, x, &wt->shape[2], &w))
        return im->err->code;
    if (!(x = pad_first(im, x, &w, 0)))
        return im->err->code;
    int64_t shape[4] = {x->shape[0], wt->shape[0]};
    if (window_out(im, x, &w, 0, shape))
        return im->err->code;
    imp_val *o = imp_out(im, 0, x->dtype, 4, shape), *in[3] = {x, wt, bias};
    int32_t nd = o ? imp_emit(im, "conv2d", in, bias ? 3 : 2, o) : -1;
    int64_t g = imp_attr_int(im->node, "group", 1);
    if (nd < 0 || window_attrs(im, nd, &w, 1) ||
        (g != 1 && fe_builder_attr_int(im->b, nd, "groups", g)))
        return im->err->code;
    return FE_OK;
}

static int map_pool(imp *im, int max)
{
    imp_val *x = imp_in(im, 0);
    int64_t kernel[2];   /* values 1..INT32_MAX (onnx_check.c) */
    if (x->rank == 3)
        return imp_map_pool1d(im, max);
    if (x->rank == 5)
        return imp_map_pool3d(im, max);
    if (x->rank != 4 || imp_attr_ints(im->node, "kernel_shape", kernel, 2) != 2)
        return imp_custom(im, "a pooling window that is not 1-D, 2-D or 3-D");
    if (im->node->n_output > 1 && im->node->output[1][0])
        return imp_custom(im, "the Indices output");
    window w;
    if (window_of(im, x, kernel, &w))
        return im->err->code;
    int cip = (int)imp_attr_int(im->node, "count_include_pad", 0);
    if (!max && !cip && (w.pb[0] != w.pe[0] || w.pb[1] != w.pe[1]))
        return imp_custom(im, "asymmetric pads that are not counted");
    if (!(x = pad_first(im, x, &w, max ? -3.4028234663852886e38 : 0)))
        return im->err->code;
    int ceil_mode = (int)imp_attr_int(im->node, "ceil_mode", 0);
    int64_t shape[4] = {x->shape[0], x->shape[1]};
    if (window_out(im, x, &w, ceil_mode, shape))
        return im->err->code;
    int32_t nd;
    imp_val *o = imp_op1(im, max ? "max_pool2d" : "avg_pool2d", x, x->dtype, 4, shape, 0, &nd);
    if (!o || fe_builder_attr_ints(im->b, nd, "kernel", kernel, 2) || window_attrs(im, nd, &w, max) ||
        (ceil_mode && fe_builder_attr_bool(im->b, nd, "ceil_mode", 1)) ||
        (!max && fe_builder_attr_bool(im->b, nd, "count_include_pad", cip)))
        return im->err->code;
    return FE_OK;
}

/* Reduce over axes[0..n) (normalised) with keepdim; out_k as imp_op1. */
static imp_val *reduce(imp *im, const char *op, imp_val *x, int64_t *axes, int n, int keep, int out_k)
{
    int64_t shape[FE_MAX_RANK];
    int mark[FE_MAX_RANK] = {0}, r = 0;
    for (int i = 0; i < n; i++) {
        if (axes[i] < 0)
            axes[i] += x->rank;
        if (axes[i] < 0 || axes[i] >= x->rank) {
            imp_fail(im, "axis %d is out of range", i);
            return NULL;
        }
        mark[axes[i]] = 1;
    }
    for (int d = 0; d < x->rank; d++)
        if (!mark[d])
            shape[r++] = x->shape[d];
        else if (keep)
            shape[r++] = 1;
    int32_t nd;
    imp_val *o = imp_op1(im, op, x, x->dtype, r, shape, out_k, &nd);
    if (!o || fe_builder_attr_ints(im->b, nd, "axes", axes, n) ||
        (keep && fe_builder_attr_bool(im->b, nd, "keepdim", 1)))
        return NULL;
    return o;
}

static int map_reduce(imp *im, const char *op)
{
    imp_val *x = imp_in(im, 0);
    int64_t axes[FE_MAX_RANK];
    int n = imp_axes(im, 1, axes, FE_MAX_RANK);
    if (im->err->code)
        return im->err->code;
    if (n <= 0) {
        if (imp_attr_int(im->node, "noop_with_empty_axes", 0))
            return imp_alias(im, im->node->output[0], x);
        for (n = 0; n < x->rank; n++)
            axes[n] = n;
    }
    int keep = (int)imp_attr_int(im->node, "keepdims", 1);
    return reduce(im, op, x, axes, n, keep, 0) ? FE_OK : im->err->code;
}

static int map_global_pool(imp *im, const char *op)
{
    imp_val *x = imp_in(im, 0);
    int64_t axes[FE_MAX_RANK];
    int n = 0;
    for (int d = 2; d < x->rank; d++)
        axes[n++] = d;
    return reduce(im, op, x, axes, n, 1, 0) ? FE_OK : im->err->code;
}

static int map_softmax(imp *im, const char *op)
{
    imp_val *x = imp_in(im, 0);
    int64_t axis;
    if (imp_axis(im, "axis", imp_attr_int(im->node, "axis", im->o->opset >= 13 ? -1 : 1), x->rank,
                 0, &axis))
        return im->err->code;
    int32_t nd;
    if (im->o->opset >= 13 || axis == x->rank - 1) {
        imp_val *o = imp_op1(im, op, x, x->dtype, x->rank, x->shape, 0, &nd);
        return o && !fe_builder_attr_int(im->b, nd, "axis", axis) ? FE_OK : im->err->code;
    }
    /* Before opset 13: over all axes from axis on, as a 2-D [outer, inner]. */
    int64_t flat[2];
    if (imp_flatten_shape(im, x, axis, flat))
        return im->err->code;
    imp_val *t = imp_reshape(im, x, 2, flat, -1);
    t = t ? imp_op1(im, op, t, x->dtype, 2, flat, -1, &nd) : NULL;
    return t && imp_reshape(im, t, x->rank, x->shape, 0) ? FE_OK : im->err->code;
}

static int map_matmul(imp *im)
{
    imp_val *a = imp_in(im, 0), *b = imp_in(im, 1);
    imp_val ba = {.rank = a->rank > 2 ? a->rank - 2 : 0}, bb = {.rank = b->rank > 2 ? b->rank - 2 : 0};
    memcpy(ba.shape, a->shape, (size_t)ba.rank * sizeof(int64_t));
    memcpy(bb.shape, b->shape, (size_t)bb.rank * sizeof(int64_t));
    int r;
    int64_t shape[FE_MAX_RANK];
    if (imp_broadcast(im, &ba, &bb, &r, shape))
        return im->err->code;
    if (a->rank >= 2)
        shape[r++] = a->shape[a->rank - 2];
    if (b->rank >= 2)
        shape[r++] = b->shape[b->rank - 1];
    imp_val *o = imp_out(im, 0, a->dtype, r, shape), *in[2] = {a, b};
    return o && imp_emit(im, "matmul", in, 2, o) >= 0 ? FE_OK : im->err->code;
}

static int map_gemm(imp *im)
{
    imp_val *a = imp_in(im, 0), *b = imp_in(im, 1), *c = imp_opt(im, 2);
    int ta = (int)imp_attr_int(im->node, "transA", 0), tb = (int)imp_attr_int(im->node, "transB", 0);
    double alpha = imp_attr_float(im->node, "alpha", 1), beta = imp_attr_float(im->node, "beta", 1);
    if (a->rank != 2 || b->rank != 2)
        return imp_fail(im, "Gemm takes two 2-D inputs");
    int64_t shape[2] = {a->shape[ta ? 1 : 0], b->shape[tb ? 0 : 1]};
    int tail = (alpha != 1) + (c && beta != 0);
    imp_val *o = tail ? imp_tmp(im, a->dtype, 2, shape) : imp_out(im, 0, a->dtype, 2, shape);
    imp_val *in[2] = {a, b};
    int32_t nd = o ? imp_emit(im, "matmul", in, 2, o) : -1;
    if (nd < 0 || (ta && fe_builder_attr_bool(im->b, nd, "transpose_a", 1)) ||
        (tb && fe_builder_attr_bool(im->b, nd, "transpose_b", 1)))
        return im->err->code;
    if (alpha != 1 && !(o = imp_scalar_op(im, "mul", o, alpha, 1, --tail ? -1 : 0)))
        return im->err->code;
    if (!c || beta == 0)
        return FE_OK;
    if (beta != 1 && !(c = imp_scalar_op(im, "mul", c, beta, 1, -1)))
        return im->err->code;
    imp_val *res = imp_out(im, 0, a->dtype, 2, shape), *sum[2] = {o, c};
    int rank;
    int64_t bs[FE_MAX_RANK];
    if (!res || imp_broadcast(im, o, c, &rank, bs))
        return im->err->code;
    return imp_emit(im, "add", sum, 2, res) >= 0 ? FE_OK : im->err->code;
}

static int map_batchnorm(imp *im)
{
    imp_val *in[5];
    for (int k = 0; k < 5; k++)
        in[k] = imp_in(im, k);
    if (imp_attr_int(im->node, "training_mode", 0))
        return imp_custom(im, "training mode");
    int32_t nd;
    imp_val *o = imp_out(im, 0, in[0]->dtype, in[0]->rank, in[0]->shape);
    if (!o || (nd = imp_emit(im, "batch_norm", in, 5, o)) < 0 ||
        fe_builder_attr_float(im->b, nd, "eps", imp_attr_float(im->node, "epsilon", 1e-5)))
        return im->err->code;
    return FE_OK;
}

static int map_layernorm(imp *im)
{
    imp_val *x = imp_in(im, 0), *in[3] = {x, imp_in(im, 1), imp_opt(im, 2)};
    if (im->node->n_output > 1 && (im->node->output[1][0] || (im->node->n_output > 2 &&
                                                              im->node->output[2][0])))
        return imp_custom(im, "the Mean and InvStdDev outputs");
    int64_t axis, ns[FE_MAX_RANK];
    if (imp_axis(im, "axis", imp_attr_int(im->node, "axis", -1), x->rank, 0, &axis))
        return im->err->code;
    int n = 0;
    for (int d = (int)axis; d < x->rank; d++) {
        if (concrete(im, x->shape[d], "a normalized dim"))
            return im->err->code;
        ns[n++] = x->shape[d];
    }
    int nin = in[2] ? 3 : 2;
    imp_val *o = imp_out(im, 0, x->dtype, x->rank, x->shape);
    int32_t nd = o ? imp_emit(im, "layer_norm", in, nin, o) : -1;
    if (nd < 0 || fe_builder_attr_float(im->b, nd, "eps", imp_attr_float(im->node, "epsilon", 1e-5)) ||
        fe_builder_attr_ints(im->b, nd, "normalized_shape", ns, n))
        return im->err->code;
    return FE_OK;
}

/* ---- custom fallback ---- */

/* Sums and products of counts (-1: unknown, taken as 1) that stop at
 * INT64_MAX: a custom node's FLOPs are an estimate. */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t n, int64_t k)
{
    int64_t r;
    return __builtin_mul_overflow(n < 0 ? 1 : n, k, &r) ? INT64_MAX : r;
}

/* Elementwise ONNX ops we have no op for: their output shape is the
 * inputs' broadcast, their dtype bool for comparisons. */
static const char *const elementwise[] = {
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not",
    "Mod", "Floor", "Ceil", "Round", "Sign", "Elu", "Selu", "Softplus", "Softsign", "Tan",
    "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN", "IsInf",
    "PRelu", "ThresholdedRelu", "Celu", "Mish", "BitShift", "Trilu", NULL};

int imp_custom(imp *im, const char *why)
{
    const Onnx__NodeProto *n = im->node;
    int elem = -1;
    for (int i = 0; elementwise[i] && !imp_foreign(n); i++)
        if (!strcmp(elementwise[i], n->op_type))
            elem = i;
    /* the name a kernel is registered under: "Op", or "DOMAIN.Op" */
    char op[2 * FE_MAX_NAME + 2];
    snprintf(op, sizeof op, "%s%s%s", imp_foreign(n) ? n->domain : "", imp_foreign(n) ? "." : "",
             n->op_type);
    /* Names are ids until the builder call (imp_emit says why); the node
     * has at most FE_MAX_IO inputs and outputs (imp_check_node). */
    imp_val **ins = imp_alloc(im, (n->n_input + 1) * sizeof *ins);
    const char **names = imp_alloc(im, (n->n_input + n->n_output + 1) * sizeof *names);
    int nin = 0, nout = 0;
    if (!ins || !names)
        return im->err->code;
    imp_val acc = {0};
    int have = 0;
    int64_t in_bytes = 0;
    for (size_t k = 0; k < n->n_input; k++) {
        imp_val *v = imp_opt(im, (int)k);
        if (!v)
            continue;
        if (have) {
            int r;
            int64_t s[FE_MAX_RANK];
            if (elem >= 0 && !imp_broadcast(im, &acc, v, &r, s)) {
                acc.rank = r;
                memcpy(acc.shape, s, sizeof s);
            }
        } else {
            acc = *v;
            have = 1;
        }
        in_bytes = sat_add(in_bytes, sat_mul(imp_numel(v->shape, v->rank), fe_dtype_size(v->dtype)));
        if (imp_tensor(im, v) < 0)
            return im->err->code;
        ins[nin++] = v;
    }
    if (im->err->code)
        return im->err->code;
    int64_t flops = 0;
    for (size_t k = 0; k < n->n_output; k++) {
        if (!n->output[k][0])
            continue;
        int dtype = have ? acc.dtype : FE_F32, rank = acc.rank, r = 0;
        int64_t shape[FE_MAX_RANK];
        memcpy(shape, acc.shape, sizeof shape);
        int32_t id = fe_strtab_find(im->strs, n->output[k], strlen(n->output[k]));
        char what[FE_MAX_NAME + 32];
        snprintf(what, sizeof what, "the declared type of output '%s'", n->output[k]);
        if (id >= 0 && im->vinfo[id])
            r = imp_declared(im, im->vinfo[id], what, &dtype, &rank, shape);
        if (r < 0 || im->err->code)
            return im->err->code;
        if (r == 0 && (elem < 0 || !have))
            return imp_fail(im, "no mapping to fuseeng's ops%s%s, and the shape of output '%s' is "
                            "unknown, so it cannot be a custom node either; run ONNX shape "
                            "inference first (onnx.shape_inference.infer_shapes)",
                            why ? ": " : "", why ? why : "", n->output[k]);
        if (r == 0 && (elem <= 8 || !strcmp(n->op_type, "IsNaN") || !strcmp(n->op_type, "IsInf")))
            dtype = FE_BOOL;
        imp_val *o = imp_out(im, (int)k, dtype, rank, shape);
        if (!o)
            return im->err->code;
        if (fe_builder_tensor(im->b, n->output[k], dtype, FE_ACTIVATION, rank, shape, 0) < 0)
            return imp_sync(im);
        im->taken[o->name] |= IMP_DECLARED;
        flops = sat_add(flops, sat_mul(imp_numel(shape, rank), elem > 10 ? 4 : 1));
        names[n->n_input + (size_t)nout++] = n->output[k];
    }
    int32_t nm = fresh_node_name(im);
    if (nm < 0)
        return im->err->code;
    for (int k = 0; k < nin; k++)
        names[k] = fe_strtab_str(im->strs, ins[k]->tensor);
    const char *pattern = elem >= 0 ? (nin > 1 ? "broadcast" : "elemwise") : "opaque";
    if (elem < 0)   /* unknown work: a read of every input element, at least */
        flops = in_bytes / 4 > flops ? in_bytes / 4 : flops;
    if (nin < (int)n->n_input)   /* close the gap left by absent inputs */
        memmove(names + nin, names + n->n_input, (size_t)nout * sizeof *names);
    int32_t nd = fe_builder_node(im->b, fe_strtab_str(im->strs, nm), "custom", names, nin,
                                 names + nin, nout, 0);
    im->emitted++;
    im->nnodes++;
    im->ncustom++;
    if (nd < 0 || fe_builder_attr_str(im->b, nd, "pattern", pattern) ||
        fe_builder_attr_int(im->b, nd, "flops", flops) ||
        fe_builder_attr_str(im->b, nd, "onnx_op", op))
        return imp_sync(im);
    if (n->n_attribute) {
        char *js = imp_attrs_json(n);
        if (!js)
            return imp_fail(im, "out of memory");
        int rc = fe_builder_attr_json(im->b, nd, "onnx_attrs", js, strlen(js));
        free(js);
        if (rc)
            return imp_sync(im);
    }
    imp_note(im, "warning: %s: node '%s' (%s): no mapping to fuseeng's ops%s%s; imported as a "
             "custom node (pattern %s, %lld FLOPs estimated); plans treat it as that kind; it runs "
             "only with a kernel registered for '%s' (--kernels; docs/kernels.md)", im->path,
             im->node_name, op, why ? ": " : "", why ? why : "", pattern,
             (long long)flops, op);
    return FE_OK;
}

int imp_map_nn(imp *im)
{
    const char *op = im->node->op_type;
    if (!strcmp(op, "Conv"))
        return map_conv(im);
    if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool"))
        return map_pool(im, op[0] == 'M');
    if (!strcmp(op, "GlobalAveragePool"))
        return map_global_pool(im, "mean");
    if (!strcmp(op, "GlobalMaxPool"))
        return map_global_pool(im, "amax");
    if (!strcmp(op, "ReduceMean"))
        return map_reduce(im, "mean");
    if (!strcmp(op, "ReduceSum"))
        return map_reduce(im, "sum");
    if (!strcmp(op, "ReduceMax"))
        return map_reduce(im, "amax");
    if (!strcmp(op, "ReduceMin"))
        return map_reduce(im, "amin");
    if (!strcmp(op, "Softmax"))
        return map_softmax(im, "softmax");
    if (!strcmp(op, "LogSoftmax"))
        return map_softmax(im, "log_softmax");
    if (!strcmp(op, "MatMul"))
        return map_matmul(im);
    if (!strcmp(op, "Gemm"))
        return map_gemm(im);
    if (!strcmp(op, "BatchNormalization"))
        return map_batchnorm(im);
    if (!strcmp(op, "LayerNormalization"))
        return map_layernorm(im);
    if (!strcmp(op, "TopK"))
        return imp_map_topk(im);
    if (!strcmp(op, "Resize"))
        return imp_map_resize(im);
    return IMP_NO_MAPPING;
}
