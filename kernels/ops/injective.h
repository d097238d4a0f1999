/* injective.h: data movement kernels: reshape (copy), transpose, slice,
 * concat, pad, expand, gather / embedding. They move elements of any dtype
 * as bytes and never convert; the output tensor is preallocated with the
 * shape the op registry inferred. Each returns FE_OK or FE_EINPUT with err
 * set (out-of-range gather indices, shapes that do not fit).
 */
#ifndef FE_INJECTIVE_H
#define FE_INJECTIVE_H

#include <stdint.h>

#include "error.h"
#include "ktensor.h"

/* The elements of a strided view into contiguous dst: dst[i] (row-major
 * over dims[0, rank)) = src[Σ index_a * sx[a]] (strides in elements of es
 * bytes; 0 repeats one element). The kernel of transpose, slice and expand,
 * and of the fused programs that only copy a view (fused_run.c). */
void fe_k_strided_copy(void *dst, const void *src, int rank, const int64_t *dims, const int64_t *sx,
                       int es);
/* y = x with another shape (same element count and dtype). */
int fe_k_copy(const fe_k_tensor *x, fe_k_tensor *y, fe_error *err);
/* y = x.permute(perm); perm[i] is the input axis of output axis i. */
int fe_k_transpose(const fe_k_tensor *x, const int *perm, fe_k_tensor *y, fe_error *err);
/* Python slicing along axis: negative start/end count from the end,
 * out-of-range bounds clamp, step > 0. */
int fe_k_slice(const fe_k_tensor *x, int axis, int64_t start, int64_t end, int64_t step,
               fe_k_tensor *y, fe_error *err);
/* Normalise Python slice bounds for a dim of size n; returns the length. */
int64_t fe_k_slice_norm(int64_t n, int64_t *start, int64_t *end, int64_t step);
int fe_k_concat(const fe_k_tensor *const *xs, int n, int axis, fe_k_tensor *y, fe_error *err);
/* Pad modes. pads holds npads values, (before, after) pairs starting from the
 * last axis (torch.nn.functional.pad order); negative pads crop. */
enum { FE_K_PAD_CONSTANT, FE_K_PAD_REFLECT, FE_K_PAD_REPLICATE };
/* A constant pad's value as one element of dtype dt, its bytes into fill
 * (integers rounded and saturated as the kernels convert). */
void fe_k_pad_fill(int dt, double value, unsigned char fill[8]);
int fe_k_pad(const fe_k_tensor *x, const int64_t *pads, int npads, int mode, double value,
             fe_k_tensor *y, fe_error *err);
/* numpy broadcast of x to y's shape. */
int fe_k_expand(const fe_k_tensor *x, fe_k_tensor *y, fe_error *err);
/* numpy.take(data, indices, axis): y shape = data[:axis] + indices + data[axis+1:];
 * negative indices count from the end; others out of range are an error. */
int fe_k_gather(const fe_k_tensor *data, const fe_k_tensor *idx, int axis, fe_k_tensor *y,
                fe_error *err);

#endif
