/* infer.c: shape and dtype inference for every op of the registry.
 *
 * Conventions follow numpy and PyTorch (see the operator set in docs/formats.md):
 * right-aligned broadcasting, negative axes from the end, Python slicing,
 * torch.matmul batch broadcasting, NCHW convolution and pooling. Every
 * function checks what it relies on and says what it found, so a malformed
 * model fails here with a sentence instead of later with a crash.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "infer.h"

static int bad(fe_infer *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(fe_infer *in, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fe_error_set(in->err, FE_EINPUT, "%s", msg);
}

/* Shape text for messages; rotates through a few buffers so one message can
 * show several shapes. */
static const char *S(const fe_shape *s)
{
    static _Thread_local char buf[4][160];
    static _Thread_local int k;
    k = (k + 1) & 3;
    return fe_shape_str(s->dim, s->rank, buf[k], sizeof buf[k]);
}

static int nin(const fe_infer *in) { return in->node->nin; }

static int is_int_dtype(int dt)
{
    return dt == FE_I64 || dt == FE_I32 || dt == FE_I8 || dt == FE_BOOL;
}

int fe_dtype_promote(int a, int b)
{
    static const int rank[FE_NDTYPE] = {
        [FE_BOOL] = 0, [FE_I8] = 1, [FE_I32] = 2, [FE_I64] = 3,
        [FE_F16] = 4, [FE_BF16] = 4, [FE_F32] = 5,
    };
    if (a == b)
        return a;
    if (rank[a] == 4 && rank[b] == 4)   /* f16 with bf16: neither holds the other */
        return FE_F32;
    return rank[a] >= rank[b] ? a : b;
}

int fe_axis(int64_t axis, int rank)
{
    if (axis < 0)
        axis += rank;
    return axis < 0 || axis >= rank ? -1 : (int)axis;
}

int fe_broadcast(const fe_shape *a, const fe_shape *b, fe_shape *out, int *bad_axis)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            if (bad_axis)
                *bad_axis = i;
            return -1;
        }
        out->dim[i] = da == 1 ? db : da;
    }
    return 0;
}

static void copy_shape(fe_shape *dst, const fe_shape *src)
{
    dst->rank = src->rank;
    dst->dtype = src->dtype;
    memcpy(dst->dim, src->dim, sizeof dst->dim);
}

/* attrs.axis (default dflt) as an axis of x, which messages call `what`;
 * -1 with the error set when it is out of range. */
static int axis_attr(fe_infer *in, const fe_shape *x, int64_t dflt, const char *what)
{
    int64_t axis = fe_node_attr_int(in->g, in->node, "axis", dflt);
    int a = fe_axis(axis, x->rank);
    if (a < 0)
        bad(in, "attrs.axis is %lld, out of range for %s %s", (long long)axis, what, S(x));
    return a;
}

int fe_infer_unary(fe_infer *in)
{
    for (int k = 0; k < in->node->nout; k++)
        copy_shape(&in->out[k], &in->in[0]);
    return FE_OK;
}

int fe_infer_all_reduce(fe_infer *in)
{
    const fe_attr *ws = fe_node_attr(in->g, in->node, "world_size");
    if (!ws || ws->type != FE_ATTR_INT || ws->v.i < 1)
        return bad(in, "attrs.world_size must be an integer >= 1 (ranks taking part)");
    return fe_infer_unary(in);
}

int fe_infer_cast(fe_infer *in)
{
    const char *name = fe_node_attr_str(in->g, in->node, "dtype", NULL);
    int dt = name ? fe_dtype_parse(name) : -1;
    if (dt < 0)
        return bad(in, "attrs.dtype is %s%s%s; expected one of f32 f16 bf16 i64 i32 i8 bool",
                   name ? "'" : "missing", name ? name : "", name ? "'" : "");
    copy_shape(&in->out[0], &in->in[0]);
    in->out[0].dtype = dt;
    return FE_OK;
}

/* Gather the operands of a broadcast op in order. A node may give all of
 * them as tensors, or one fewer plus attrs.scalar, which then sits at
 * attrs.scalar_index (default: last). The scalar is a rank-0 operand.
 * *scalar_float says whether it is written as a real (1.0, not 1): like a
 * Python float, it promotes integer tensors to f32. */
static int operands(fe_infer *in, int arity, fe_shape *ops, int *scalar_at, int *scalar_float)
{
    const fe_attr *sc = fe_node_attr(in->g, in->node, "scalar");
    int n = nin(in);

    *scalar_at = -1;
    *scalar_float = 0;
    if (!sc) {
        if (n != arity)
            return bad(in, "takes %d tensor inputs, or %d and attrs.scalar; it has %d inputs "
                       "and no scalar", arity, arity - 1, n);
        for (int i = 0; i < arity; i++)
            copy_shape(&ops[i], &in->in[i]);
        return FE_OK;
    }
    if (sc->type != FE_ATTR_INT && sc->type != FE_ATTR_FLOAT && sc->type != FE_ATTR_BOOL)
        return bad(in, "attrs.scalar must be a number");
    if (n != arity - 1)
        return bad(in, "has attrs.scalar and %d tensor inputs; with a scalar it takes %d",
                   n, arity - 1);
    int64_t at = fe_node_attr_int(in->g, in->node, "scalar_index", arity - 1);
    if (at < 0 || at >= arity || (arity == 3 && at == 0))
        return bad(in, "attrs.scalar_index is %lld; expected %s", (long long)at,
                   arity == 3 ? "1 or 2" : "0 or 1");
    for (int i = 0, t = 0; i < arity; i++) {
        if (i == at) {
            ops[i].rank = 0;
            ops[i].dtype = -1;
        } else {
            copy_shape(&ops[i], &in->in[t++]);
        }
    }
    *scalar_at = (int)at;
    *scalar_float = sc->type == FE_ATTR_FLOAT;
    return FE_OK;
}

/* Broadcast ops[first..arity) into out (shape) and promote their dtypes. */
static int broadcast_all(fe_infer *in, const fe_shape *ops, int first, int arity,
                         int scalar_float, fe_shape *out)
{
    fe_shape acc = {0};
    int dt = -1;
    acc.rank = 0;
    for (int i = 0; i < arity; i++) {
        fe_shape next;
        int axis;
        if (fe_broadcast(&acc, &ops[i], &next, &axis) != 0) {
            char all[512];
            size_t len = 0;
            for (int j = 0; j < arity; j++)
                len += (size_t)snprintf(all + len, sizeof all - len, "%s%s", j ? " and " : "",
                                        ops[j].dtype < 0 ? "the scalar" : S(&ops[j]));
            return bad(in, "operands %s do not broadcast (axis %d of the result: sizes must "
                       "be equal or 1)", all, axis);
        }
        acc = next;
        if (i >= first && ops[i].dtype >= 0)
            dt = dt < 0 ? ops[i].dtype : fe_dtype_promote(dt, ops[i].dtype);
    }
    if (dt < 0)
        return bad(in, "has no tensor operand to take a dtype from");
    if (scalar_float && is_int_dtype(dt))
        dt = FE_F32;
    acc.dtype = dt;
    copy_shape(out, &acc);
    return FE_OK;
}

int fe_infer_binary(fe_infer *in)
{
    fe_shape ops[2];
    int at, sf, rc = operands(in, 2, ops, &at, &sf);
    if (rc)
        return rc;
    return broadcast_all(in, ops, 0, 2, sf, &in->out[0]);
}

int fe_infer_where(fe_infer *in)
{
    fe_shape ops[3];
    int at, sf, rc = operands(in, 3, ops, &at, &sf);
    if (rc)
        return rc;
    /* The condition shapes the result but does not take part in the dtype. */
    return broadcast_all(in, ops, 1, 3, sf, &in->out[0]);
}

int fe_infer_compare(fe_infer *in)
{
    if (!fe_node_attr_str(in->g, in->node, "cmp", NULL))
        return bad(in, "attrs.cmp is missing; expected one of eq ne lt le gt ge");
    int rc = fe_infer_binary(in);
    in->out[0].dtype = FE_BOOL;
    return rc;
}

/* PyTorch's arange with integer arguments: ceil((end - start) / step)
 * values; start and end may be dim names, so the length follows --dim. */
int fe_infer_arange(fe_infer *in)
{
    const fe_attr *ea = fe_node_attr(in->g, in->node, "end");
    const char *dn = fe_node_attr_str(in->g, in->node, "dtype", "i64");
    int dt = fe_dtype_parse(dn);
    if (!ea || ea->type == FE_ATTR_NULL)
        return bad(in, "attrs.end is missing; expected an integer or a dim name");
    int64_t start = fe_node_attr_int(in->g, in->node, "start", 0);
    int64_t end = fe_node_attr_int(in->g, in->node, "end", 0);
    int64_t step = fe_node_attr_int(in->g, in->node, "step", 1);
    if (dt < 0 || dt == FE_BOOL)
        return bad(in, "attrs.dtype is '%s'; expected one of f32 f16 bf16 i64 i32 i8", dn);
    if (step == 0)
        return bad(in, "attrs.step is 0; expected a nonzero integer");
    /* in 128 bits: start, end and step are any int64 */
    __int128 span = (__int128)end - start, n = step > 0 ? (span + step - 1) / step
                                                        : (-span + -(__int128)step - 1) / -(__int128)step;
    if (n < 1)
        return bad(in, "is empty: start %lld, end %lld, step %lld (fuseeng tensors are non-empty)",
                   (long long)start, (long long)end, (long long)step);
    if (n > ((__int128)1 << 40))
        return bad(in, "has more than 2^40 values; lower end");
    in->out[0].rank = 1;
    in->out[0].dtype = dt;
    in->out[0].dim[0] = (int64_t)n;
    return FE_OK;
}

int fe_infer_trilu(fe_infer *in)
{
    if (in->in[0].rank < 2)
        return bad(in, "input %s has rank %d; triu and tril take the last two axes of a matrix",
                   S(&in->in[0]), in->in[0].rank);
    return fe_infer_unary(in);
}

/* Axes attribute into a mask; none or an empty list means every axis. */
static int axes_mask(fe_infer *in, const char *key, int rank, int *mask)
{
    int64_t ax[FE_MAX_RANK + 1];
    int n = fe_node_attr_ints(in->g, in->node, key, ax, FE_MAX_RANK + 1);
    memset(mask, 0, sizeof(int) * FE_MAX_RANK);
    if (n == -2)
        return bad(in, "attrs.%s must be a list of at most %d axes", key, FE_MAX_RANK);
    if (n <= 0) {
        for (int i = 0; i < rank; i++)
            mask[i] = 1;
        return FE_OK;
    }
    for (int i = 0; i < n; i++) {
        int a = fe_axis(ax[i], rank);
        if (a < 0)
            return bad(in, "attrs.%s has axis %lld, out of range for rank %d", key,
                       (long long)ax[i], rank);
        if (mask[a])
            return bad(in, "attrs.%s names axis %d twice", key, a);
        mask[a] = 1;
    }
    return FE_OK;
}

int fe_infer_reduce(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int mask[FE_MAX_RANK];
    int keep = fe_node_attr_bool(in->g, in->node, "keepdim", 0);
    int rc = axes_mask(in, "axes", x->rank, mask);
    if (rc)
        return rc;
    o->rank = 0;
    o->dtype = x->dtype;
    for (int i = 0; i < x->rank; i++) {
        if (!mask[i])
            o->dim[o->rank++] = x->dim[i];
        else if (keep)
            o->dim[o->rank++] = 1;
    }
    return FE_OK;
}

int fe_infer_softmax(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    if (x->rank == 0)
        return bad(in, "input is a scalar; softmax needs at least one axis");
    if (axis_attr(in, x, -1, "input") < 0)
        return FE_EINPUT;
    if (!fe_dtype_is_float(x->dtype))
        return bad(in, "input dtype is %s; softmax needs a float dtype", fe_dtype_name(x->dtype));
    copy_shape(&in->out[0], x);
    return FE_OK;
}

/* rms_norm and layer_norm: normalise over the trailing dims named by
 * normalized_shape (default: the last); weight and bias cover those dims. */
int fe_infer_norm(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    int64_t ns[FE_MAX_RANK + 1];
    int k = fe_node_attr_ints(in->g, in->node, "normalized_shape", ns, FE_MAX_RANK + 1);

    if (x->rank == 0)
        return bad(in, "input is a scalar; normalisation needs at least one axis");
    if (!fe_dtype_is_float(x->dtype))
        return bad(in, "input dtype is %s; normalisation needs a float dtype",
                   fe_dtype_name(x->dtype));
    if (k == -2 || k == 0 || k > x->rank)
        return bad(in, "attrs.normalized_shape must list 1 to %d trailing dims of input %s",
                   x->rank, S(x));
    if (k < 0) {
        k = 1;
        ns[0] = x->dim[x->rank - 1];
    }
    for (int i = 0; i < k; i++)
        if (ns[i] != x->dim[x->rank - k + i])
            return bad(in, "attrs.normalized_shape does not match the last %d dims of input %s",
                       k, S(x));
    for (int t = 1; t < nin(in); t++) {
        const fe_shape *w = &in->in[t];
        int ok = w->rank <= k;
        for (int i = 0; ok && i < w->rank; i++) {
            int64_t want = ns[k - w->rank + i];
            ok = w->dim[i] == want || w->dim[i] == 1;
        }
        if (!ok)
            return bad(in, "%s %s does not cover the normalized dims (the last %d of %s)",
                       t == 1 ? "weight" : "bias", S(w), k, S(x));
    }
    double eps = fe_node_attr_float(in->g, in->node, "eps", 1e-6);
    if (!(eps >= 0))
        return bad(in, "attrs.eps is %g; expected a number >= 0", eps);
    copy_shape(&in->out[0], x);
    return FE_OK;
}

static int64_t numel(const fe_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (__builtin_mul_overflow(n, s->dim[i], &n))
            return -1;
    return n;
}

/* Read a shape attribute (reshape, expand): ints and dim names, resolved. */
static int shape_attr(fe_infer *in, int64_t *dims, int *rank)
{
    int n = fe_node_attr_ints(in->g, in->node, "shape", dims, FE_MAX_RANK + 1);
    if (n == -1)
        return bad(in, "attrs.shape is missing; expected a list of sizes");
    if (n == -2 || n > FE_MAX_RANK)
        return bad(in, "attrs.shape must be a list of at most %d sizes or dim names",
                   FE_MAX_RANK);
    *rank = n;
    return FE_OK;
}

int fe_infer_reshape(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int64_t dims[FE_MAX_RANK + 1], known = 1, total = numel(x);
    int rank, hole = -1, rc = shape_attr(in, dims, &rank);
    if (rc)
        return rc;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == -1 && hole < 0) {
            hole = i;
        } else if (dims[i] < 1) {
            return bad(in, "attrs.shape item %d is %lld; sizes are >= 1, with at most one -1",
                       i, (long long)dims[i]);
        } else if (__builtin_mul_overflow(known, dims[i], &known)) {
            return bad(in, "attrs.shape has more elements than fit in 64 bits");
        }
    }
    if (hole >= 0) {
        if (total % known != 0)
            return bad(in, "cannot reshape %s (%lld elements) with a -1 next to %lld elements",
                       S(x), (long long)total, (long long)known);
        dims[hole] = total / known;
        known = total;
    }
    if (known != total)
        return bad(in, "cannot reshape %s (%lld elements) into %lld elements", S(x),
                   (long long)total, (long long)known);
    o->rank = rank;
    o->dtype = x->dtype;
    memcpy(o->dim, dims, sizeof(int64_t) * (size_t)rank);
    return FE_OK;
}

int fe_infer_transpose(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int64_t perm[FE_MAX_RANK + 1];
    int seen[FE_MAX_RANK] = {0};
    int n = fe_node_attr_ints(in->g, in->node, "perm", perm, FE_MAX_RANK + 1);
    if (n == -1) {
        n = x->rank;
        for (int i = 0; i < n; i++)
            perm[i] = n - 1 - i;
    }
    if (n != x->rank)
        return bad(in, "attrs.perm must list each of the %d axes of %s once", x->rank, S(x));
    o->rank = x->rank;
    o->dtype = x->dtype;
    for (int i = 0; i < n; i++) {
        int a = fe_axis(perm[i], x->rank);
        if (a < 0 || seen[a]++)
            return bad(in, "attrs.perm is not a permutation of the %d axes of %s", x->rank, S(x));
        o->dim[i] = x->dim[a];
    }
    return FE_OK;
}

int fe_infer_slice(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int a = axis_attr(in, x, 0, "input");
    if (a < 0)
        return FE_EINPUT;
    int64_t size = x->dim[a];
    int64_t start = fe_node_attr_int(in->g, in->node, "start", 0);
    int64_t end = fe_node_attr_int(in->g, in->node, "end", INT64_MAX);
    int64_t step = fe_node_attr_int(in->g, in->node, "step", 1);
    if (step < 1)
        return bad(in, "attrs.step is %lld; expected >= 1", (long long)step);
    /* Python slicing: negative bounds count from the end, then clamp. */
    if (start < 0)
        start = start < -size ? 0 : start + size;
    if (end < 0)
        end = end < -size ? 0 : end + size;
    if (start > size)
        start = size;
    if (end > size)
        end = size;
    if (end <= start)
        return bad(in, "selects no elements of axis %d (size %lld): start %lld, end %lld",
                   a, (long long)size, (long long)start, (long long)end);
    copy_shape(o, x);
    o->dim[a] = 1 + (end - start - 1) / step;
    return FE_OK;
}

int fe_infer_concat(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int a = axis_attr(in, x, 0, "input");
    if (a < 0)
        return FE_EINPUT;
    copy_shape(o, x);
    for (int t = 1; t < nin(in); t++) {
        const fe_shape *y = &in->in[t];
        if (y->rank != x->rank)
            return bad(in, "input %d is %s but input 0 is %s; concat needs equal ranks", t,
                       S(y), S(x));
        for (int i = 0; i < x->rank; i++)
            if (i != a && y->dim[i] != x->dim[i])
                return bad(in, "input %d is %s but input 0 is %s; they may differ only on "
                           "axis %d", t, S(y), S(x), a);
        if (__builtin_add_overflow(o->dim[a], y->dim[a], &o->dim[a]))
            return bad(in, "concatenated size overflows 64 bits");
        o->dtype = fe_dtype_promote(o->dtype, y->dtype);
    }
    return FE_OK;
}

int fe_infer_pad(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int64_t pads[2 * FE_MAX_RANK + 1];
    int n = fe_node_attr_ints(in->g, in->node, "pads", pads, 2 * FE_MAX_RANK + 1);
    const char *mode = fe_node_attr_str(in->g, in->node, "mode", "constant");
    int reflect = strcmp(mode, "reflect") == 0;

    if (!reflect && strcmp(mode, "constant") != 0 && strcmp(mode, "replicate") != 0)
        return bad(in, "attrs.mode is '%s'; expected constant, reflect or replicate", mode);
    if (n < 0 || n % 2 || n > 2 * x->rank)
        return bad(in, "attrs.pads must hold (before, after) pairs for up to the %d axes of %s, "
                   "last axis first", x->rank, S(x));
    copy_shape(o, x);
    for (int i = 0; i < n / 2; i++) {
        int a = x->rank - 1 - i;
        int64_t lo = pads[2 * i], hi = pads[2 * i + 1], grow;
        /* Negative pads crop, as torch.nn.functional.pad's constant mode does. */
        if ((lo < 0 || hi < 0) && strcmp(mode, "constant") != 0)
            return bad(in, "attrs.pads has a negative size for axis %d; only constant padding "
                       "crops, %s padding adds elements", a, mode);
        if (reflect && (lo >= x->dim[a] || hi >= x->dim[a]))
            return bad(in, "reflect padding of axis %d must be smaller than its size %lld",
                       a, (long long)x->dim[a]);
        if (__builtin_add_overflow(lo, hi, &grow) ||
            __builtin_add_overflow(x->dim[a], grow, &o->dim[a]))
            return bad(in, "padded size of axis %d overflows 64 bits", a);
        if (o->dim[a] < 1)
            return bad(in, "attrs.pads (%lld, %lld) crops axis %d of %s to %lld elements; at "
                       "least one must remain", (long long)lo, (long long)hi, a, S(x),
                       (long long)o->dim[a]);
    }
    return FE_OK;
}

int fe_infer_expand(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int64_t dims[FE_MAX_RANK + 1];
    int rank, rc = shape_attr(in, dims, &rank);
    if (rc)
        return rc;
    if (rank < x->rank)
        return bad(in, "attrs.shape has %d dims but the input %s has %d; expand cannot drop "
                   "dims", rank, S(x), x->rank);
    o->rank = rank;
    o->dtype = x->dtype;
    for (int i = 0; i < rank; i++) {
        int xi = i - (rank - x->rank);
        int64_t d = xi >= 0 ? x->dim[xi] : 1;
        int64_t want = dims[i];
        if (want == -1 && xi >= 0)
            want = d;
        if (want < 1)
            return bad(in, "attrs.shape item %d is %lld; expected a size >= 1 (or -1 to keep "
                       "an input dim)", i, (long long)dims[i]);
        if (d != want && d != 1)
            return bad(in, "cannot expand %s to attrs.shape: dim %d is %lld, not 1 or %lld",
                       S(x), i, (long long)d, (long long)want);
        o->dim[i] = want;
    }
    return FE_OK;
}

static int take(fe_infer *in, const fe_shape *data, const fe_shape *idx, int a)
{
    fe_shape *o = &in->out[0];
    if (!is_int_dtype(idx->dtype) || idx->dtype == FE_BOOL)
        return bad(in, "indices have dtype %s; expected i64, i32 or i8", fe_dtype_name(idx->dtype));
    if (data->rank - 1 + idx->rank > FE_MAX_RANK)
        return bad(in, "result would have more than %d dims", FE_MAX_RANK);
    o->rank = 0;
    o->dtype = data->dtype;
    for (int i = 0; i < a; i++)
        o->dim[o->rank++] = data->dim[i];
    for (int i = 0; i < idx->rank; i++)
        o->dim[o->rank++] = idx->dim[i];
    for (int i = a + 1; i < data->rank; i++)
        o->dim[o->rank++] = data->dim[i];
    return FE_OK;
}

int fe_infer_gather(fe_infer *in)
{
    const fe_shape *data = &in->in[0];
    int a = axis_attr(in, data, 0, "data");
    if (a < 0)
        return FE_EINPUT;
    return take(in, data, &in->in[1], a);
}

int fe_infer_embedding(fe_infer *in)
{
    if (in->in[0].rank != 2)
        return bad(in, "weight is %s; embedding expects a [rows, width] table", S(&in->in[0]));
    return take(in, &in->in[0], &in->in[1], 0);
}

/* torch.matmul: 1-D operands gain a dim that is dropped again, the last two
 * dims multiply, the rest broadcast. Transpose flags swap a >= 2-D operand's
 * last two dims. */
int fe_infer_matmul(fe_infer *in)
{
    fe_shape a = in->in[0], b = in->in[1];
    fe_shape *o = &in->out[0];
    int ta = fe_node_attr_bool(in->g, in->node, "transpose_a", 0);
    int tb = fe_node_attr_bool(in->g, in->node, "transpose_b", 0);
    int a1 = a.rank == 1, b1 = b.rank == 1;

    if (a.rank == 0 || b.rank == 0)
        return bad(in, "operands %s and %s: matmul needs at least 1-D operands",
                   S(&in->in[0]), S(&in->in[1]));
    if (a1) {
        a.rank = 2;
        a.dim[1] = a.dim[0];
        a.dim[0] = 1;
    } else if (ta) {
        int64_t t = a.dim[a.rank - 1];
        a.dim[a.rank - 1] = a.dim[a.rank - 2];
        a.dim[a.rank - 2] = t;
    }
    if (b1) {
        b.rank = 2;
        b.dim[1] = 1;
    } else if (tb) {
        int64_t t = b.dim[b.rank - 1];
        b.dim[b.rank - 1] = b.dim[b.rank - 2];
        b.dim[b.rank - 2] = t;
    }
    int64_t m = a.dim[a.rank - 2], ka = a.dim[a.rank - 1];
    int64_t kb = b.dim[b.rank - 2], n = b.dim[b.rank - 1];
    if (ka != kb)
        return bad(in, "inner dimensions differ: a is %s%s (K=%lld), b is %s%s (K=%lld)",
                   S(&in->in[0]), ta ? " transposed" : "", (long long)ka,
                   S(&in->in[1]), tb ? " transposed" : "", (long long)kb);
    fe_shape ba = a, bb = b, batch;
    int axis;
    ba.rank -= 2;
    bb.rank -= 2;
    if (fe_broadcast(&ba, &bb, &batch, &axis) != 0)
        return bad(in, "batch dims of a %s and b %s do not broadcast", S(&in->in[0]),
                   S(&in->in[1]));
    if (batch.rank + 2 > FE_MAX_RANK)
        return bad(in, "result would have more than %d dims", FE_MAX_RANK);
    *o = batch;
    if (!a1)
        o->dim[o->rank++] = m;
    if (!b1)
        o->dim[o->rank++] = n;
    o->dtype = fe_dtype_promote(a.dtype, b.dtype);
    return FE_OK;
}

int64_t fe_window_out(int64_t size, int64_t kernel, int64_t stride, int64_t pad,
                      int64_t dilation, int ceil_mode)
{
    int64_t span = dilation * (kernel - 1) + 1;
    int64_t room = size + 2 * pad - span;
    if (room < 0)
        return -1;
    int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
    /* PyTorch: with ceil_mode the last window must start inside the input
     * or its left padding. */
    if (ceil_mode && (out - 1) * stride >= size + pad)
        out--;
    return out;
}

/* An int-or-pair attribute (stride, padding, kernel...) into v[2]. */
static int pair(fe_infer *in, const char *key, int64_t dflt, int64_t lo, int64_t *v)
{
    int64_t x[3];
    int n = fe_node_attr_ints(in->g, in->node, key, x, 3);
    if (n == -1) {
        if (dflt < 0)
            return bad(in, "attrs.%s is missing; expected an int or [h, w]", key);
        v[0] = v[1] = dflt;
        return FE_OK;
    }
    if (n == 1)
        x[1] = x[0];
    else if (n != 2)
        return bad(in, "attrs.%s must be an int or [h, w]", key);
    if (x[0] < lo || x[1] < lo || x[0] > (INT64_C(1) << 32) || x[1] > (INT64_C(1) << 32))
        return bad(in, "attrs.%s is [%lld, %lld]; expected values from %lld to 2^32", key,
                   (long long)x[0], (long long)x[1], (long long)lo);
    v[0] = x[0];
    v[1] = x[1];
    return FE_OK;
}

int fe_infer_conv2d(fe_infer *in)
{
    const fe_shape *x = &in->in[0], *w = &in->in[1];
    fe_shape *o = &in->out[0];
    int64_t st[2], pd[2], dl[2];
    int64_t groups = fe_node_attr_int(in->g, in->node, "groups", 1);
    int rc;

    if ((rc = pair(in, "stride", 1, 1, st)) || (rc = pair(in, "padding", 0, 0, pd)) ||
        (rc = pair(in, "dilation", 1, 1, dl)))
        return rc;
    if (x->rank != 4 || w->rank != 4)
        return bad(in, "input %s and weight %s must be 4-D (NCHW and [O, C/groups, kh, kw])",
                   S(x), S(w));
    if (groups < 1 || x->dim[1] % groups || w->dim[0] % groups)
        return bad(in, "attrs.groups is %lld; it must divide the %lld input and %lld output "
                   "channels", (long long)groups, (long long)x->dim[1], (long long)w->dim[0]);
    if (w->dim[1] * groups != x->dim[1])
        return bad(in, "weight %s expects %lld input channels (x groups %lld) but input %s "
                   "has %lld", S(w), (long long)w->dim[1], (long long)groups, S(x),
                   (long long)x->dim[1]);
    if (nin(in) == 3 && !(in->in[2].rank == 1 && in->in[2].dim[0] == w->dim[0]))
        return bad(in, "bias %s must be [%lld], one per output channel", S(&in->in[2]),
                   (long long)w->dim[0]);
    o->rank = 4;
    o->dtype = fe_dtype_promote(x->dtype, w->dtype);
    o->dim[0] = x->dim[0];
    o->dim[1] = w->dim[0];
    for (int i = 0; i < 2; i++) {
        o->dim[2 + i] = fe_window_out(x->dim[2 + i], w->dim[2 + i], st[i], pd[i], dl[i], 0);
        if (o->dim[2 + i] < 1)
            return bad(in, "kernel %lld (dilation %lld) does not fit input size %lld with "
                       "padding %lld on spatial axis %d", (long long)w->dim[2 + i],
                       (long long)dl[i], (long long)x->dim[2 + i], (long long)pd[i], i);
    }
    return FE_OK;
}

/* max_pool2d takes a dilation, avg_pool2d does not. */
static int pool2d(fe_infer *in, int dilation)
{
    const fe_shape *x = &in->in[0];
    fe_shape *o = &in->out[0];
    int64_t k[2], st[2], pd[2], dl[2] = {1, 1};
    int ceil_mode = fe_node_attr_bool(in->g, in->node, "ceil_mode", 0);
    int rc;

    if ((rc = pair(in, "kernel", -1, 1, k)))
        return rc;
    if ((rc = pair(in, "stride", 0, 0, st)))
        return rc;
    if (st[0] == 0 || st[1] == 0) {   /* absent or 0: PyTorch's default is the kernel */
        st[0] = st[0] ? st[0] : k[0];
        st[1] = st[1] ? st[1] : k[1];
    }
    if ((rc = pair(in, "padding", 0, 0, pd)))
        return rc;
    if (dilation && (rc = pair(in, "dilation", 1, 1, dl)))
        return rc;
    if (x->rank != 4)
        return bad(in, "input %s must be 4-D NCHW", S(x));
    if (2 * pd[0] > k[0] || 2 * pd[1] > k[1])
        return bad(in, "attrs.padding [%lld, %lld] must be at most half the kernel [%lld, %lld]",
                   (long long)pd[0], (long long)pd[1], (long long)k[0], (long long)k[1]);
    copy_shape(o, x);
    for (int i = 0; i < 2; i++) {
        o->dim[2 + i] = fe_window_out(x->dim[2 + i], k[i], st[i], pd[i], dl[i], ceil_mode);
        if (o->dim[2 + i] < 1)
            return bad(in, "window %lld does not fit input size %lld on spatial axis %d",
                       (long long)k[i], (long long)x->dim[2 + i], i);
    }
    return FE_OK;
}

int fe_infer_sdpa(fe_infer *in)
{
    const fe_shape *q = &in->in[0], *k = &in->in[1], *v = &in->in[2];
    fe_shape *o = &in->out[0];
    if (q->rank < 2 || k->rank < 2 || v->rank < 2)
        return bad(in, "q %s, k %s and v %s must be at least 2-D [..., L, E]", S(q), S(k), S(v));
    int64_t L = q->dim[q->rank - 2], E = q->dim[q->rank - 1];
    int64_t Sk = k->dim[k->rank - 2], Ek = k->dim[k->rank - 1];
    int64_t Sv = v->dim[v->rank - 2], Ev = v->dim[v->rank - 1];
    if (E != Ek)
        return bad(in, "q %s and k %s differ in their last dim (E)", S(q), S(k));
    if (Sk != Sv)
        return bad(in, "k %s and v %s differ in sequence length (dim -2)", S(k), S(v));
    fe_shape bq = *q, bk = *k, bv = *v, t, batch;
    int axis;
    bq.rank -= 2;
    bk.rank -= 2;
    bv.rank -= 2;
    if (fe_broadcast(&bq, &bk, &t, &axis) || fe_broadcast(&t, &bv, &batch, &axis))
        return bad(in, "batch dims of q %s, k %s and v %s do not broadcast", S(q), S(k), S(v));
    if (nin(in) == 4) {
        fe_shape scores = batch, r;
        scores.dim[scores.rank++] = L;
        scores.dim[scores.rank++] = Sk;
        if (fe_broadcast(&in->in[3], &scores, &r, &axis) || r.rank != scores.rank)
            return bad(in, "mask %s does not broadcast to the scores %s", S(&in->in[3]),
                       S(&scores));
    }
    *o = batch;
    o->dim[o->rank++] = L;
    o->dim[o->rank++] = Ev;
    o->dtype = q->dtype;
    return FE_OK;
}

int fe_infer_batch_norm(fe_infer *in)
{
    const fe_shape *x = &in->in[0];
    static const char *const what[] = {"", "weight", "bias", "running_mean", "running_var"};
    if (x->rank < 2)
        return bad(in, "input %s must have a channel axis (axis 1)", S(x));
    for (int t = 1; t < nin(in); t++)
        if (numel(&in->in[t]) != x->dim[1] || in->in[t].rank > 1)
            return bad(in, "%s %s must be [%lld], one per channel of %s", what[t],
                       S(&in->in[t]), (long long)x->dim[1], S(x));
    copy_shape(&in->out[0], x);
    return FE_OK;
}

int fe_infer_max_pool2d(fe_infer *in)
{
    return pool2d(in, 1);
}

int fe_infer_avg_pool2d(fe_infer *in)
{
    return pool2d(in, 0);
}
