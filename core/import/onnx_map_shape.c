/* onnx_map_shape.c: the shape rules of ONNX's shape-moving ops (Reshape,
 * Unsqueeze, Squeeze, Flatten, Slice, broadcasting), shared by folding
 * (on constants) and mapping (on tensors). Shapes may hold FE_SYM items;
 * a rule that would have to compute with one says so instead of guessing.
 */
#include <string.h>

#include "onnx_imp.h"

static int sym_err(imp *im, int64_t d, const char *what)
{
    return imp_fail(im, "symbolic dim '%s' would be %s; only moved dims are supported (give it "
                    "a fixed size when exporting)", imp_dim_name(im, d), what);
}

int imp_broadcast(imp *im, const imp_val *a, const imp_val *b, int *rank, int64_t *shape)
{
    *rank = a->rank > b->rank ? a->rank : b->rank;
    for (int d = 0; d < *rank; d++) {
        int i = d - (*rank - a->rank), j = d - (*rank - b->rank);
        int64_t x = i >= 0 ? a->shape[i] : 1, y = j >= 0 ? b->shape[j] : 1;
        if (x == 1 || x == y)
            shape[d] = y;
        else if (y == 1)
            shape[d] = x;
        else if (FE_IS_SYM(x) != FE_IS_SYM(y) &&   /* a table made at the dim's value */
                 (FE_IS_SYM(x) ? imp_dim_value(im, x) == y : imp_dim_value(im, y) == x))
            shape[d] = FE_IS_SYM(x) ? x : y;
        else
            return imp_fail(im, "shapes do not broadcast at axis %d (%lld vs %lld)", d,
                            FE_IS_SYM(x) ? -1LL : (long long)x, FE_IS_SYM(y) ? -1LL : (long long)y);
    }
    return FE_OK;
}

/* The shape a Reshape to spec[0..n) gives x: 0 copies x's dim (unless
 * allowzero), one -1 takes the rest. */
int imp_reshape_shape(imp *im, const imp_val *x, const int64_t *spec, int n, int allowzero,
                      int64_t *out)
{
    if (n > FE_MAX_RANK)
        return imp_fail(im, "reshape to rank %d (at most %d)", n, FE_MAX_RANK);
    int minus = -1;
    for (int i = 0; i < n; i++) {
        out[i] = spec[i];
        if (spec[i] == 0 && !allowzero) {
            if (i >= x->rank)
                return imp_fail(im, "reshape copies dim %d of a rank-%d input", i, x->rank);
            out[i] = x->shape[i];
        } else if (spec[i] == -1) {
            if (minus >= 0)
                return imp_fail(im, "reshape has two -1 dims");
            minus = i;
        } else if (!FE_IS_SYM(spec[i]) && (spec[i] < 1 || spec[i] > IMP_DIM_MAX)) {
            return imp_fail(im, "reshape to dim %lld (dims must be 1 to %lld)", (long long)spec[i],
                            (long long)IMP_DIM_MAX);
        }
    }
    if (minus < 0)
        return FE_OK;
    /* -1: x's elements over the others; dim names must cancel, or one be left. */
    int64_t num = 1, den = 1, left = 0;
    int64_t syms[FE_MAX_RANK];
    int ns = 0;
    for (int i = 0; i < x->rank; i++) {
        if (FE_IS_SYM(x->shape[i]))
            syms[ns++] = x->shape[i];
        else if (__builtin_mul_overflow(num, x->shape[i], &num))
            return imp_fail(im, "the input has more than 2^63 elements");
    }
    for (int i = 0; i < n; i++) {
        if (i == minus)
            continue;
        if (!FE_IS_SYM(out[i])) {
            if (__builtin_mul_overflow(den, out[i], &den))
                return imp_fail(im, "reshape to more than 2^63 elements");
            continue;
        }
        int k = 0;
        while (k < ns && syms[k] != out[i])
            k++;
        if (k == ns)
            return sym_err(im, out[i], "divided by in a reshape");
        syms[k] = syms[--ns];
    }
    if (ns > 1 || (ns == 1 && num != den))
        return sym_err(im, syms[0], "multiplied in a reshape");
    if (ns == 1) {
        left = syms[0];
    } else {
        if (den == 0 || num % den)
            return imp_fail(im, "cannot reshape %lld elements into a shape of %lld-element "
                            "multiples", (long long)num, (long long)den);
        left = num / den;
    }
    out[minus] = left;
    return FE_OK;
}

/* Axes of Unsqueeze/Squeeze/Reduce*: the attribute (older opsets) or input
 * 1 (a constant). -1 if there are none. */
int imp_axes(imp *im, int input, int64_t *axes, int max)
{
    int n = imp_attr_ints(im->node, "axes", axes, max);
    if (n > max)
        return imp_fail(im, "attribute 'axes' has %d items; at most %d", n, max);
    if (n >= 0)
        return n;
    imp_val *a = imp_opt(im, input);
    if (!a)
        return -1;
    if (a->is_const && (a->iv || a->fv) && a->numel > max)
        return imp_fail(im, "axes (input %d) has %lld items; at most %d", input,
                        (long long)a->numel, max);
    n = imp_const_ints(a, axes, max);
    if (n < 0)
        return imp_fail(im, "axes must be a constant (input %d is computed at run time)", input);
    return n;
}

int imp_unsqueeze_shape(imp *im, const imp_val *x, const int64_t *axes, int na, int64_t *out)
{
    int r = x->rank + na;
    if (r > FE_MAX_RANK)
        return -!!imp_fail(im, "unsqueeze to rank %d (at most %d)", r, FE_MAX_RANK);
    int mark[FE_MAX_RANK] = {0};
    for (int i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
        if (a < 0 || a >= r || mark[a])
            return -!!imp_fail(im, "unsqueeze axis %lld is out of range or repeated", (long long)axes[i]);
        mark[a] = 1;
    }
    for (int i = 0, k = 0; i < r; i++)
        out[i] = mark[i] ? 1 : x->shape[k++];
    return r;
}

int imp_squeeze_shape(imp *im, const imp_val *x, const int64_t *axes, int na, int64_t *out)
{
    int mark[FE_MAX_RANK] = {0}, r = 0;
    for (int i = 0; i < na; i++) {
        int64_t a = axes[i] < 0 ? axes[i] + x->rank : axes[i];
        if (a < 0 || a >= x->rank)
            return -!!imp_fail(im, "squeeze axis %lld is out of range", (long long)axes[i]);
        if (x->shape[a] != 1)
            return -!!imp_fail(im, "squeeze axis %lld has size %lld, not 1", (long long)axes[i],
                            FE_IS_SYM(x->shape[a]) ? -1LL : (long long)x->shape[a]);
        mark[a] = 1;
    }
    for (int i = 0; i < x->rank; i++)
        if (na < 0 ? x->shape[i] != 1 : !mark[i])
            out[r++] = x->shape[i];
    return r;
}

/* Product of shape[a..b): a dim name only alone among 1s. */
static int prod(imp *im, const int64_t *shape, int a, int b, int64_t *p)
{
    int64_t n = 1, sym = 0;
    for (int i = a; i < b; i++) {
        if (FE_IS_SYM(shape[i])) {
            if (sym)
                return sym_err(im, shape[i], "multiplied by Flatten");
            sym = shape[i];
        } else if (__builtin_mul_overflow(n, shape[i], &n)) {
            return imp_fail(im, "flattens to more than 2^63 elements");
        }
    }
    if (sym && n != 1)
        return sym_err(im, sym, "multiplied by Flatten");
    *p = sym ? sym : n;
    return FE_OK;
}

int imp_flatten_shape(imp *im, const imp_val *x, int64_t axis, int64_t *out)
{
    if (imp_axis(im, "axis", axis, x->rank, 1, &axis))
        return im->err->code;
    if (prod(im, x->shape, 0, (int)axis, &out[0]) || prod(im, x->shape, (int)axis, x->rank, &out[1]))
        return im->err->code;
    return FE_OK;
}

/* One axis of a Slice, normalised as Python slicing does: *start and the
 * output size; 0 when the whole axis is kept. */
int imp_slice_range(imp *im, int64_t dim, int64_t *start, int64_t end, int64_t step,
                    int64_t *size)
{
    if (step == 0)
        return imp_fail(im, "slice step is 0");
    if (FE_IS_SYM(dim)) {
        if (*start == 0 && step == 1 && (end >= INT32_MAX || end == dim)) {
            *size = dim;
            return FE_OK;
        }
        dim = imp_dim_value(im, dim);
    }
    if (FE_IS_SYM(end))
        end = imp_dim_value(im, end);
    /* s and e end up in -1..dim, so no difference below overflows; the
     * size is 1 + (distance - 1) / |step|, which no step overflows. */
    int64_t s = *start, e = end;
    if (step > 0) {
        s = s < 0 ? s + dim : s;
        e = e < 0 ? e + dim : e;
        s = s < 0 ? 0 : s > dim ? dim : s;
        e = e < 0 ? 0 : e > dim ? dim : e;
        *size = e > s ? 1 + (e - s - 1) / step : 0;
    } else {
        s = s < 0 ? s + dim : s;
        e = e < -dim ? -1 : e < 0 ? e + dim : e;
        s = s < 0 ? -1 : s > dim - 1 ? dim - 1 : s;
        e = e > dim - 1 ? dim - 1 : e;
        *size = s > e ? 1 + (int64_t)((uint64_t)(s - e - 1) / (0 - (uint64_t)step)) : 0;
    }
    *start = s;
    return FE_OK;
}

int imp_slice_axis(imp *im, int64_t dim, int64_t *start, int64_t end, int64_t step, int64_t *size)
{
    if (imp_slice_range(im, dim, start, end, step, size))
        return im->err->code;
    if (*size == 0)
        return imp_fail(im, "slice selects no elements (empty tensors are not supported)");
    return FE_OK;
}

/* Slice's starts/ends/axes/steps (inputs from opset 10, attributes
 * before) as constants. Returns the number of axes sliced. */
int imp_slice_args(imp *im, const imp_val *x, int64_t *axes, int64_t *starts, int64_t *ends,
                   int64_t *steps)
{
    int n;
    if (imp_attr(im->node, "starts")) {
        n = imp_attr_ints(im->node, "starts", starts, FE_MAX_RANK);
        if (n > x->rank)
            return imp_fail(im, "attribute 'starts' has %d items for a rank-%d input", n, x->rank);
        if (imp_attr_ints(im->node, "ends", ends, FE_MAX_RANK) != n)
            return imp_fail(im, "starts and ends differ in length");
        int na = imp_attr_ints(im->node, "axes", axes, FE_MAX_RANK);
        if (na >= 0 && na != n)
            return imp_fail(im, "attribute 'axes' has %d items, 'starts' %d", na, n);
        if (na < 0)
            for (int i = 0; i < n; i++)
                axes[i] = i;
        for (int i = 0; i < n; i++)
            steps[i] = 1;
    } else {
        const imp_val *v[4];
        for (int k = 0; k < 4; k++)
            v[k] = imp_opt(im, k + 1);
        n = imp_const_ints(v[0], starts, FE_MAX_RANK);
        if (n < 0 || imp_const_ints(v[1], ends, FE_MAX_RANK) != n)
            return imp_fail(im, "starts and ends must be constants of one length");
        if (v[2] ? imp_const_ints(v[2], axes, FE_MAX_RANK) != n : 0)
            return imp_fail(im, "axes must be a constant as long as starts");
        if (v[3] ? imp_const_ints(v[3], steps, FE_MAX_RANK) != n : 0)
            return imp_fail(im, "steps must be a constant as long as starts");
        for (int i = 0; i < n; i++) {
            if (!v[2])
                axes[i] = i;
            if (!v[3])
                steps[i] = 1;
        }
    }
    int seen[FE_MAX_RANK] = {0};
    for (int i = 0; i < n; i++) {
        if (axes[i] < -x->rank || axes[i] >= x->rank)
            return imp_fail(im, "slice axis %lld is out of range for a rank-%d input",
                            (long long)axes[i], x->rank);
        if (axes[i] < 0)
            axes[i] += x->rank;
        if (seen[axes[i]]++)
            return imp_fail(im, "slice axis %lld is repeated", (long long)axes[i]);
        if (FE_IS_SYM(starts[i]))
            starts[i] = imp_dim_value(im, starts[i]);
        if (FE_IS_SYM(steps[i]))
            steps[i] = imp_dim_value(im, steps[i]);
    }
    return n;
}
