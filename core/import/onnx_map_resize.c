/* onnx_map_resize.c: ONNX Resize (nearest, linear, cubic) onto matmuls by
 * constant resampling matrices, one per resized axis, the last two at most:
 * x @ A^T (transpose_b) for the last, A @ x for the one before. fuseeng has
 * no resize op; a matmul by the matrix computes the same sums (each output
 * element is at most four weighted inputs plus zeros), and every policy fuses
 * it as the matmul it is. Coordinates, nearest rounding and the cubic
 * taps (cubic_coeff_a, exclude_outside, indices clamped to the edge: the
 * reference pads with edge values, as PyTorch clamps) follow the ONNX
 * operator specification; tf_crop_and_resize, antialias and resizing any
 * other axis are refused, naming the node.
 */
#include <math.h>
#include <string.h>

#include "onnx_map.h"

/* The source coordinate of output index i along an axis (ONNX's
 * coordinate_transformation_mode; scale is output / input). */
static double source(const char *ctm, int64_t i, int64_t in, int64_t out, double scale)
{
    if (!strcmp(ctm, "align_corners"))
        return out == 1 ? 0 : (double)i * (double)(in - 1) / (double)(out - 1);
    if (!strcmp(ctm, "asymmetric"))
        return (double)i / scale;
    if (!strcmp(ctm, "pytorch_half_pixel") && out == 1)
        return 0;
    return ((double)i + 0.5) / scale - 0.5;   /* half_pixel, pytorch_half_pixel */
}

static double nearest(const char *mode, double x)
{
    if (!strcmp(mode, "floor"))
        return floor(x);
    if (!strcmp(mode, "ceil"))
        return ceil(x);
    if (!strcmp(mode, "round_prefer_ceil"))
        return floor(x + 0.5);
    return x - floor(x) == 0.5 ? floor(x) : floor(x + 0.5);   /* round_prefer_floor */
}

/* The cubic convolution weights of taps floor(x) - 1 .. floor(x) + 2 at
 * t = x - floor(x), coefficient a (Keys). */
static void cubic(double t, double a, double *w)
{
    const double d[4] = {t + 1, t, 1 - t, 2 - t};
    for (int j = 0; j < 4; j++)
        w[j] = d[j] <= 1 ? ((a + 2) * d[j] - (a + 3)) * d[j] * d[j] + 1
                         : ((a * d[j] - 5 * a) * d[j] + 8 * a) * d[j] - 4 * a;
}

typedef struct resize_mode {
    int kind;              /* 0 nearest, 1 linear, 2 cubic */
    const char *ctm, *nm;  /* coordinate_transformation_mode, nearest_mode */
    double a;              /* cubic_coeff_a */
    int exclude;           /* exclude_outside */
} resize_mode;

/* The [out, in] resampling matrix of one axis as a new constant, or NULL. */
static imp_val *matrix(imp *im, int dtype, const resize_mode *m, int64_t in, int64_t out,
                       double scale)
{
    const char *ctm = m->ctm, *nm = m->nm;
    int linear = m->kind == 1;
    int64_t shape[2] = {out, in};
    imp_val *a = imp_const_tmp(im, dtype, 2, shape);
    if (!a)
        return NULL;
    for (int64_t i = 0; i < out; i++) {
        double x = source(ctm, i, in, out, scale);
        if (m->kind == 2) {
            double w[4], sum = 0, f = floor(x);
            cubic(x - f, m->a, w);
            for (int j = 0; j < 4; j++) {
                int64_t k = (int64_t)f - 1 + j;
                if (m->exclude && (k < 0 || k >= in))
                    w[j] = 0;
                sum += w[j];
            }
            for (int j = 0; j < 4; j++) {
                int64_t k = (int64_t)f - 1 + j;
                k = k < 0 ? 0 : k >= in ? in - 1 : k;
                a->fv[i * in + k] += m->exclude ? w[j] / sum : w[j];
            }
            continue;
        }
        if (!linear) {
            double j = nearest(nm, x);
            a->fv[i * in + (int64_t)(j < 0 ? 0 : j > (double)(in - 1) ? (double)(in - 1) : j)] = 1;
            continue;
        }
        x = x < 0 ? 0 : x > (double)(in - 1) ? (double)(in - 1) : x;
        int64_t i0 = (int64_t)floor(x), i1 = i0 + 1 < in ? i0 + 1 : in - 1;
        a->fv[i * in + i0] += 1 - (x - (double)i0);
        a->fv[i * in + i1] += x - (double)i0;
    }
    return a;
}

int imp_map_resize(imp *im)
{
    const Onnx__NodeProto *n = im->node;
    imp_val *x = imp_in(im, 0);
    char mbuf[32], cbuf[32], nbuf[32];
    const char *mode = imp_attr_str(n, "mode", "nearest", mbuf, sizeof mbuf);
    const char *ctm = imp_attr_str(n, "coordinate_transformation_mode", "half_pixel", cbuf,
                                   sizeof cbuf);
    const char *nm = imp_attr_str(n, "nearest_mode", "round_prefer_floor", nbuf, sizeof nbuf);
    resize_mode rm = {!strcmp(mode, "linear") ? 1 : !strcmp(mode, "cubic") ? 2 : 0, ctm, nm,
                      imp_attr_float(n, "cubic_coeff_a", -0.75),
                      (int)imp_attr_int(n, "exclude_outside", 0)};
    if (!rm.kind && strcmp(mode, "nearest"))
        return imp_fail(im, "mode '%s' is not one ONNX defines (nearest, linear and cubic)", mode);
    if (!isfinite(rm.a))
        return imp_fail(im, "cubic_coeff_a is %g; it must be a finite number", rm.a);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "pytorch_half_pixel") &&
        strcmp(ctm, "align_corners") && strcmp(ctm, "asymmetric"))
        return imp_fail(im, "coordinate_transformation_mode '%s' is not supported (half_pixel, "
                        "pytorch_half_pixel, align_corners and asymmetric are)", ctm);
    if (!rm.kind && strcmp(nm, "floor") && strcmp(nm, "ceil") && strcmp(nm, "round_prefer_floor") &&
        strcmp(nm, "round_prefer_ceil"))
        return imp_fail(im, "nearest_mode '%s' is not one ONNX defines", nm);
    if (x->dtype != FE_F32 && x->dtype != FE_F16 && x->dtype != FE_BF16)
        return imp_fail(im, "resizes a %s tensor; only floating-point ones are supported",
                        fe_dtype_name(x->dtype));
    if (imp_attr_int(n, "antialias", 0))
        return imp_fail(im, "antialias is not supported");
    if (imp_attr(n, "axes"))
        return imp_fail(im, "attribute 'axes' is not supported (give scales or sizes for every "
                        "axis)");
    /* Opset 10: X, scales; from 11: X, roi, scales, sizes (an empty one is absent). */
    imp_val *scales = imp_opt(im, n->n_input == 2 ? 1 : 2), *sizes = imp_opt(im, 3);
    scales = scales && scales->is_const && scales->numel == 0 ? NULL : scales;
    sizes = sizes && sizes->is_const && sizes->numel == 0 ? NULL : sizes;
    int64_t sz[FE_MAX_RANK], shape[FE_MAX_RANK];
    double sc[FE_MAX_RANK];
    if (sizes) {
        if (imp_const_ints(sizes, sz, FE_MAX_RANK) != x->rank)
            return imp_fail(im, "sizes must be a constant of %d integers (one per axis)", x->rank);
    } else if (scales) {
        if (!scales->is_const || !scales->fv || scales->numel != x->rank)
            return imp_fail(im, "scales must be a constant of %d floats (one per axis)", x->rank);
    } else {
        return imp_fail(im, "has neither scales nor sizes (not a valid ONNX model: re-export it)");
    }
    for (int d = 0; d < x->rank; d++) {
        if (sizes) {
            sc[d] = FE_IS_SYM(x->shape[d]) ? 1 : (double)sz[d] / (double)x->shape[d];
        } else {
            sc[d] = scales->fv[scales->numel == x->rank ? d : 0];
            if (!(sc[d] > 0) || !isfinite(sc[d]))
                return imp_fail(im, "scale %d is %g; scales must be positive", d, sc[d]);
            sz[d] = FE_IS_SYM(x->shape[d]) ? x->shape[d]
                                           : (int64_t)floor((double)x->shape[d] * sc[d]);
        }
        shape[d] = sz[d];
        int resized = FE_IS_SYM(x->shape[d]) ? sc[d] != 1 : sz[d] != x->shape[d] || sc[d] != 1;
        if (resized && (FE_IS_SYM(x->shape[d]) || d < x->rank - 2))
            return imp_fail(im, "resizes axis %d of a rank-%d input; only the last two axes "
                            "(at fixed sizes) can be resized", d, x->rank);
        if (sz[d] < 1 || sz[d] > IMP_DIM_MAX)
            return imp_fail(im, "output size %lld of axis %d is out of range", (long long)sz[d], d);
    }
    /* The last axis first, then the one before; an axis left as it is is skipped. */
    imp_val *cur = x;
    int64_t cs[FE_MAX_RANK];
    memcpy(cs, x->shape, sizeof cs);
    int todo[2], nt = 0;
    for (int d = x->rank - 1; d >= x->rank - 2 && d >= 0; d--)
        if (!FE_IS_SYM(x->shape[d]) && (sz[d] != x->shape[d] || sc[d] != 1))
            todo[nt++] = d;
    if (!nt)
        return imp_alias(im, n->output[0], x);
    for (int k = 0; k < nt; k++) {
        int d = todo[k];
        imp_val *a = matrix(im, x->dtype, &rm, x->shape[d], sz[d], sc[d]);
        cs[d] = sz[d];
        imp_val *o = !a ? NULL : k + 1 == nt ? imp_out(im, 0, x->dtype, x->rank, shape)
                                             : imp_tmp(im, x->dtype, x->rank, cs);
        int last = d == x->rank - 1;
        imp_val *in[2] = {last ? cur : a, last ? a : cur};
        int32_t nd = o ? imp_emit(im, "matmul", in, 2, o) : -1;
        if (nd < 0 || (last && fe_builder_attr_bool(im->b, nd, "transpose_b", 1)))
            return imp_sync(im) ? im->err->code : FE_EINPUT;
        cur = o;
    }
    return FE_OK;
}
