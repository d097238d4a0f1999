/* iter.c: broadcast iteration (axis coalescing and row offsets), and row
 * iteration on threads. */
#include <stdlib.h>

#include "iter.h"

int fe_k_coalesce(int rank, int64_t *shape, int nops, int64_t (*st)[FE_MAX_RANK])
{
    int r = 0;
    /* drop size-1 axes first: their strides never matter */
    for (int i = 0; i < rank; i++) {
        if (shape[i] == 1)
            continue;
        shape[r] = shape[i];
        for (int k = 0; k < nops; k++)
            st[k][r] = st[k][i];
        r++;
    }
    if (r == 0) {
        shape[0] = 1;
        for (int k = 0; k < nops; k++)
            st[k][0] = 0;
        return 1;
    }
    /* merge axis i into the axis kept before it when every operand steps
     * over the pair as one axis */
    int w = 0;
    for (int i = 1; i < r; i++) {
        int ok = 1;
        for (int k = 0; k < nops && ok; k++)
            ok = st[k][w] == st[k][i] * shape[i];
        if (ok) {
            shape[w] *= shape[i];
            for (int k = 0; k < nops; k++)
                st[k][w] = st[k][i];
        } else {
            w++;
            shape[w] = shape[i];
            for (int k = 0; k < nops; k++)
                st[k][w] = st[k][i];
        }
    }
    return w + 1;
}

int fe_k_iter_init(fe_k_iter *it, const fe_k_tensor *out,
                   const fe_k_tensor *const *ins, int nin)
{
    int rank = out->rank;
    it->nops = nin + 1;
    for (int i = 0; i < rank; i++)
        it->shape[i] = out->shape[i];
    fe_k_strides(out->shape, rank, it->st[0]);
    for (int k = 0; k < nin; k++)
        if (fe_k_bcast_strides(ins[k], rank, out->shape, it->st[k + 1]) < 0)
            return -1;
    it->rank = fe_k_coalesce(rank, it->shape, it->nops, it->st);
    it->inner = it->shape[it->rank - 1];
    it->rows = 1;
    for (int i = 0; i < it->rank - 1; i++)
        it->rows *= it->shape[i];
    return 0;
}

void fe_k_iter_row(const fe_k_iter *it, int64_t row, int64_t *off)
{
    for (int k = 0; k < it->nops; k++)
        off[k] = fe_k_offset(it->rank - 1, it->shape, it->st[k], row);
}

int fe_k_each_row(int64_t rows, int64_t n, int threads, fe_k_row_fn fn, void *ctx)
{
    int fail = 0;
    #pragma omp parallel if (threads)
    {
        float *row = malloc((size_t)(n ? n : 1) * sizeof(float));
        #pragma omp for schedule(static)
        for (int64_t r = 0; r < rows; r++) {
            if (!row) {
                #pragma omp atomic write
                fail = 1;
                continue;
            }
            fn(row, r, ctx);
        }
        free(row);
    }
    return fail ? -1 : 0;
}
