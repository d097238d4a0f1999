/* positions.c: arange and triu / tril (see positions.h). */
#include <string.h>

#include "convert.h"
#include "positions.h"

int fe_k_arange(int64_t start, int64_t step, fe_k_tensor *y, fe_error *err)
{
    enum { CH = 1024 };
    int64_t v[CH], n = fe_k_numel(y);
    if (y->rank != 1)
        return fe_error_set(err, FE_EINPUT, "arange: the output has rank %d; expected 1", y->rank);
    for (int64_t o = 0; o < n; o += CH) {
        int64_t m = n - o < CH ? n - o : CH;
        for (int64_t i = 0; i < m; i++)   /* wraps as torch's int64 does */
            v[i] = (int64_t)((uint64_t)start + (uint64_t)step * (uint64_t)(o + i));
        fe_k_store_i64(y->data, y->dtype, o, v, m);
    }
    return FE_OK;
}

int fe_k_trilu(const fe_k_tensor *x, int upper, int64_t diagonal, fe_k_tensor *y, fe_error *err)
{
    if (x->rank < 2 || x->rank != y->rank || x->dtype != y->dtype ||
        memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->rank))
        return fe_error_set(err, FE_EINPUT, "trilu: input and output must have one shape of "
                            "rank >= 2");
    int64_t rows = x->shape[x->rank - 2], cols = x->shape[x->rank - 1];
    int64_t mats = fe_k_numel(x) / (rows * cols);
    size_t es = (size_t)fe_dtype_size(x->dtype);
    const char *src = x->data;
    char *dst = y->data;
    for (int64_t m = 0; m < mats; m++)
        for (int64_t r = 0; r < rows; r++) {
            /* the kept columns of row r are one run: [r + d, cols) or [0, r + d] */
            int64_t lo = upper ? r + diagonal : 0, hi = upper ? cols : r + diagonal + 1;
            lo = lo < 0 ? 0 : lo > cols ? cols : lo;
            hi = hi < lo ? lo : hi > cols ? cols : hi;
            size_t row = (size_t)((m * rows + r) * cols) * es;
            if (src != dst)
                memcpy(dst + row + (size_t)lo * es, src + row + (size_t)lo * es,
                       (size_t)(hi - lo) * es);
            memset(dst + row, 0, (size_t)lo * es);
            memset(dst + row + (size_t)hi * es, 0, (size_t)(cols - hi) * es);
        }
    return FE_OK;
}
