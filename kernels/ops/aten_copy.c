/* aten_copy.c: aten kernels whose output elements are input elements,
 * copied, picked or mapped one by one: clone and contiguous (a copy: the
 * engine's tensors are always dense row-major, so memory_format changes
 * nothing), torch.gather, and the hard activations, which run the op
 * registry's elementwise kernel so that an exported `custom` hardswish
 * gives the bits a first-class `hardswish` node gives.
 *
 * torch.gather is not the registry's `gather` (numpy.take, what aten's
 * index_select computes): its index has the input's rank, the output has the
 * index's shape, and out[i][j][k] = in[i][index[i][j][k]][k] for dim 1;
 * along the other dims the index may be shorter than the input, never
 * longer. Index values must lie in [0, size): torch.gather, unlike
 * indexing, takes no negative ones, and neither does this kernel.
 */
#include <stdlib.h>
#include <string.h>

#include "aten_call.h"
#include "convert.h"
#include "elemwise.h"

/* The one input's shape and dtype are the output's. */
static int same_as_input(const fe_k_acall *c, fe_error *err)
{
    const fe_k_tensor *x = &c->in[0];
    if (c->n->nin != 1)
        return fe_k_acall_fail(c, err, "takes one tensor input, not %d", c->n->nin);
    return fe_k_acall_out_is(c, err, x->rank, x->shape, x->dtype);
}

int fe_k_aten_copy(const fe_k_acall *c, fe_error *err)
{
    int rc = same_as_input(c, err);
    if (rc || c->dry)
        return rc;
    if (c->out->data != c->in[0].data)
        memcpy(c->out->data, c->in[0].data, fe_k_nbytes(c->out));
    return FE_OK;
}

int fe_k_aten_pointwise(const fe_k_acall *c, fe_error *err)
{
    int rc = same_as_input(c, err);
    if (rc)
        return rc;
    if (!fe_dtype_is_float(c->in[0].dtype))
        return fe_k_acall_fail(c, err, "takes a floating-point input, not %s (as torch does)",
                               fe_dtype_name(c->in[0].dtype));
    if (c->dry)
        return FE_OK;
    return fe_k_unary(c->op, 0, &c->in[0], c->out, err);
}

/* Shapes and dtypes of gather(x, dim, index); *axis gets dim normalised. */
static int gather_check(const fe_k_acall *c, int *axis, fe_error *err)
{
    const fe_k_tensor *x = &c->in[0], *ix = &c->in[1];
    int64_t dim;
    char a[128], b[128];
    if (c->n->nin != 2)
        return fe_k_acall_fail(c, err, "takes two tensor inputs (input, index), not %d",
                               c->n->nin);
    if (!fe_k_acall_arg(c, "dim"))
        return fe_k_acall_fail(c, err, "args.dim is required");
    if (fe_k_acall_int_arg(c, "dim", 0, &dim, err))
        return FE_EINPUT;
    if (ix->dtype != FE_I64 && ix->dtype != FE_I32)
        return fe_k_acall_fail(c, err, "the index is %s; it must be i64 or i32",
                               fe_dtype_name(ix->dtype));
    if (ix->rank != x->rank)
        return fe_k_acall_fail(c, err, "the index %s must have the input %s's rank",
                               fe_k_acall_shape(ix, a, sizeof a), fe_k_acall_shape(x, b, sizeof b));
    int r = x->rank ? x->rank : 1;   /* a 0-d gather is a 1-element one */
    if (dim < -r || dim >= r)
        return fe_k_acall_fail(c, err, "dim %lld is out of range for rank %d", (long long)dim,
                               x->rank);
    *axis = (int)(dim < 0 ? dim + r : dim);
    for (int d = 0; d < x->rank; d++)
        if (d != *axis && ix->shape[d] > x->shape[d])
            return fe_k_acall_fail(c, err, "the index %s is larger than the input %s along dim "
                                   "%d (only dim %d may differ freely)",
                                   fe_k_acall_shape(ix, a, sizeof a),
                                   fe_k_acall_shape(x, b, sizeof b), d, *axis);
    return fe_k_acall_out_is(c, err, ix->rank, ix->shape, x->dtype);
}

int fe_k_aten_gather(const fe_k_acall *c, fe_error *err)
{
    int axis = 0;
    if (gather_check(c, &axis, err))
        return FE_EINPUT;
    if (c->dry)
        return FE_OK;
    const fe_k_tensor *x = &c->in[0], *ix = &c->in[1];
    int r = x->rank, last = r ? r - 1 : 0;
    int64_t numel = fe_k_numel(ix), inner = r ? ix->shape[last] : 1;
    if (numel == 0)
        return FE_OK;
    int64_t xs[FE_MAX_RANK] = {1}, size = r ? x->shape[axis] : 1;
    fe_k_strides(x->shape, r, xs);
    int64_t *v = fe_malloc((size_t)inner * sizeof *v, err);
    if (!v)
        return FE_ENOMEM;
    size_t es = (size_t)fe_dtype_size(x->dtype);
    const char *src = x->data;
    char *dst = c->out->data;
    for (int64_t row = 0; row < numel / inner; row++) {
        /* x's offset of the row's coordinates, dim `axis` left out */
        int64_t base = 0, q = row;
        for (int d = last - 1; d >= 0; d--) {
            int64_t i = q % ix->shape[d];
            q /= ix->shape[d];
            base += d == axis ? 0 : i * xs[d];
        }
        fe_k_load_i64(ix->data, ix->dtype, row * inner, v, inner);
        for (int64_t j = 0; j < inner; j++) {
            if (v[j] < 0 || v[j] >= size) {
                long long bad = (long long)v[j], at = (long long)(row * inner + j);
                free(v);
                return fe_k_acall_fail(c, err, "index %lld (element %lld of the index) is out of "
                                       "range for dim %d of size %lld: torch.gather takes indices "
                                       "in [0, %lld)", bad, at, axis, (long long)size,
                                       (long long)size);
            }
            int64_t off = base + v[j] * xs[axis] + (axis == last ? 0 : j);
            memcpy(dst + (size_t)(row * inner + j) * es, src + (size_t)off * es, es);
        }
    }
    free(v);
    return FE_OK;
}
