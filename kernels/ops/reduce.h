/* reduce.h: reductions (sum, mean, amax, amin over any axes) and softmax /
 * log_softmax along one axis; row primitives shared with the fused executor.
 *
 * Row primitives work on one contiguous float32 row in cache. NaN
 * propagates through every one of them (amax/amin included, as in PyTorch).
 */
#ifndef FE_REDUCE_H
#define FE_REDUCE_H

#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "ktensor.h"

/* Row statistics of x[0..n). Sums use 32 float32 lanes, then a tree. */
float fe_k_row_sum(const float *x, int64_t n);
float fe_k_row_sumsq(const float *x, int64_t n);
float fe_k_row_max(const float *x, int64_t n);   /* -inf for n = 0 */
float fe_k_row_min(const float *x, int64_t n);   /* +inf for n = 0 */
/* Reduce a row with op FE_OP_SUM, FE_OP_MEAN, FE_OP_AMAX or FE_OP_AMIN. */
float fe_k_row_reduce(int op, const float *x, int64_t n);
/* The identity of reduction op (0, -inf for amax, +inf for amin), and
 * acc[j] = op(acc[j], x[j]) for j < n in double: a column reduction's
 * step, NaN propagating as in the reference reductions. */
double fe_k_reduce_identity(int op);
void fe_k_col_accumulate(int op, double *acc, const float *x, int64_t n);
/* acc[j] = op(acc[j], x[j]) for j < n: two column reductions' partial
 * results into one (a sum of sums, a max of maxima). */
void fe_k_col_combine(int op, double *acc, const double *x, int64_t n);

/* y = softmax(x) (or log_softmax when log is set) over one row; y may be x.
 * A row of all -inf gives NaN, as PyTorch does. */
void fe_k_row_softmax(const float *x, float *y, int64_t n, int log);

/* The same writing the result to y with non-temporal stores (y is float32
 * output memory not re-read soon), given the row's maximum m
 * (fe_k_row_max, or found while the row was written: fe_k_fma_f32_max);
 * tmp (n floats) holds the exponentials; pf (may be NULL): the next row's
 * inputs, one row of n floats per stream. */
void fe_k_row_softmax_nt_max(const float *x, float *tmp, float *y, int64_t n, int log, float m,
                             const fe_k_pf *pf);

/* Reduce x over the axes whose bit is set in axes_mask (bit i = axis i)
 * with op FE_OP_SUM / MEAN / AMAX / AMIN into y, whose elements are x's kept
 * axes in order (keepdim or not is only y's shape). Accumulates in double.
 * Returns FE_OK, or FE_ENOMEM with err set. */
int fe_k_reduce(int op, const fe_k_tensor *x, unsigned axes_mask, fe_k_tensor *y,
                fe_error *err);

/* Softmax (log = 0) or log_softmax (log = 1) of x along axis (normalised,
 * 0 <= axis < rank) into y of the same shape. */
int fe_k_softmax(const fe_k_tensor *x, int axis, int log, fe_k_tensor *y, fe_error *err);

#endif
