/* onnx_map_convnd.c: Conv over 1-D and 3-D inputs and 1-D and 3-D MaxPool /
 * AveragePool, onto the 2-D ops (fuseeng's registry has conv2d and the 2-D
 * pools only).
 *
 * 1-D: [N, C, L] is [N, C, 1, L] and the window 1 x k (reshapes are views).
 * 3-D: time goes into the batch. For each kernel frame k, the input frames
 * that frame reads (a strided slice of time) are convolved in 2-D with the
 * weight's frame k, and the kt results are summed: the same sums as the 3-D
 * convolution in another order. Time padding (and any asymmetric padding)
 * is a pad node first.
 */
#include <string.h>

#include "infer.h"
#include "onnx_map.h"

typedef struct ndwin {
    int n;                                  /* spatial axes: 1 or 3 */
    int64_t k[3], s[3], d[3], pb[3], pe[3];
} ndwin;

static int fixed_dims(imp *im, const imp_val *x, int from, const char *what)
{
    for (int d = from; d < x->rank; d++)
        if (FE_IS_SYM(x->shape[d]))
            return imp_fail(im, "%s needs fixed sizes, but dim %d is symbolic dim '%s' (give it "
                            "a fixed size when exporting)", what, d, imp_dim_name(im, x->shape[d]));
    return FE_OK;
}

/* strides, dilations, pads and auto_pad of an n-D window with kernel k. */
static int ndwin_of(imp *im, const imp_val *x, const int64_t *k, int n, ndwin *w)
{
    int64_t pads[6] = {0};
    char buf[32];
    w->n = n;
    for (int i = 0; i < n; i++)
        w->k[i] = k[i], w->s[i] = 1, w->d[i] = 1;
    int ns = imp_attr_ints(im->node, "strides", w->s, 3);
    int nd = imp_attr_ints(im->node, "dilations", w->d, 3);
    int np = imp_attr_ints(im->node, "pads", pads, 6);
    if ((ns >= 0 && ns != n) || (nd >= 0 && nd != n) || (np >= 0 && np != 2 * n))
        return imp_fail(im, "strides, dilations and pads have %d, %d and %d items; a %d-D window "
                        "takes %d, %d and %d", ns, nd, np, n, n, n, 2 * n);
    const char *auto_pad = imp_attr_str(im->node, "auto_pad", "NOTSET", buf, sizeof buf);
    for (int i = 0; i < n; i++) {
        w->pb[i] = pads[i];
        w->pe[i] = pads[i + n];
        if (imp_window_pads(im, auto_pad, x->shape[2 + i], w->k[i], w->s[i], w->d[i], &w->pb[i],
                            &w->pe[i]))
            return im->err->code;
    }
    return FE_OK;
}

static imp_val *op_ints(imp *im, const char *op, imp_val *x, int rank, const int64_t *shape,
                        const char *key, const int64_t *v, int nv, int out_k)
{
    int32_t nd;
    imp_val *o = imp_op1(im, op, x, x->dtype, rank, shape, out_k, &nd);
    return o && !fe_builder_attr_ints(im->b, nd, key, v, nv) ? o : NULL;
}

/* A pad node for axes 2.. (begin[i], end[i] of spatial axis i), value v. */
static imp_val *pad_axes(imp *im, imp_val *x, const int64_t *pb, const int64_t *pe, int n,
                         double v)
{
    int64_t tp[6], shape[FE_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    for (int i = 0; i < n; i++) {
        tp[2 * (n - 1 - i)] = pb[i];          /* torch order: the last axis first */
        tp[2 * (n - 1 - i) + 1] = pe[i];
        shape[2 + i] += pb[i] + pe[i];
    }
    int32_t nd;
    imp_val *o = imp_op1(im, "pad", x, x->dtype, x->rank, shape, -1, &nd);
    if (!o || fe_builder_attr_ints(im->b, nd, "pads", tp, 2 * n) ||
        (v != 0 && fe_builder_attr_float(im->b, nd, "value", v)))
        return NULL;
    return o;
}

static imp_val *slice1(imp *im, imp_val *x, int axis, int64_t start, int64_t n, int64_t step)
{
    if (start == 0 && step == 1 && n == x->shape[axis])
        return x;
    int64_t shape[FE_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = n;
    int32_t nd;
    imp_val *o = imp_op1(im, "slice", x, x->dtype, x->rank, shape, -1, &nd);
    if (!o || fe_builder_attr_int(im->b, nd, "axis", axis) ||
        fe_builder_attr_int(im->b, nd, "start", start) ||
        fe_builder_attr_int(im->b, nd, "end", start + (n - 1) * step + 1) ||
        fe_builder_attr_int(im->b, nd, "step", step))
        return NULL;
    return o;
}

/* conv2d(x, wt[, bias]) with the window's last two axes' attributes. */
static imp_val *conv2d(imp *im, imp_val *x, imp_val *wt, imp_val *bias, const int64_t *shape,
                       const int64_t *s, const int64_t *p, const int64_t *d, int out_k)
{
    imp_val *o = out_k >= 0 ? imp_out(im, out_k, x->dtype, 4, shape)
                            : imp_tmp(im, x->dtype, 4, shape);
    imp_val *in[3] = {x, wt, bias};
    int32_t nd = o ? imp_emit(im, "conv2d", in, bias ? 3 : 2, o) : -1;
    int64_t g = imp_attr_int(im->node, "group", 1);
    if (nd < 0 || fe_builder_attr_ints(im->b, nd, "stride", s, 2) ||
        fe_builder_attr_ints(im->b, nd, "padding", p, 2) ||
        fe_builder_attr_ints(im->b, nd, "dilation", d, 2) ||
        (g != 1 && fe_builder_attr_int(im->b, nd, "groups", g)))
        return NULL;
    return o;
}

int imp_map_convnd(imp *im)
{
    imp_val *x = imp_in(im, 0), *wt = imp_in(im, 1), *bias = imp_opt(im, 2);
    int n = x->rank - 2;
    ndwin w;
    if (fixed_dims(im, x, n == 1 ? 2 : 0, "a 1-D or 3-D convolution") ||
        fixed_dims(im, wt, 0, "the kernel") || ndwin_of(im, x, &wt->shape[2], n, &w))
        return im->err->code;
    int asym = 0;
    for (int i = 0; i < n; i++)
        asym |= w.pb[i] != w.pe[i];
    int64_t out[5] = {x->shape[0], wt->shape[0]};
    for (int i = 0; i < n; i++) {
        int64_t room = x->shape[2 + i] + w.pb[i] + w.pe[i] - w.d[i] * (w.k[i] - 1) - 1;
        out[2 + i] = room < 0 ? 0 : room / w.s[i] + 1;
        if (out[2 + i] < 1)
            return imp_fail(im, "the window does not fit the input (%lld)",
                            (long long)x->shape[2 + i]);
    }
    if (n == 1) {
        int64_t x4[4] = {x->shape[0], x->shape[1], 1, x->shape[2]};
        int64_t w4[4] = {wt->shape[0], wt->shape[1], 1, wt->shape[2]};
        int64_t o4[4] = {out[0], out[1], 1, out[2]};
        int64_t s[2] = {1, w.s[0]}, p[2] = {0, asym ? 0 : w.pb[0]}, d[2] = {1, w.d[0]};
        if (asym && !(x = pad_axes(im, x, w.pb, w.pe, 1, 0)))
            return im->err->code;
        x4[3] = x->shape[2];
        imp_val *y;
        if (!(x = imp_reshape(im, x, 4, x4, -1)) || !(wt = imp_reshape(im, wt, 4, w4, -1)) ||
            !(y = conv2d(im, x, wt, bias, o4, s, p, d, -1)))
            return im->err->code;
        return imp_reshape(im, y, 3, out, 0) ? FE_OK : im->err->code;
    }
    /* 3-D: time padding, and asymmetric padding of any axis, as a pad node. */
    int64_t pb[3], pe[3];
    for (int i = 0; i < 3; i++) {
        int keep = i > 0 && !asym;   /* left to conv2d's symmetric padding */
        pb[i] = keep ? 0 : w.pb[i];
        pe[i] = keep ? 0 : w.pe[i];
    }
    if ((pb[0] || pe[0] || asym) && !(x = pad_axes(im, x, pb, pe, 3, 0)))
        return im->err->code;
    int64_t perm[5] = {0, 2, 1, 3, 4}, ts[5] = {x->shape[0], x->shape[2], x->shape[1], x->shape[3],
                                                 x->shape[4]};
    if (!(x = op_ints(im, "transpose", x, 5, ts, "perm", perm, 5, -1)))
        return im->err->code;
    int64_t nt = out[0] * out[2];
    int64_t frames[4] = {nt, ts[2], ts[3], ts[4]};
    int64_t w4[4] = {wt->shape[0], wt->shape[1], w.k[1], w.k[2]};
    int64_t y4[4] = {nt, out[1], out[3], out[4]};
    int64_t p[2] = {w.pb[1] - pb[1], w.pb[2] - pb[2]};
    imp_val *acc = NULL;
    for (int64_t k = 0; k < w.k[0]; k++) {
        imp_val *xs = slice1(im, x, 1, k * w.d[0], out[2], w.s[0]), *wk, *y;
        if (!xs || !(xs = imp_reshape(im, xs, 4, frames, -1)) ||
            !(wk = slice1(im, wt, 2, k, 1, 1)) || !(wk = imp_reshape(im, wk, 4, w4, -1)) ||
            !(y = conv2d(im, xs, wk, k ? NULL : bias, y4, &w.s[1], p, &w.d[1], -1)))
            return im->err->code;
        if (acc) {
            imp_val *sum = imp_tmp(im, x->dtype, 4, y4), *in[2] = {acc, y};
            if (!sum || imp_emit(im, "add", in, 2, sum) < 0)
                return im->err->code;
            y = sum;
        }
        acc = y;
    }
    int64_t u[5] = {out[0], out[2], out[1], out[3], out[4]};
    if (!(acc = imp_reshape(im, acc, 5, u, -1)))
        return im->err->code;
    return op_ints(im, "transpose", acc, 5, out, "perm", perm, 5, 0) ? FE_OK : im->err->code;
}

int imp_map_pool1d(imp *im, int max)
{
    imp_val *x = imp_in(im, 0);
    int64_t k;
    ndwin w;
    if (imp_attr_ints(im->node, "kernel_shape", &k, 1) != 1)
        return imp_fail(im, "kernel_shape must have 1 item for a 1-D input");
    if (im->node->n_output > 1 && im->node->output[1][0])
        return imp_custom(im, "the Indices output");
    if (fixed_dims(im, x, 2, "1-D pooling") || ndwin_of(im, x, &k, 1, &w))
        return im->err->code;
    int cip = (int)imp_attr_int(im->node, "count_include_pad", 0);
    int ceil_mode = (int)imp_attr_int(im->node, "ceil_mode", 0);
    if (w.pb[0] != w.pe[0]) {
        if (!max && !cip)
            return imp_custom(im, "asymmetric pads that are not counted");
        if (!(x = pad_axes(im, x, w.pb, w.pe, 1, max ? -3.4028234663852886e38 : 0)))
            return im->err->code;
        w.pb[0] = w.pe[0] = 0;
    }
    int64_t lo = fe_window_out(x->shape[2], k, w.s[0], w.pb[0], w.d[0], ceil_mode);
    if (lo < 1)
        return imp_fail(im, "the window does not fit the input (%lld)", (long long)x->shape[2]);
    int64_t x4[4] = {x->shape[0], x->shape[1], 1, x->shape[2]}, o4[4] = {x4[0], x4[1], 1, lo};
    int64_t kk[2] = {1, k}, s[2] = {1, w.s[0]}, p[2] = {0, w.pb[0]}, d[2] = {1, w.d[0]};
    int32_t nd;
    imp_val *y;
    if (!(x = imp_reshape(im, x, 4, x4, -1)) ||
        !(y = imp_op1(im, max ? "max_pool2d" : "avg_pool2d", x, x->dtype, 4, o4, -1, &nd)) ||
        fe_builder_attr_ints(im->b, nd, "kernel", kk, 2) ||
        fe_builder_attr_ints(im->b, nd, "stride", s, 2) ||
        fe_builder_attr_ints(im->b, nd, "padding", p, 2) ||
        (max && fe_builder_attr_ints(im->b, nd, "dilation", d, 2)) ||
        (ceil_mode && fe_builder_attr_bool(im->b, nd, "ceil_mode", 1)) ||
        (!max && fe_builder_attr_bool(im->b, nd, "count_include_pad", cip)))
        return im->err->code;
    int64_t o3[3] = {o4[0], o4[1], lo};
    return imp_reshape(im, y, 3, o3, 0) ? FE_OK : im->err->code;
}

/* One 2-D pool over the last two axes of the 4-D x (kernel, stride, padding,
 * dilation as pairs) into shape o4. */
static imp_val *pool2d(imp *im, imp_val *x, int max, const int64_t *k, const int64_t *s,
                       const int64_t *p, const int64_t *d, int ceil_mode, int cip,
                       const int64_t *o4)
{
    int32_t nd;
    imp_val *y = imp_op1(im, max ? "max_pool2d" : "avg_pool2d", x, x->dtype, 4, o4, -1, &nd);
    if (!y || fe_builder_attr_ints(im->b, nd, "kernel", k, 2) ||
        fe_builder_attr_ints(im->b, nd, "stride", s, 2) ||
        fe_builder_attr_ints(im->b, nd, "padding", p, 2) ||
        (max && fe_builder_attr_ints(im->b, nd, "dilation", d, 2)) ||
        (ceil_mode && fe_builder_attr_bool(im->b, nd, "ceil_mode", 1)) ||
        (!max && fe_builder_attr_bool(im->b, nd, "count_include_pad", cip)))
        return NULL;
    return y;
}

/* 3-D MaxPool / AveragePool, separably: the 2-D pool over (H, W) with the
 * frames in the channels ([N, C*T, H, W]), then a k x 1 pool over time on
 * [N, C, T, Ho*Wo]. Max of maxes is the max of the box; for the average,
 * the count of a box (padding counted or not, ceil_mode's clipped windows)
 * is the product of its per-axis counts, so the mean of means is the mean. */
int imp_map_pool3d(imp *im, int max)
{
    imp_val *x = imp_in(im, 0);
    int64_t k[3];
    ndwin w;
    if (imp_attr_ints(im->node, "kernel_shape", k, 3) != 3)
        return imp_fail(im, "kernel_shape must have 3 items for a 3-D input");
    if (im->node->n_output > 1 && im->node->output[1][0])
        return imp_custom(im, "the Indices output");
    if (fixed_dims(im, x, 0, "3-D pooling") || ndwin_of(im, x, k, 3, &w))
        return im->err->code;
    int cip = (int)imp_attr_int(im->node, "count_include_pad", 0);
    int ceil_mode = (int)imp_attr_int(im->node, "ceil_mode", 0);
    int asym = 0;
    for (int i = 0; i < 3; i++)
        asym |= w.pb[i] != w.pe[i];
    if (asym) {
        if (!max && !cip)
            return imp_fail(im, "asymmetric pads that are not counted in the average cannot be "
                            "written exactly as pools (export with symmetric padding)");
        if (!(x = pad_axes(im, x, w.pb, w.pe, 3, max ? -3.4028234663852886e38 : 0)))
            return im->err->code;
        for (int i = 0; i < 3; i++)
            w.pb[i] = w.pe[i] = 0;
    }
    int64_t out[5] = {x->shape[0], x->shape[1]};
    for (int i = 0; i < 3; i++) {
        if (2 * w.pb[i] > w.k[i])
            return imp_fail(im, "pads %lld exceed half the kernel (%lld) on spatial axis %d; "
                            "pooling takes at most half", (long long)w.pb[i], (long long)w.k[i], i);
        out[2 + i] = fe_window_out(x->shape[2 + i], w.k[i], w.s[i], w.pb[i], w.d[i], ceil_mode);
        if (out[2 + i] < 1)
            return imp_fail(im, "the window does not fit the input (%lld)",
                            (long long)x->shape[2 + i]);
    }
    int64_t n = x->shape[0], c = x->shape[1], t = x->shape[2];
    int64_t x4[4] = {n, c * t, x->shape[3], x->shape[4]}, h4[4] = {n, c * t, out[3], out[4]};
    int64_t t4[4] = {n, c, t, out[3] * out[4]}, o4[4] = {n, c, out[2], out[3] * out[4]};
    int64_t kt[2] = {w.k[0], 1}, st[2] = {w.s[0], 1}, pt[2] = {w.pb[0], 0}, dt[2] = {w.d[0], 1};
    imp_val *y;
    if (!(y = imp_reshape(im, x, 4, x4, -1)) ||
        !(y = pool2d(im, y, max, &w.k[1], &w.s[1], &w.pb[1], &w.d[1], ceil_mode, cip, h4)) ||
        !(y = imp_reshape(im, y, 4, t4, -1)) ||
        !(y = pool2d(im, y, max, kt, st, pt, dt, ceil_mode, cip, o4)))
        return im->err->code;
    return imp_reshape(im, y, 5, out, 0) ? FE_OK : im->err->code;
}
