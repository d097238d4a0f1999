/* iter.h: broadcast iteration. An output shape and its operands' strides
 * (0 on broadcast axes) are coalesced into the fewest axes, so that a kernel
 * loops over "rows" (all axes but the last) and runs a contiguous or
 * broadcast inner loop over the last axis. And row iteration on threads,
 * for the reference kernels that take their rows one at a time through
 * float32 scratch.
 */
#ifndef FE_ITER_H
#define FE_ITER_H

#include "ktensor.h"

#define FE_K_ITER_OPS 8   /* output + up to 7 inputs */

typedef struct fe_k_iter {
    int rank;                           /* coalesced rank, >= 1 */
    int nops;                           /* operand 0 is the output */
    int64_t shape[FE_MAX_RANK];
    int64_t st[FE_K_ITER_OPS][FE_MAX_RANK];
    int64_t inner;                      /* shape[rank - 1] */
    int64_t rows;                       /* product of the other axes */
} fe_k_iter;

/* Set up iteration of out with inputs ins[0..nin) broadcast to it. Returns
 * -1 if an input does not broadcast to out's shape. The inner stride of
 * every operand is 0 or 1. */
int fe_k_iter_init(fe_k_iter *it, const fe_k_tensor *out,
                   const fe_k_tensor *const *ins, int nin);

/* Element offset of each operand at the start of row (0 <= row < rows). */
void fe_k_iter_row(const fe_k_iter *it, int64_t row, int64_t *off);

/* Merge adjacent axes of shape[0..rank) that every operand's strides
 * (st[k], nops of them) traverse contiguously, and drop size-1 axes.
 * Works in place and returns the new rank (>= 1). */
int fe_k_coalesce(int rank, int64_t *shape, int nops, int64_t (*st)[FE_MAX_RANK]);

/* Work on row r, given n floats of scratch private to the calling thread. */
typedef void (*fe_k_row_fn)(float *row, int64_t r, void *ctx);

/* Call fn(scratch, r, ctx) for every r in [0, rows), on threads if asked.
 * Returns 0, or -1 when a thread could not have its scratch (its rows were
 * then skipped). */
int fe_k_each_row(int64_t rows, int64_t n, int threads, fe_k_row_fn fn, void *ctx);

/* Offset of flattened index idx over axes shape[0..rank) with strides st. */
static inline int64_t fe_k_offset(int rank, const int64_t *shape, const int64_t *st, int64_t idx)
{
    int64_t off = 0;
    for (int i = rank - 1; i >= 0 && idx; i--) {
        int64_t q = idx / shape[i];
        off += (idx - q * shape[i]) * st[i];
        idx = q;
    }
    return off;
}

#endif
