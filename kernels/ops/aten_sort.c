/* aten_sort.c: argsort (aten::argsort, argsort.stable), the kernel an
 * imported TopK runs: the importers write topk as argsort, a slice of the
 * first k indices and torch.gather of the values (docs/import.md).
 *
 * The sort is stable whatever args.stable says (a stable order is one
 * unstable sorting may give): equal values keep their index order, in
 * either direction, which is ONNX TopK's rule for ties. NaN sorts above
 * every number, as torch.sort puts it: last ascending, first descending.
 */
#include <math.h>
#include <stdlib.h>

#include "aten_call.h"
#include "convert.h"
#include "ops.h"

typedef struct key {
    double f;       /* a float value (0 for integers) */
    int64_t i;      /* an integer value (0 for floats) */
    int64_t at;     /* the index along the sorted dim */
} key;

/* -1, 0, 1 as a against b, NaN above everything. */
static int cmp_value(const key *a, const key *b)
{
    int na = isnan(a->f), nb = isnan(b->f);
    if (na || nb)
        return na - nb;
    if (a->f != b->f)
        return a->f < b->f ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int cmp_up(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    int c = cmp_value(a, b);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

static int cmp_down(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    int c = cmp_value(b, a);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

static int bool_arg(const fe_k_acall *c, const char *key, int *v, fe_error *err)
{
    json_t *j = fe_k_acall_arg(c, key);
    if (j && !json_is_boolean(j))
        return fe_k_acall_fail(c, err, "args.%s must be true or false", key);
    *v = j && json_is_true(j);
    return FE_OK;
}

int fe_k_aten_argsort(const fe_k_acall *c, fe_error *err)
{
    int64_t dim;
    int down = 0, stable = 0;
    if (c->n->nin != 1)
        return fe_k_acall_fail(c, err, "takes one tensor input, not %d", c->n->nin);
    if (fe_k_acall_int_arg(c, "dim", -1, &dim, err) || bool_arg(c, "descending", &down, err) ||
        bool_arg(c, "stable", &stable, err))
        return err ? err->code : FE_EINPUT;
    const fe_k_tensor *x = &c->in[0];
    int ax = fe_axis(dim, x->rank ? x->rank : 1);   /* a 0-d tensor takes dim 0 or -1 */
    if (ax < 0)
        return fe_k_acall_fail(c, err, "dim %lld is out of range for rank %d", (long long)dim,
                               x->rank);
    if (fe_k_acall_out_is(c, err, x->rank, x->shape, FE_I64))
        return FE_EINPUT;
    if (c->dry)
        return FE_OK;
    int64_t outer = 1, len = x->rank ? x->shape[ax] : 1, inner = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < ax)
            outer *= x->shape[d];
        else if (d > ax)
            inner *= x->shape[d];
    }
    if (outer * len * inner == 0)
        return FE_OK;
    int isint = fe_k_dtype_is_int(x->dtype);
    key *k = fe_malloc((size_t)len * sizeof *k, err);
    if (!k)
        return FE_ENOMEM;
    int64_t *out = c->out->data;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            for (int64_t l = 0; l < len; l++) {
                int64_t off = base + l * inner, iv = 0;
                float fv = 0.0f;
                if (isint)
                    fe_k_load_i64(x->data, x->dtype, off, &iv, 1);
                else
                    fe_k_load_f32(x->data, x->dtype, off, &fv, 1);
                k[l] = (key){fv, iv, l};
            }
            qsort(k, (size_t)len, sizeof *k, down ? cmp_down : cmp_up);
            for (int64_t l = 0; l < len; l++)
                out[base + l * inner] = k[l].at;
        }
    }
    free(k);
    return FE_OK;
}
