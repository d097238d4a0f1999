/* node.c: run one graph node with the reference kernels (see node.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aten.h"
#include "attention.h"
#include "conv.h"
#include "convert.h"
#include "elemwise.h"
#include "injective.h"
#include "matmul.h"
#include "node.h"
#include "norm.h"
#include "ops.h"
#include "pool.h"
#include "positions.h"
#include "reduce.h"

int fe_k_node_scalar(const fe_graph *g, const fe_node *n, int out_dtype,
                     fe_k_scalar *storage, fe_k_tensor *t, int *index)
{
    double v;
    int op = n->op;
    if (!fe_node_scalar(g, n, &v))
        return 0;
    if (fe_k_dtype_is_int(out_dtype)) {
        storage->i = fe_k_f64_to_i64(v);
        *t = fe_k_view(storage, FE_I64, 0, NULL);
    } else {
        storage->f = (float)v;
        *t = fe_k_view(storage, FE_F32, 0, NULL);
    }
    *index = (int)fe_node_attr_int(g, n, "scalar_index", op == FE_OP_WHERE ? 2 : 1);
    return 1;
}

long fe_k_node_axes(const fe_graph *g, const fe_node *n, int rank)
{
    int64_t ax[FE_MAX_RANK + 1];
    int na = fe_node_attr_ints(g, n, "axes", ax, FE_MAX_RANK + 1);
    long all = rank ? (long)((1u << rank) - 1u) : 0, mask = 0;
    if (na == -1 || na == 0)          /* absent or [] : every axis, as torch */
        return all;
    if (na < 0) {
        const fe_attr *a = fe_node_attr(g, n, "axes");
        return a && a->type == FE_ATTR_NULL ? all : -1;
    }
    for (int i = 0; i < na; i++) {
        int a = fe_axis(ax[i], rank);
        if (a < 0)
            return -1;
        mask |= 1L << a;
    }
    return mask;
}

int fe_k_node_reduce_kind(const fe_graph *g, const fe_node *n, int *lo)
{
    const fe_tensor *x = fe_graph_tensor(g, fe_node_input(g, n, 0));
    const int64_t *sh = fe_tensor_shape(g, x);
    int r = x->rank, first = r, last = -1;
    long m = fe_k_node_axes(g, n, r);
    if (m <= 0)
        return -1;
    for (int a = 0; a < r; a++)
        if ((m >> a) & 1) {
            first = a < first ? a : first;
            last = a;
        }
    int rows = 1, cols = 1;
    for (int a = 0; a < r; a++) {
        int reduced = (m >> a) & 1, one = sh[a] == 1;
        rows &= a < first || reduced || one;
        cols &= a > last || reduced || one;
    }
    *lo = rows ? first : last + 1;
    return rows ? FE_K_RED_ROWS : cols ? FE_K_RED_COLS : FE_K_RED_OTHER;
}

int64_t fe_k_node_norm_size(const fe_graph *g, const fe_node *n, const fe_k_tensor *x)
{
    int64_t ns[FE_MAX_RANK + 1];
    int k = fe_node_attr_ints(g, n, "normalized_shape", ns, FE_MAX_RANK + 1);
    int64_t p = 1;
    if (k == -1)
        return x->rank ? x->shape[x->rank - 1] : 1;
    if (k < 0 || k > x->rank)
        return -1;
    for (int i = 0; i < k; i++) {
        if (ns[i] != x->shape[x->rank - k + i])
            return -1;
        p *= ns[i];
    }
    return p;
}

/* An int or [h, w] attribute as two values. */
static int pair(const fe_graph *g, const fe_node *n, const char *key, int64_t dflt, int64_t *v)
{
    int64_t t[3];
    int k = fe_node_attr_ints(g, n, key, t, 3);
    if (k == -1) {
        v[0] = v[1] = dflt;
        return 0;
    }
    if (k == 1) {
        v[0] = v[1] = t[0];
        return 0;
    }
    if (k == 2) {
        v[0] = t[0];
        v[1] = t[1];
        return 0;
    }
    return -1;
}

static int bad_attr(fe_error *err, const fe_graph *g, const fe_node *n, const char *what)
{
    return fe_error_set(err, FE_EINPUT, "node '%s' (%s): %s", fe_node_name(g, n),
                        fe_node_op_name(n), what);
}

static int run_binary(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                      fe_k_tensor *out, fe_error *err)
{
    fe_k_scalar sv;
    fe_k_tensor st;
    int idx;
    if (n->op == FE_OP_WHERE) {
        const fe_k_tensor *ops[3];
        if (n->nin == 3) {
            ops[0] = &in[0], ops[1] = &in[1], ops[2] = &in[2];
        } else if (n->nin == 2 && fe_k_node_scalar(g, n, out->dtype, &sv, &st, &idx)) {
            if (idx < 0 || idx > 2)
                return bad_attr(err, g, n, "scalar_index must be 0, 1 or 2");
            for (int k = 0, j = 0; k < 3; k++)
                ops[k] = k == idx ? &st : &in[j++];
        } else {
            return bad_attr(err, g, n, "where needs 3 tensors, or 2 and a scalar");
        }
        return fe_k_where(ops[0], ops[1], ops[2], out, err);
    }
    if (n->nin == 2)
        return fe_k_binary(n->op, &in[0], &in[1], out, err);
    if (n->nin == 1 && fe_k_node_scalar(g, n, out->dtype, &sv, &st, &idx)) {
        if (idx == 0)
            return fe_k_binary(n->op, &st, &in[0], out, err);
        return fe_k_binary(n->op, &in[0], &st, out, err);
    }
    return bad_attr(err, g, n, "needs two tensor inputs, or one and attrs.scalar");
}

/* compare: the plan aten.c reads from its attributes, run */
static int run_compare(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                       fe_k_tensor *out, fe_error *err)
{
    fe_k_aten_plan p;
    int rc = fe_k_compare_plan(g, n, &p, err);
    return rc ? rc : fe_k_compare_run(&p, in, out, err);
}

static int run_injective(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                         fe_k_tensor *out, fe_error *err)
{
    const fe_k_tensor *x = &in[0];
    switch (n->op) {
    case FE_OP_RESHAPE:
        return fe_k_copy(x, out, err);
    case FE_OP_TRANSPOSE: {
        int64_t p[FE_MAX_RANK + 1];
        int perm[FE_MAX_RANK];
        int k = fe_node_attr_ints(g, n, "perm", p, FE_MAX_RANK + 1);
        if (k == -1) {
            for (int i = 0; i < x->rank; i++)
                perm[i] = x->rank - 1 - i;
        } else if (k != x->rank) {
            return bad_attr(err, g, n, "perm must list every axis once");
        } else {
            for (int i = 0; i < k; i++)
                perm[i] = fe_axis(p[i], x->rank);
        }
        return fe_k_transpose(x, perm, out, err);
    }
    case FE_OP_SLICE: {
        int axis = fe_axis(fe_node_attr_int(g, n, "axis", 0), x->rank);
        if (axis < 0)
            return bad_attr(err, g, n, "axis out of range");
        int64_t start = fe_node_attr_int(g, n, "start", 0);
        int64_t end = fe_node_attr_int(g, n, "end", INT64_MAX);
        const fe_attr *ea = fe_node_attr(g, n, "end");
        if (ea && ea->type == FE_ATTR_NULL)
            end = INT64_MAX;
        return fe_k_slice(x, axis, start, end, fe_node_attr_int(g, n, "step", 1), out, err);
    }
    case FE_OP_CONCAT: {
        const fe_k_tensor *xs[FE_MAX_IO];
        int axis = fe_axis(fe_node_attr_int(g, n, "axis", 0), out->rank);
        if (axis < 0)
            return bad_attr(err, g, n, "axis out of range");
        for (int k = 0; k < n->nin; k++)
            xs[k] = &in[k];
        return fe_k_concat(xs, n->nin, axis, out, err);
    }
    case FE_OP_PAD: {
        int64_t pads[2 * FE_MAX_RANK + 1];
        int k = fe_node_attr_ints(g, n, "pads", pads, 2 * FE_MAX_RANK + 1);
        const char *mode = fe_node_attr_str(g, n, "mode", "constant");
        int m = !strcmp(mode, "constant") ? FE_K_PAD_CONSTANT
              : !strcmp(mode, "reflect") ? FE_K_PAD_REFLECT
              : !strcmp(mode, "replicate") ? FE_K_PAD_REPLICATE : -1;
        if (k < 0)
            return bad_attr(err, g, n, "pads must be a list of ints");
        if (m < 0)
            return bad_attr(err, g, n, "mode must be constant, reflect or replicate");
        return fe_k_pad(x, pads, k, m, fe_node_attr_float(g, n, "value", 0.0), out, err);
    }
    case FE_OP_EXPAND:
        return fe_k_expand(x, out, err);
    case FE_OP_GATHER: {
        int axis = fe_axis(fe_node_attr_int(g, n, "axis", 0), x->rank);
        if (axis < 0)
            return bad_attr(err, g, n, "axis out of range");
        return fe_k_gather(x, &in[1], axis, out, err);
    }
    case FE_OP_EMBEDDING:
        return fe_k_gather(x, &in[1], 0, out, err);
    default:
        return bad_attr(err, g, n, "not an injective op");
    }
}

static int run_opaque(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                      fe_k_tensor *out, fe_error *err)
{
    switch (n->op) {
    case FE_OP_SDPA: {
        fe_k_sdpa a;
        a.q = &in[0];
        a.k = &in[1];
        a.v = &in[2];
        a.mask = n->nin > 3 ? &in[3] : NULL;
        a.causal = fe_node_attr_bool(g, n, "causal", 0);
        a.scale = fe_node_attr_float(g, n, "scale", 0.0);
        a.y = out;
        return fe_k_sdpa_run(&a, err);
    }
    case FE_OP_MAX_POOL2D:
    case FE_OP_AVG_POOL2D: {
        fe_k_pool p;
        int rc = fe_k_node_pool(g, n, &p, err);
        if (rc)
            return rc;
        if (n->op == FE_OP_MAX_POOL2D)
            return fe_k_max_pool2d(&in[0], &p, out, err);
        return fe_k_avg_pool2d(&in[0], &p, out, err);
    }
    case FE_OP_BATCH_NORM:
        if (n->nin < 5)
            return bad_attr(err, g, n, "needs x, weight, bias, running_mean, running_var");
        return fe_k_batch_norm(&in[0], &in[1], &in[2], &in[3], &in[4],
                               fe_node_attr_float(g, n, "eps", 1e-5), out, err);
    case FE_OP_ALL_REDUCE: {
        int64_t ws = fe_node_attr_int(g, n, "world_size", -1);
        const char *red = fe_node_attr_str(g, n, "reduce", "sum");
        if (ws < 1)
            return bad_attr(err, g, n, "world_size (>= 1) is required");
        /* one host: every rank holds the same x, so sum = x * world_size and
         * avg / max / min = x */
        if (!strcmp(red, "sum"))
            return fe_k_scale(&in[0], (double)ws, out, err);
        if (!strcmp(red, "avg") || !strcmp(red, "mean") || !strcmp(red, "max") || !strcmp(red, "min"))
            return fe_k_scale(&in[0], 1.0, out, err);
        return bad_attr(err, g, n, "reduce must be sum, avg, max or min");
    }
    case FE_OP_CUSTOM:
        /* validated once before a plan runs (fe_exec_executable); the run
         * validates again as it goes, with the same messages */
        return fe_k_aten_run(g, n, in, out, err);
    default:
        return bad_attr(err, g, n, "not an opaque op");
    }
}

int fe_k_node_pool(const fe_graph *g, const fe_node *n, fe_k_pool *p, fe_error *err)
{
    memset(p, 0, sizeof *p);
    if (pair(g, n, "kernel", -1, p->kernel) || p->kernel[0] <= 0 || p->kernel[1] <= 0)
        return bad_attr(err, g, n, "kernel (an int or [h, w] > 0) is required");
    const fe_attr *sa = fe_node_attr(g, n, "stride");
    if (!sa || sa->type == FE_ATTR_NULL || (sa->type == FE_ATTR_INTS && sa->n == 0)) {
        p->stride[0] = p->kernel[0];      /* stride defaults to the kernel */
        p->stride[1] = p->kernel[1];
    } else if (pair(g, n, "stride", 1, p->stride) || p->stride[0] <= 0 || p->stride[1] <= 0) {
        return bad_attr(err, g, n, "stride must be an int or [h, w] > 0");
    }
    if (pair(g, n, "padding", 0, p->pad) || pair(g, n, "dilation", 1, p->dil))
        return bad_attr(err, g, n, "padding and dilation must be an int or [h, w]");
    p->count_include_pad = fe_node_attr_bool(g, n, "count_include_pad", 1);
    if (n->op == FE_OP_AVG_POOL2D)
        p->dil[0] = p->dil[1] = 1;
    return FE_OK;
}

int fe_k_node_conv(const fe_graph *g, const fe_node *n, fe_k_conv *cv, fe_error *err)
{
    memset(cv, 0, sizeof *cv);
    cv->groups = fe_node_attr_int(g, n, "groups", 1);
    if (pair(g, n, "stride", 1, cv->stride) || pair(g, n, "padding", 0, cv->pad) ||
        pair(g, n, "dilation", 1, cv->dil))
        return bad_attr(err, g, n, "stride, padding and dilation must be an int or [h, w]");
    return FE_OK;
}

int fe_k_node_pad_hw(const fe_graph *g, const fe_node *n, int64_t lo[2], int64_t hi[2],
                     double *value)
{
    int64_t pads[2 * FE_MAX_RANK + 1];
    int c = n->op == FE_OP_PAD ? fe_node_attr_ints(g, n, "pads", pads, 2 * FE_MAX_RANK + 1) : -1;
    if (c < 0 || c % 2 || strcmp(fe_node_attr_str(g, n, "mode", "constant"), "constant"))
        return 0;
    for (int k = 0; k < c; k++)   /* (before, after) pairs, W first, then H: nothing else */
        if (pads[k] < 0 || (k >= 4 && pads[k]))
            return 0;
    for (int a = 0; a < 2; a++) {   /* H is pair 1, W pair 0 */
        lo[a] = 2 * (1 - a) < c ? pads[2 * (1 - a)] : 0;
        hi[a] = 2 * (1 - a) + 1 < c ? pads[2 * (1 - a) + 1] : 0;
    }
    *value = fe_node_attr_float(g, n, "value", 0.0);
    return 1;
}

int fe_k_node_run(const fe_graph *g, const fe_node *n, const fe_k_tensor *in,
                  fe_k_tensor *out, fe_error *err)
{
    int op = n->op, rc;
    const fe_k_tensor *x = n->nin ? &in[0] : NULL;
    if (op != FE_OP_CUSTOM && op != FE_OP_ARANGE && n->nin < 1)
        return bad_attr(err, g, n, "has no input");
    switch (op) {
    case FE_OP_COMPARE:
        rc = run_compare(g, n, in, out, err);
        break;
    case FE_OP_ARANGE:
        rc = fe_k_arange(fe_node_attr_int(g, n, "start", 0), fe_node_attr_int(g, n, "step", 1),
                         &out[0], err);
        break;
    case FE_OP_TRILU:
        rc = fe_k_trilu(x, fe_node_attr_bool(g, n, "upper", 1),
                        fe_node_attr_int(g, n, "diagonal", 0), &out[0], err);
        break;
    case FE_OP_RELU: case FE_OP_GELU: case FE_OP_SILU: case FE_OP_SIGMOID: case FE_OP_TANH:
    case FE_OP_EXP: case FE_OP_LOG: case FE_OP_NEG: case FE_OP_ABS: case FE_OP_SQRT:
    case FE_OP_RSQRT: case FE_OP_RECIPROCAL: case FE_OP_SIN: case FE_OP_COS: case FE_OP_ERF:
    case FE_OP_HARDSIGMOID: case FE_OP_HARDSWISH: case FE_OP_CAST: {
        const char *ap = fe_node_attr_str(g, n, "approximate", "none");
        rc = fe_k_unary(op, op == FE_OP_GELU && !strcmp(ap, "tanh"), x, &out[0], err);
        break;
    }
    case FE_OP_ADD: case FE_OP_SUB: case FE_OP_MUL: case FE_OP_DIV: case FE_OP_MAXIMUM:
    case FE_OP_MINIMUM: case FE_OP_POW: case FE_OP_WHERE:
        rc = run_binary(g, n, in, out, err);
        break;
    case FE_OP_SUM: case FE_OP_MEAN: case FE_OP_AMAX: case FE_OP_AMIN: {
        long mask = fe_k_node_axes(g, n, x->rank);
        if (mask < 0)
            return bad_attr(err, g, n, "axes out of range");
        rc = fe_k_reduce(op, x, (unsigned)mask, &out[0], err);
        break;
    }
    case FE_OP_SOFTMAX: case FE_OP_LOG_SOFTMAX: {
        int axis = fe_axis(fe_node_attr_int(g, n, "axis", -1), x->rank);
        if (axis < 0)
            return bad_attr(err, g, n, "axis out of range");
        rc = fe_k_softmax(x, axis, op == FE_OP_LOG_SOFTMAX, &out[0], err);
        break;
    }
    case FE_OP_RMS_NORM: case FE_OP_LAYER_NORM: {
        int64_t ns = fe_k_node_norm_size(g, n, x);
        int layer = op == FE_OP_LAYER_NORM;
        if (ns < 0)
            return bad_attr(err, g, n, "normalized_shape must match the input's trailing axes");
        rc = fe_k_norm(layer, x, n->nin > 1 ? &in[1] : NULL,
                       layer && n->nin > 2 ? &in[2] : NULL, ns,
                       fe_node_attr_float(g, n, "eps", layer ? 1e-5 : 1e-6), &out[0], err);
        break;
    }
    case FE_OP_MATMUL: {
        fe_k_mm mm;
        memset(&mm, 0, sizeof mm);
        mm.a = &in[0];
        mm.b = &in[1];
        mm.ta = fe_node_attr_bool(g, n, "transpose_a", 0);
        mm.tb = fe_node_attr_bool(g, n, "transpose_b", 0);
        mm.y = &out[0];
        mm.impl = FE_K_MM_BLOCKED;
        rc = fe_k_matmul(&mm, err);
        break;
    }
    case FE_OP_CONV2D: {
        fe_k_conv cv;
        if ((rc = fe_k_node_conv(g, n, &cv, err)))
            return rc;
        cv.x = &in[0];
        cv.w = &in[1];
        cv.bias = n->nin > 2 ? &in[2] : NULL;
        cv.y = &out[0];
        rc = fe_k_conv2d(&cv, err);
        break;
    }
    default:
        if (op >= FE_OP_RESHAPE && op <= FE_OP_EMBEDDING)
            rc = run_injective(g, n, in, out, err);
        else
            rc = run_opaque(g, n, in, out, err);
    }
    if (rc && op != FE_OP_CUSTOM && err && strncmp(err->message, "node '", 6))
        fe_error_prefix(err, "node '%s' (%s): ", fe_node_name(g, n), fe_node_op_name(n));
    return rc;
}

int fe_k_node_run_bufs(const fe_graph *g, const fe_node *n, const fe_k_tensor *bufs,
                       fe_error *err)
{
    fe_k_tensor few[8], *io = few;   /* the usual node fits; a wide concat allocates */
    size_t m = (size_t)n->nin + (size_t)n->nout;
    if (m > 8 && !(io = malloc(m * sizeof *io)))
        return fe_error_set(err, FE_ENOMEM, "node '%s': out of memory", fe_node_name(g, n));
    for (int k = 0; k < n->nin; k++)
        io[k] = bufs[fe_node_input(g, n, k)];
    for (int k = 0; k < n->nout; k++)
        io[n->nin + k] = bufs[fe_node_output(g, n, k)];
    int rc = fe_k_node_run(g, n, io, io + n->nin, err);
    if (io != few)
        free(io);
    return rc;
}

static int cmp_id(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int fe_k_node_index(const int32_t *ids, int n, int32_t id)
{
    const int32_t *at = n > 0 ? bsearch(&id, ids, (size_t)n, sizeof *ids, cmp_id) : NULL;
    return at ? (int)(at - ids) : -1;
}

void fe_k_ids_sort(int32_t *ids, int n)
{
    if (n > 1)
        qsort(ids, (size_t)n, sizeof *ids, cmp_id);
}

int fe_k_ids_has(const int32_t *ids, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}
