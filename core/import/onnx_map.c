/* onnx_map.c: ONNX operators onto our op set (docs/import.md has the table).
 *
 * Each mapping reads the node being mapped (im->node), emits one or more of
 * our nodes and tracks their output shapes; the builder's inference then
 * checks them with the registry's rules. Constants read as attributes
 * (shapes, axes, scalars) stay out of the graph. An operator without a
 * mapping becomes a `custom` node with a warning (custom_node), never a
 * silent drop. The neural-network ops (Conv, Gemm, pooling, norms) are in
 * onnx_map_nn.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx_map.h"

/* A decoded constant of one element: its value. */
int imp_scalar(const imp_val *v, double *out)
{
    if (!v || !v->is_const || v->numel != 1 || (!v->iv && !v->fv))
        return 0;
    if (v->iv && FE_IS_SYM(v->iv[0]))
        return 0;
    *out = imp_cf(v, 0);
    return 1;
}

imp_val *imp_op1(imp *im, const char *op, imp_val *x, int dtype, int rank, const int64_t *shape,
                 int out_k, int32_t *node)
{
    imp_val *o = out_k >= 0 ? imp_out(im, out_k, dtype, rank, shape) : imp_tmp(im, dtype, rank, shape);
    if (!o)
        return NULL;
    *node = imp_emit(im, op, &x, 1, o);
    return *node < 0 ? NULL : o;
}

static int is_float(int dtype)
{
    return dtype == FE_F32 || dtype == FE_F16 || dtype == FE_BF16;
}

/* x op s (or s op x with index 0); exact, if not NULL, is s as an integer
 * constant holds it (beyond 2^53 a double would round it). */
static imp_val *scalar_node(imp *im, const char *op, imp_val *x, double s, const int64_t *exact,
                            int index, int out_k)
{
    int32_t nd;
    if (isnan(s)) {
        /* A model file has no NaN (JSON): the attribute would read back as unset. */
        imp_fail(im, "a constant operand of %s is NaN, which fuseeng's scalar attribute cannot "
                 "hold", op);
        return NULL;
    }
    imp_val *o = imp_op1(im, op, x, x->dtype, x->rank, x->shape, out_k, &nd);
    if (!o)
        return NULL;
    int isint = !is_float(x->dtype);
    if (isint && exact ? fe_builder_attr_int(im->b, nd, "scalar", *exact)
        : isint && s == floor(s) && fabs(s) < 9e15 ? fe_builder_attr_int(im->b, nd, "scalar", (int64_t)s)
        : fe_builder_attr_float(im->b, nd, "scalar", s))
        return NULL;
    if (index != 1 && fe_builder_attr_int(im->b, nd, "scalar_index", index))
        return NULL;
    return o;
}

imp_val *imp_scalar_op(imp *im, const char *op, imp_val *x, double s, int index, int out_k)
{
    return scalar_node(im, op, x, s, NULL, index, out_k);
}

imp_val *imp_reshape(imp *im, imp_val *x, int rank, const int64_t *shape, int out_k)
{
    int32_t nd;
    imp_val *o = imp_op1(im, "reshape", x, x->dtype, rank, shape, out_k, &nd);
    if (!o || fe_builder_attr_ints(im->b, nd, "shape", shape, rank))
        return NULL;
    return o;
}

/* ---- elementwise ---- */

static int unary(imp *im, const char *op)
{
    imp_val *x = imp_in(im, 0);
    int32_t nd;
    return imp_op1(im, op, x, x->dtype, x->rank, x->shape, 0, &nd) ? FE_OK : im->err->code;
}

/* a op b, with a one-element constant side as the `scalar` attribute. */
static imp_val *binary2(imp *im, const char *op, imp_val *a, imp_val *b, int out_k)
{
    double s;
    if (imp_scalar(b, &s) && b->rank <= a->rank && !a->is_const)
        return scalar_node(im, op, a, s, b->iv, 1, out_k);
    if (imp_scalar(a, &s) && a->rank <= b->rank && !b->is_const)
        return scalar_node(im, op, b, s, a->iv, 0, out_k);
    int rank;
    int64_t shape[FE_MAX_RANK];
    if (imp_broadcast(im, a, b, &rank, shape))
        return NULL;
    imp_val *o = out_k >= 0 ? imp_out(im, out_k, a->dtype, rank, shape)
                            : imp_tmp(im, a->dtype, rank, shape);
    imp_val *in[2] = {a, b};
    return o && imp_emit(im, op, in, 2, o) >= 0 ? o : NULL;
}

static int binary(imp *im, const char *op)
{
    return binary2(im, op, imp_in(im, 0), imp_in(im, 1), 0) ? FE_OK : im->err->code;
}

/* Max, Min, Sum, Mean of any number of inputs: a chain. */
static int variadic(imp *im, const char *op)
{
    int n = (int)im->node->n_input;
    imp_val *acc = imp_in(im, 0);
    if (n == 1)
        return imp_alias(im, im->node->output[0], acc);
    for (int k = 1; k < n && acc; k++)
        acc = binary2(im, op, acc, imp_in(im, k), k == n - 1 ? 0 : -1);
    return acc ? FE_OK : im->err->code;
}

static int map_mean(imp *im)
{
    int n = (int)im->node->n_input;
    imp_val *acc = imp_in(im, 0);
    for (int k = 1; k < n && acc; k++)
        acc = binary2(im, "add", acc, imp_in(im, k), -1);
    return acc && imp_scalar_op(im, "div", acc, n, 1, 0) ? FE_OK : im->err->code;
}

static int map_where(imp *im)
{
    imp_val *c = imp_in(im, 0), *a = imp_in(im, 1), *b = imp_in(im, 2);
    double s;
    int rank, r2;
    int64_t shape[FE_MAX_RANK], s2[FE_MAX_RANK];
    if (imp_broadcast(im, c, a, &rank, shape))
        return im->err->code;
    imp_val tmp = {.rank = rank};
    memcpy(tmp.shape, shape, sizeof shape);
    if (imp_broadcast(im, &tmp, b, &r2, s2))
        return im->err->code;
    int k = imp_scalar(b, &s) && !a->is_const ? 2 : imp_scalar(a, &s) && !b->is_const ? 1 : 0;
    if (k && isnan(s))
        return imp_fail(im, "a constant branch is NaN, which fuseeng's scalar attribute cannot "
                        "hold");
    imp_val *o = imp_out(im, 0, k == 1 ? b->dtype : a->dtype, r2, s2);
    if (!o)
        return im->err->code;
    imp_val *in[3] = {c, k == 1 ? b : a, b};
    int32_t nd = imp_emit(im, "where", in, k ? 2 : 3, o);
    if (nd < 0 || (k && fe_builder_attr_float(im->b, nd, "scalar", s)) ||
        (k == 1 && fe_builder_attr_int(im->b, nd, "scalar_index", 1)))
        return im->err->code;
    return FE_OK;
}

static int map_cast(imp *im)
{
    imp_val *x = imp_in(im, 0);
    int64_t to = imp_attr_int(im->node, "to", 0);
    int dt = to == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? FE_F32 : fe_onnx_dtype((int)to);
    if (dt < 0)
        return imp_fail(im, "cast to %s is not supported (f32, f16, bf16, i64, i32, i8, bool)",
                        fe_onnx_dtype_name((int)to));
    if (dt == x->dtype)
        return imp_alias(im, im->node->output[0], x);
    int32_t nd;
    imp_val *o = imp_op1(im, "cast", x, dt, x->rank, x->shape, 0, &nd);
    return o && !fe_builder_attr_str(im->b, nd, "dtype", fe_dtype_name(dt)) ? FE_OK : im->err->code;
}

static int map_hardsigmoid(imp *im)
{
    imp_val *x = imp_in(im, 0);
    double a = imp_attr_float(im->node, "alpha", 0.2), b = imp_attr_float(im->node, "beta", 0.5);
    if (fabs(a - 1.0 / 6) < 1e-6 && fabs(b - 0.5) < 1e-6)
        return unary(im, "hardsigmoid");
    imp_val *t = imp_scalar_op(im, "mul", x, a, 1, -1);
    t = t ? imp_scalar_op(im, "add", t, b, 1, -1) : NULL;
    t = t ? imp_scalar_op(im, "maximum", t, 0, 1, -1) : NULL;
    return t && imp_scalar_op(im, "minimum", t, 1, 1, 0) ? FE_OK : im->err->code;
}

static int map_leakyrelu(imp *im)
{
    imp_val *x = imp_in(im, 0);
    double a = imp_attr_float(im->node, "alpha", 0.01);
    imp_val *pos = imp_scalar_op(im, "maximum", x, 0, 1, -1);
    imp_val *neg = pos ? imp_scalar_op(im, "minimum", x, 0, 1, -1) : NULL;
    neg = neg ? imp_scalar_op(im, "mul", neg, a, 1, -1) : NULL;
    return neg && binary2(im, "add", pos, neg, 0) ? FE_OK : im->err->code;
}

static int map_clip(imp *im)
{
    imp_val *x = imp_in(im, 0), *lo = imp_opt(im, 1), *hi = imp_opt(im, 2);
    double l = -INFINITY, h = INFINITY;
    if (imp_attr(im->node, "min") || imp_attr(im->node, "max")) {
        l = imp_attr_float(im->node, "min", -INFINITY);
        h = imp_attr_float(im->node, "max", INFINITY);
    } else if ((lo && !imp_scalar(lo, &l)) || (hi && !imp_scalar(hi, &h))) {
        return imp_fail(im, "min and max must be constants");
    }
    if (isnan(l) || isnan(h))
        return imp_fail(im, "min or max is NaN");
    if (isinf(l) && isinf(h))
        return imp_alias(im, im->node->output[0], x);
    imp_val *t = x;
    if (!isinf(l) && !(t = imp_scalar_op(im, "maximum", t, l, 1, isinf(h) ? 0 : -1)))
        return im->err->code;
    if (!isinf(h) && !imp_scalar_op(im, "minimum", t, h, 1, 0))
        return im->err->code;
    return FE_OK;
}

/* ---- shapes ---- */

static int map_reshape(imp *im)
{
    imp_val *x = imp_in(im, 0);
    int64_t spec[FE_MAX_RANK], shape[FE_MAX_RANK];
    int n = imp_const_ints(imp_in(im, 1), spec, FE_MAX_RANK);
    if (n < 0)
        return imp_fail(im, "the target shape must be a constant (or fold to one); run "
                        "onnx-simplifier or export with fixed shapes");
    if (imp_reshape_shape(im, x, spec, n, (int)imp_attr_int(im->node, "allowzero", 0), shape))
        return im->err->code;
    return imp_reshape(im, x, n, shape, 0) ? FE_OK : im->err->code;
}

static int map_squeeze(imp *im, int un)
{
    imp_val *x = imp_in(im, 0);
    int64_t axes[FE_MAX_RANK], shape[FE_MAX_RANK];
    int na = imp_axes(im, 1, axes, FE_MAX_RANK);
    if (im->err->code)
        return im->err->code;
    int r = un ? imp_unsqueeze_shape(im, x, axes, na < 0 ? 0 : na, shape)
               : imp_squeeze_shape(im, x, axes, na, shape);
    if (r < 0)
        return im->err->code;
    return imp_reshape(im, x, r, shape, 0) ? FE_OK : im->err->code;
}

static int map_flatten(imp *im)
{
    imp_val *x = imp_in(im, 0);
    int64_t shape[2];
    if (imp_flatten_shape(im, x, imp_attr_int(im->node, "axis", 1), shape))
        return im->err->code;
    return imp_reshape(im, x, 2, shape, 0) ? FE_OK : im->err->code;
}

static int map_transpose(imp *im)
{
    imp_val *x = imp_in(im, 0);
    int64_t perm[FE_MAX_RANK], shape[FE_MAX_RANK];
    if (imp_perm(im, x->rank, perm))
        return im->err->code;
    for (int d = 0; d < x->rank; d++)
        shape[d] = x->shape[perm[d]];
    int32_t nd;
    imp_val *o = imp_op1(im, "transpose", x, x->dtype, x->rank, shape, 0, &nd);
    return o && !fe_builder_attr_ints(im->b, nd, "perm", perm, x->rank) ? FE_OK : im->err->code;
}

static int map_concat(imp *im)
{
    int n = (int)im->node->n_input;   /* any number, up to FE_MAX_IO */
    imp_val **in = imp_alloc(im, (size_t)n * sizeof *in);
    int64_t axis, shape[FE_MAX_RANK];
    if (!in)
        return im->err->code;
    for (int k = 0; k < n; k++)
        in[k] = imp_in(im, k);
    int r = in[0]->rank;
    if (imp_axis(im, "axis", imp_attr_int(im->node, "axis", 0), r, 0, &axis))
        return im->err->code;
    memcpy(shape, in[0]->shape, sizeof shape);
    for (int k = 1; k < n; k++) {
        if (in[k]->rank != r)
            return imp_fail(im, "input %d has rank %d, input 0 rank %d; Concat takes inputs of "
                            "one rank", k, in[k]->rank, r);
        if (FE_IS_SYM(shape[axis]) || FE_IS_SYM(in[k]->shape[axis]))
            return imp_fail(im, "concatenates along a symbolic dim");
        shape[axis] += in[k]->shape[axis];   /* each at most IMP_DIM_MAX: no overflow */
    }
    imp_val *o = imp_out(im, 0, in[0]->dtype, r, shape);
    int32_t nd = o ? imp_emit(im, "concat", in, n, o) : -1;
    return nd >= 0 && !fe_builder_attr_int(im->b, nd, "axis", axis) ? FE_OK : im->err->code;
}

/* One slice node along axis; out_k as imp_op1. */
static imp_val *slice1(imp *im, imp_val *x, int axis, int64_t start, int64_t size, int64_t step,
                       int out_k)
{
    int64_t shape[FE_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = size;
    int32_t nd;
    /* size a dim name: the first S (start 0, step 1), S kept as the end */
    int64_t end = FE_IS_SYM(size) ? size : start + (size - 1) * step + 1;
    imp_val *o = imp_op1(im, "slice", x, x->dtype, x->rank, shape, out_k, &nd);
    if (!o || fe_builder_attr_int(im->b, nd, "axis", axis) ||
        fe_builder_attr_int(im->b, nd, "start", start) ||
        fe_builder_attr_ints(im->b, nd, "end", &end, 1) ||
        (step != 1 && fe_builder_attr_int(im->b, nd, "step", step)))
        return NULL;
    return o;
}

/* A slice with a negative step (a flip, x[::-2]): the registry's slice steps
 * forward only, so a gather of the constant indices start, start + step, ... */
static imp_val *slice_back(imp *im, imp_val *x, int axis, int64_t start, int64_t size,
                           int64_t step, int out_k)
{
    int64_t shape[FE_MAX_RANK];
    memcpy(shape, x->shape, sizeof shape);
    shape[axis] = size;
    imp_val *idx = imp_const_tmp(im, FE_I64, 1, &size);
    if (!idx)
        return NULL;
    for (int64_t k = 0; k < size; k++)
        idx->iv[k] = start + k * step;
    imp_val *o = out_k >= 0 ? imp_out(im, out_k, x->dtype, x->rank, shape)
                            : imp_tmp(im, x->dtype, x->rank, shape), *in[2] = {x, idx};
    int32_t nd = o ? imp_emit(im, "gather", in, 2, o) : -1;
    return nd >= 0 && !fe_builder_attr_int(im->b, nd, "axis", axis) ? o : NULL;
}

static int map_slice(imp *im)
{
    imp_val *x = imp_in(im, 0);
    int64_t axes[FE_MAX_RANK], st[FE_MAX_RANK], en[FE_MAX_RANK], sp[FE_MAX_RANK];
    int n = imp_slice_args(im, x, axes, st, en, sp);
    if (n < 0 || im->err->code)
        return im->err->code;
    int last = -1;
    int64_t sizes[FE_MAX_RANK];
    for (int i = 0; i < n; i++) {
        if (FE_IS_SYM(st[i]))   /* x[S:]: no dim name says its size */
            st[i] = imp_dim_value(im, st[i]);
        if (FE_IS_SYM(en[i]) && !FE_IS_SYM(x->shape[axes[i]]) && st[i] == 0 && sp[i] == 1) {
            sizes[i] = en[i];   /* x[:S] of a table: the slice keeps S */
            last = i;
            continue;
        }
        if (imp_slice_axis(im, x->shape[axes[i]], &st[i], en[i], sp[i], &sizes[i]))
            return im->err->code;
        if (!(st[i] == 0 && sp[i] == 1 && sizes[i] == x->shape[axes[i]]))
            last = i;
    }
    if (last < 0)
        return imp_alias(im, im->node->output[0], x);
    imp_val *t = x;
    for (int i = 0; i <= last && t; i++)
        if (!(st[i] == 0 && sp[i] == 1 && sizes[i] == x->shape[axes[i]]))
            t = (sp[i] < 0 ? slice_back : slice1)(im, t, (int)axes[i], st[i], sizes[i], sp[i],
                                                  i == last ? 0 : -1);
    return t ? FE_OK : im->err->code;
}

static int map_split(imp *im)
{
    imp_val *x = imp_in(im, 0), *given = imp_opt(im, 1);
    int n = (int)im->node->n_output;   /* any number, up to FE_MAX_IO */
    int64_t axis, *sizes = imp_alloc(im, (size_t)n * sizeof *sizes);
    if (!sizes || imp_axis(im, "axis", imp_attr_int(im->node, "axis", 0), x->rank, 0, &axis))
        return im->err->code;
    int64_t dim = x->shape[axis];
    if (FE_IS_SYM(dim))
        return imp_fail(im, "splits symbolic dim '%s'", imp_dim_name(im, dim));
    int k = imp_attr_ints(im->node, "split", sizes, n);
    if (k < 0 && given) {
        if (!given->is_const || (!given->iv && !given->fv))
            return imp_fail(im, "the split sizes must be a constant");
        if (given->numel != n)
            return imp_fail(im, "split has %lld sizes for %d outputs", (long long)given->numel, n);
        k = imp_const_ints(given, sizes, n);
    }
    if (k < 0) {
        for (int i = 0; i < n; i++)
            sizes[i] = (dim + n - 1) / n;
        sizes[n - 1] = dim - (dim + n - 1) / n * (n - 1);
        k = n;
    }
    if (k != n)
        return imp_fail(im, "split has %d sizes for %d outputs", k, n);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 1)
            return imp_fail(im, "split size %lld (empty tensors are not supported)",
                            (long long)sizes[i]);
        if (sizes[i] > dim - at)
            return imp_fail(im, "split sizes add up to more than %lld", (long long)dim);
        if (im->node->output[i][0] && !slice1(im, x, (int)axis, at, sizes[i], 1, i))
            return im->err->code;
        at += sizes[i];
    }
    return at == dim ? FE_OK : imp_fail(im, "split sizes add up to %lld, not %lld", (long long)at,
                                        (long long)dim);
}

static int map_gather(imp *im)
{
    imp_val *x = imp_in(im, 0), *idx = imp_in(im, 1);
    int64_t axis, shape[FE_MAX_RANK];
    if (imp_axis(im, "axis", imp_attr_int(im->node, "axis", 0), x->rank, 0, &axis))
        return im->err->code;
    double s;
    if (imp_scalar(idx, &s) && idx->rank == 0 && !FE_IS_SYM(x->shape[axis])) {
        int64_t i = imp_f2i(s), dim = x->shape[axis];
        if (i < -dim || i >= dim)
            return imp_fail(im, "index %lld is out of range for size %lld", (long long)i,
                            (long long)dim);
        imp_val *t = slice1(im, x, (int)axis, i < 0 ? i + dim : i, 1, 1, -1);
        int r = 0;
        for (int d = 0; d < x->rank; d++)
            if (d != axis)
                shape[r++] = x->shape[d];
        return t && imp_reshape(im, t, r, shape, 0) ? FE_OK : im->err->code;
    }
    int r = 0;
    if (x->rank + idx->rank - 1 > FE_MAX_RANK)
        return imp_fail(im, "output rank over %d", FE_MAX_RANK);
    for (int d = 0; d < axis; d++)
        shape[r++] = x->shape[d];
    for (int d = 0; d < idx->rank; d++)
        shape[r++] = idx->shape[d];
    for (int d = (int)axis + 1; d < x->rank; d++)
        shape[r++] = x->shape[d];
    imp_val *o = imp_out(im, 0, x->dtype, r, shape), *in[2] = {x, idx};
    int32_t nd = o ? imp_emit(im, "gather", in, 2, o) : -1;
    return nd >= 0 && !fe_builder_attr_int(im->b, nd, "axis", axis) ? FE_OK : im->err->code;
}

static int map_expand(imp *im)
{
    imp_val *x = imp_in(im, 0);
    int64_t spec[FE_MAX_RANK], shape[FE_MAX_RANK];
    int n = imp_const_ints(imp_in(im, 1), spec, FE_MAX_RANK);
    if (n < 0)
        return imp_fail(im, "the target shape must be a constant (or fold to one) of at most %d "
                        "dims", FE_MAX_RANK);
    if (imp_check_shape(im, spec, n, "the target shape"))
        return im->err->code;
    imp_val sv = {.rank = n};
    memcpy(sv.shape, spec, (size_t)n * sizeof *spec);
    int r;
    if (imp_broadcast(im, x, &sv, &r, shape))
        return im->err->code;
    int same = r == x->rank;
    for (int d = 0; same && d < r; d++)
        same = shape[d] == x->shape[d];
    if (same)
        return imp_alias(im, im->node->output[0], x);
    int32_t nd;
    imp_val *o = imp_op1(im, "expand", x, x->dtype, r, shape, 0, &nd);
    return o && !fe_builder_attr_ints(im->b, nd, "shape", shape, r) ? FE_OK : im->err->code;
}

static int map_pad(imp *im)
{
    imp_val *x = imp_in(im, 0);
    char buf[64];
    const char *mode = imp_attr_str(im->node, "mode", "constant", buf, sizeof buf);
    int64_t pads[2 * FE_MAX_RANK], tp[2 * FE_MAX_RANK], shape[FE_MAX_RANK];
    double value = imp_attr_float(im->node, "value", 0);
    int n = imp_attr_ints(im->node, "pads", pads, 2 * FE_MAX_RANK);
    if (n < 0)
        n = imp_const_ints(imp_opt(im, 1), pads, 2 * FE_MAX_RANK);
    if (imp_opt(im, 2) && !imp_scalar(imp_opt(im, 2), &value))
        return imp_fail(im, "the pad value must be a constant");
    if (isnan(value))
        return imp_fail(im, "the pad value is NaN, which a model file cannot hold");
    if (imp_opt(im, 3))
        return imp_custom(im, "an axes input");
    if (n != 2 * x->rank)
        return imp_fail(im, "pads must be a constant of 2 x rank (%d) items", 2 * x->rank);
    for (int i = 0; i < n; i++)
        if (pads[i] < -IMP_DIM_MAX || pads[i] > IMP_DIM_MAX)
            return imp_fail(im, "pads item %d is %lld; it must be %lld to %lld", i,
                            (long long)pads[i], (long long)-IMP_DIM_MAX, (long long)IMP_DIM_MAX);
    const char *m = !strcmp(mode, "constant") ? "constant" : !strcmp(mode, "reflect") ? "reflect"
                  : !strcmp(mode, "edge") ? "replicate" : NULL;
    if (!m)
        return imp_custom(im, "a pad mode we do not have");
    int k = 0, first = x->rank;
    for (int d = 0; d < x->rank; d++)
        if (pads[d] || pads[d + x->rank]) {
            first = d < first ? d : first;
        }
    for (int d = x->rank - 1; d >= first; d--) {   /* torch order: last axis first */
        tp[k++] = pads[d];
        tp[k++] = pads[d + x->rank];
    }
    for (int d = 0; d < x->rank; d++) {
        if (FE_IS_SYM(x->shape[d]) && (pads[d] || pads[d + x->rank]))
            return imp_fail(im, "pads symbolic dim '%s'", imp_dim_name(im, x->shape[d]));
        shape[d] = FE_IS_SYM(x->shape[d]) ? x->shape[d] : x->shape[d] + pads[d] + pads[d + x->rank];
        if (!FE_IS_SYM(shape[d]) && shape[d] < 1)
            return imp_fail(im, "pads leave axis %d with %lld elements (empty tensors are not "
                            "supported)", d, (long long)shape[d]);
    }
    if (!k)
        return imp_alias(im, im->node->output[0], x);
    int32_t nd;
    imp_val *o = imp_op1(im, "pad", x, x->dtype, x->rank, shape, 0, &nd);
    if (!o || fe_builder_attr_ints(im->b, nd, "pads", tp, k) ||
        (value != 0 && fe_builder_attr_float(im->b, nd, "value", value)) ||
        (strcmp(m, "constant") && fe_builder_attr_str(im->b, nd, "mode", m)))
        return im->err->code;
    return FE_OK;
}

static int map_identity(imp *im)
{
    imp_val *x = imp_in(im, 0);
    /* A graph output keeps its own name: a copy (reshape to itself). */
    int32_t id = fe_strtab_find(im->strs, im->node->output[0], strlen(im->node->output[0]));
    if (id >= 0 && (im->taken[id] & IMP_GRAPH_OUTPUT))
        return imp_reshape(im, x, x->rank, x->shape, 0) ? FE_OK : im->err->code;
    return imp_alias(im, im->node->output[0], x);
}

/* ---- the table ---- */

typedef struct map_entry {
    const char *onnx;
    const char *ours;                 /* for unary/binary, else NULL */
    int (*fn)(imp *im, const char *ours);
} map_entry;

#define W(f) static int w_##f(imp *im, const char *o) { (void)o; return f(im); }
W(map_mean) W(map_where) W(map_cast) W(map_hardsigmoid) W(map_leakyrelu) W(map_clip)
W(map_reshape) W(map_flatten) W(map_transpose) W(map_concat) W(map_slice) W(map_split)
W(map_gather) W(map_expand) W(map_pad) W(map_identity)
static int w_squeeze(imp *im, const char *o) { (void)o; return map_squeeze(im, 0); }
static int w_unsqueeze(imp *im, const char *o) { (void)o; return map_squeeze(im, 1); }

static const map_entry table[] = {
    {"Relu", "relu", unary}, {"Sigmoid", "sigmoid", unary}, {"Tanh", "tanh", unary},
    {"Exp", "exp", unary}, {"Log", "log", unary}, {"Neg", "neg", unary}, {"Abs", "abs", unary},
    {"Sqrt", "sqrt", unary}, {"Reciprocal", "reciprocal", unary}, {"Sin", "sin", unary},
    {"Cos", "cos", unary}, {"Erf", "erf", unary}, {"HardSwish", "hardswish", unary},
    {"HardSigmoid", NULL, w_map_hardsigmoid}, {"LeakyRelu", NULL, w_map_leakyrelu},
    {"Clip", NULL, w_map_clip}, {"Cast", NULL, w_map_cast},
    {"Add", "add", binary}, {"Sub", "sub", binary}, {"Mul", "mul", binary},
    {"Div", "div", binary}, {"Pow", "pow", binary},
    {"Max", "maximum", variadic}, {"Min", "minimum", variadic}, {"Sum", "add", variadic},
    {"Mean", NULL, w_map_mean}, {"Where", NULL, w_map_where},
    {"Reshape", NULL, w_map_reshape}, {"Flatten", NULL, w_map_flatten},
    {"Squeeze", NULL, w_squeeze}, {"Unsqueeze", NULL, w_unsqueeze},
    {"Transpose", NULL, w_map_transpose}, {"Concat", NULL, w_map_concat},
    {"Slice", NULL, w_map_slice}, {"Split", NULL, w_map_split}, {"Gather", NULL, w_map_gather},
    {"Expand", NULL, w_map_expand}, {"Pad", NULL, w_map_pad},
    {"Identity", NULL, w_map_identity}, {"Dropout", NULL, w_map_identity},
};

int imp_map(imp *im)
{
    const char *op = im->node->op_type;
    if (imp_foreign(im->node))   /* its name means nothing in ONNX's own domain */
        return imp_custom(im, "an operator of another domain");
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (!strcmp(table[i].onnx, op))
            return table[i].fn(im, table[i].ours);
    int r = imp_map_dims(im);
    if (r == IMP_NO_MAPPING)
        r = imp_map_nn(im);
    return r == IMP_NO_MAPPING ? imp_custom(im, NULL) : r;
}
