/* injective.c: data movement kernels (see injective.h). */
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "injective.h"
#include "iter.h"

#define PAR_MIN 32768

/* Copy n elements of es bytes from src with element stride ss (0 repeats
 * one element) to contiguous dst. */
static void copy_strided(char *dst, const char *src, int64_t ss, int64_t n, int es)
{
    if (ss == 1) {
        memcpy(dst, src, (size_t)(n * es));
        return;
    }
    switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) dst[i] = src[i * ss]; break;
    case 2: for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = ((const uint16_t *)src)[i * ss]; break;
    case 4: for (int64_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i * ss]; break;
    default: for (int64_t i = 0; i < n; i++) ((uint64_t *)dst)[i] = ((const uint64_t *)src)[i * ss]; break;
    }
}

int fe_k_copy(const fe_k_tensor *x, fe_k_tensor *y, fe_error *err)
{
    size_t n = fe_k_nbytes(x);
    if (n != fe_k_nbytes(y) || x->dtype != y->dtype)
        return fe_error_set(err, FE_EINPUT, "reshape: input and output sizes differ");
    if (x->data != y->data)
        memcpy(y->data, x->data, n);
    return FE_OK;
}

void fe_k_strided_copy(void *dst, const void *src, int rank, const int64_t *dims, const int64_t *sx,
                       int es)
{
    int64_t shape[FE_MAX_RANK], st[2][FE_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        shape[i] = dims[i];
        st[1][i] = sx[i];
    }
    fe_k_strides(shape, rank, st[0]);
    rank = fe_k_coalesce(rank, shape, 2, st);
    int64_t inner = shape[rank - 1], rows = 1;
    for (int i = 0; i < rank - 1; i++)
        rows *= shape[i];
    if (inner * rows == 0)
        return;
    #pragma omp parallel for schedule(static) if (inner * rows >= PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        int64_t oy = fe_k_offset(rank - 1, shape, st[0], r);
        int64_t ox = fe_k_offset(rank - 1, shape, st[1], r);
        copy_strided((char *)dst + oy * es, (const char *)src + ox * es, st[1][rank - 1], inner, es);
    }
}

/* y[idx] = x[offset by strides sx] over y's shape. */
static void gather_copy(const fe_k_tensor *x, const int64_t *sx, fe_k_tensor *y)
{
    fe_k_strided_copy(y->data, x->data, y->rank, y->shape, sx, fe_dtype_size(y->dtype));
}

int fe_k_transpose(const fe_k_tensor *x, const int *perm, fe_k_tensor *y, fe_error *err)
{
    int64_t sx[FE_MAX_RANK], sp[FE_MAX_RANK];
    if (x->rank != y->rank)
        return fe_error_set(err, FE_EINPUT, "transpose: rank %d output for rank %d input", y->rank, x->rank);
    fe_k_strides(x->shape, x->rank, sx);
    for (int i = 0; i < y->rank; i++) {
        if (perm[i] < 0 || perm[i] >= x->rank || x->shape[perm[i]] != y->shape[i])
            return fe_error_set(err, FE_EINPUT, "transpose: bad permutation at axis %d", i);
        sp[i] = sx[perm[i]];
    }
    gather_copy(x, sp, y);
    return FE_OK;
}

int64_t fe_k_slice_norm(int64_t n, int64_t *start, int64_t *end, int64_t step)
{
    int64_t s = *start, e = *end;
    if (s < 0)
        s += n;
    if (e < 0)
        e += n;
    s = s < 0 ? 0 : s > n ? n : s;
    e = e < 0 ? 0 : e > n ? n : e;
    *start = s;
    *end = e;
    if (step <= 0 || e <= s)
        return 0;
    return 1 + (e - s - 1) / step;   /* not (e - s + step - 1) / step: overflows for a huge step */
}

int fe_k_slice(const fe_k_tensor *x, int axis, int64_t start, int64_t end, int64_t step,
               fe_k_tensor *y, fe_error *err)
{
    int64_t sx[FE_MAX_RANK];
    if (step <= 0)
        return fe_error_set(err, FE_EINPUT, "slice: step must be > 0, got %lld", (long long)step);
    int64_t len = fe_k_slice_norm(x->shape[axis], &start, &end, step);
    if (y->shape[axis] != len)
        return fe_error_set(err, FE_EINPUT, "slice: output has %lld along axis %d, expected %lld",
                            (long long)y->shape[axis], axis, (long long)len);
    fe_k_strides(x->shape, x->rank, sx);
    /* start offset folded into the base pointer; the axis steps by step */
    fe_k_tensor xv = *x;
    xv.data = (char *)x->data + start * sx[axis] * fe_dtype_size(x->dtype);
    sx[axis] = len > 1 ? sx[axis] * step : 0;   /* one element: a huge step is never taken */
    gather_copy(&xv, sx, y);
    return FE_OK;
}

int fe_k_concat(const fe_k_tensor *const *xs, int n, int axis, fe_k_tensor *y, fe_error *err)
{
    int64_t A = 1, B = 1, off = 0, Y = y->shape[axis];
    int es = fe_dtype_size(y->dtype);
    for (int i = 0; i < axis; i++)
        A *= y->shape[i];
    for (int i = axis + 1; i < y->rank; i++)
        B *= y->shape[i];
    for (int k = 0; k < n; k++) {
        int64_t nk = xs[k]->shape[axis];
        if (off + nk > Y || fe_k_numel(xs[k]) != A * nk * B)
            return fe_error_set(err, FE_EINPUT, "concat: input %d does not fit the output", k + 1);
        /* inputs of other dtypes convert to the output's, the promoted
         * dtype shape inference gives concat (as torch.cat does) */
        int xdt = xs[k]->dtype, xes = fe_dtype_size(xdt);
        #pragma omp parallel for schedule(static) if (A * nk * B >= PAR_MIN)
        for (int64_t a = 0; a < A; a++) {
            char *dst = (char *)y->data + ((a * Y + off) * B) * es;
            const char *src = (const char *)xs[k]->data + (a * nk * B) * xes;
            if (xdt == y->dtype)
                memcpy(dst, src, (size_t)(nk * B * es));
            else
                fe_k_convert(dst, y->dtype, src, xdt, nk * B);
        }
        off += nk;
    }
    if (off != Y)
        return fe_error_set(err, FE_EINPUT, "concat: inputs cover %lld of %lld along axis %d",
                            (long long)off, (long long)Y, axis);
    return FE_OK;
}

/* Source index along one axis of size n for output position i, or -1 for a
 * constant fill. */
static int64_t pad_src(int64_t i, int64_t before, int64_t n, int mode)
{
    int64_t s = i - before;
    if (s >= 0 && s < n)
        return s;
    if (mode == FE_K_PAD_CONSTANT || n <= 0)
        return -1;
    if (mode == FE_K_PAD_REPLICATE)
        return s < 0 ? 0 : n - 1;
    if (n == 1)
        return 0;
    int64_t p = 2 * (n - 1);       /* reflect without repeating the edge */
    s %= p;
    if (s < 0)
        s += p;
    return s < n ? s : p - s;
}

/* Elements [a, b) of a row of es-byte elements set to fill. */
static void fill_run(char *row, int64_t a, int64_t b, const unsigned char *fill, int es)
{
    int same = 1;
    for (int k = 1; k < es; k++)
        same &= fill[k] == fill[0];
    if (b <= a)
        return;
    if (same) {
        memset(row + a * es, fill[0], (size_t)((b - a) * es));
        return;
    }
    for (int64_t j = a; j < b; j++)
        memcpy(row + j * es, fill, (size_t)es);
}

void fe_k_pad_fill(int dt, double value, unsigned char fill[8])
{
    memset(fill, 0, 8);
    if (fe_k_dtype_is_int(dt)) {
        int64_t v = fe_k_f64_to_i64(value);
        fe_k_store_i64(fill, dt, 0, &v, 1);
    } else {
        float v = (float)value;
        fe_k_store_f32(fill, dt, 0, &v, 1);
    }
}

int fe_k_pad(const fe_k_tensor *x, const int64_t *pads, int npads, int mode, double value,
             fe_k_tensor *y, fe_error *err)
{
    int rank = x->rank, es = fe_dtype_size(x->dtype);
    int64_t before[FE_MAX_RANK] = {0}, sx[FE_MAX_RANK];
    int64_t *tab[FE_MAX_RANK] = {0};
    unsigned char fill[8];
    int rc = FE_OK;

    if (npads % 2 || npads / 2 > rank)
        return fe_error_set(err, FE_EINPUT, "pad: %d pad values for a rank %d tensor", npads, rank);
    for (int k = 0; k < npads / 2; k++)
        before[rank - 1 - k] = pads[2 * k];
    for (int i = 0; i < rank; i++) {
        int64_t after = 0;
        for (int k = 0; k < npads / 2; k++)
            if (rank - 1 - k == i)
                after = pads[2 * k + 1];
        if (x->shape[i] + before[i] + after != y->shape[i])
            return fe_error_set(err, FE_EINPUT, "pad: output axis %d has %lld, expected %lld", i,
                                (long long)y->shape[i], (long long)(x->shape[i] + before[i] + after));
        if (mode == FE_K_PAD_REFLECT && (before[i] >= x->shape[i] || after >= x->shape[i]) &&
            (before[i] > 0 || after > 0))
            return fe_error_set(err, FE_EINPUT, "pad: reflect padding (%lld, %lld) must be smaller "
                                "than the axis size %lld", (long long)before[i], (long long)after,
                                (long long)x->shape[i]);
    }
    fe_k_pad_fill(x->dtype, value, fill);
    for (int i = 0; i < rank; i++) {
        tab[i] = fe_malloc((size_t)(y->shape[i] ? y->shape[i] : 1) * sizeof(int64_t), err);
        if (!tab[i]) {
            rc = FE_ENOMEM;
            goto out;
        }
        for (int64_t j = 0; j < y->shape[i]; j++)
            tab[i][j] = pad_src(j, before[i], x->shape[i], mode);
    }
    fe_k_strides(x->shape, rank, sx);
    {
        int64_t inner = rank ? y->shape[rank - 1] : 1, rows = fe_k_numel(y) / (inner ? inner : 1);
        /* the innermost axis's positions that come from the source */
        int64_t jlo = 0, jhi = 0;
        if (rank) {
            jlo = before[rank - 1] > 0 ? before[rank - 1] : 0;
            jhi = before[rank - 1] + x->shape[rank - 1];
            jhi = jhi < inner ? jhi : inner;
            jhi = jhi > jlo ? jhi : jlo;
        }
        if (rank == 0) {
            memcpy(y->data, x->data, (size_t)es);
            goto out;
        }
        #pragma omp parallel for schedule(static) if (rows * inner >= PAR_MIN)
        for (int64_t r = 0; r < rows; r++) {
            int64_t rem = r, ox = 0;
            int valid = 1;
            for (int i = rank - 2; i >= 0; i--) {
                int64_t j = rem % y->shape[i];
                rem /= y->shape[i];
                if (tab[i][j] < 0)
                    valid = 0;
                else
                    ox += tab[i][j] * sx[i];
            }
            char *dst = (char *)y->data + r * inner * es;
            const char *src = (const char *)x->data + ox * es;
            const int64_t *t = tab[rank - 1];
            if (mode != FE_K_PAD_CONSTANT) {
                for (int64_t j = 0; j < inner; j++)
                    memcpy(dst + j * es, valid && t[j] >= 0 ? src + t[j] * es : (const char *)fill,
                           (size_t)es);
                continue;
            }
            /* Constant: the row is fill, one run of the source, fill (one
             * memcpy for the run; element by element it ran at 3 GB/s). */
            int64_t lo = valid ? jlo : inner, hi = valid ? jhi : inner;
            fill_run(dst, 0, lo, fill, es);
            if (hi > lo)
                memcpy(dst + lo * es, src + (lo - before[rank - 1]) * es, (size_t)((hi - lo) * es));
            fill_run(dst, hi > lo ? hi : lo, inner, fill, es);
        }
    }
out:
    for (int i = 0; i < rank; i++)
        free(tab[i]);
    return rc;
}

int fe_k_expand(const fe_k_tensor *x, fe_k_tensor *y, fe_error *err)
{
    int64_t sx[FE_MAX_RANK];
    if (x->dtype != y->dtype || fe_k_bcast_strides(x, y->rank, y->shape, sx) < 0)
        return fe_error_set(err, FE_EINPUT, "expand: input does not broadcast to the output shape");
    gather_copy(x, sx, y);
    return FE_OK;
}

int fe_k_gather(const fe_k_tensor *data, const fe_k_tensor *idx, int axis, fe_k_tensor *y,
                fe_error *err)
{
    int64_t A = 1, B = 1, N = data->shape[axis], I = fe_k_numel(idx);
    int es = fe_dtype_size(data->dtype);
    int64_t bad = 0, badv = 0;
    for (int i = 0; i < axis; i++)
        A *= data->shape[i];
    for (int i = axis + 1; i < data->rank; i++)
        B *= data->shape[i];
    if (fe_k_numel(y) != A * I * B || y->dtype != data->dtype)
        return fe_error_set(err, FE_EINPUT, "gather: output shape does not match data and indices");
    int64_t *ix = fe_malloc((size_t)(I ? I : 1) * sizeof(int64_t), err);
    if (!ix)
        return FE_ENOMEM;
    fe_k_load_i64(idx->data, idx->dtype, 0, ix, I);
    for (int64_t i = 0; i < I; i++) {
        int64_t v = ix[i] < 0 ? ix[i] + N : ix[i];
        if (v < 0 || v >= N) {
            bad = 1;
            badv = ix[i];
            break;
        }
        ix[i] = v;
    }
    if (bad) {
        free(ix);
        return fe_error_set(err, FE_EINPUT, "gather: index %lld is out of range for an axis of size "
                            "%lld (valid: %lld .. %lld)", (long long)badv, (long long)N,
                            (long long)-N, (long long)(N - 1));
    }
    #pragma omp parallel for schedule(static) if (A * I * B >= PAR_MIN)
    for (int64_t t = 0; t < A * I; t++) {
        int64_t a = t / (I ? I : 1), i = t % (I ? I : 1);
        memcpy((char *)y->data + t * B * es,
               (const char *)data->data + ((a * N + ix[i]) * B) * es, (size_t)(B * es));
    }
    free(ix);
    return FE_OK;
}
