/* elemwise.h: elementwise and broadcast kernels (unary ops, cast, binary ops,
 * where), on float32 arrays for the fused executor and on whole tensors of
 * any dtype for the reference.
 *
 * Ops are named by their op registry ids (FE_OP_* in ops.h). Floating
 * outputs compute in float32; integer and bool outputs compute in int64
 * (wrapping like two's complement, integer division truncates, x / 0 = 0).
 */
#ifndef FE_ELEMWISE_H
#define FE_ELEMWISE_H

#include <stdint.h>

#include "error.h"
#include "ktensor.h"

/* Unary op on n floats; y may equal x. approx_tanh selects GELU's tanh
 * form. Ops outside the elementwise kind are a no-op copy. */
void fe_k_unary_f32(int op, int approx_tanh, const float *x, float *y, int64_t n);

/* Binary op: y[i] = a[i*sa] op b[i*sb] with sa, sb in {0, 1} (0 repeats a
 * single value); y may equal a or b when their stride is 1. */
void fe_k_binary_f32(int op, const float *a, int sa, const float *b, int sb,
                     float *y, int64_t n);

/* y[i] = c[i*sc] != 0 ? a[i*sa] : b[i*sb]. */
void fe_k_where_f32(const float *c, int sc, const float *a, int sa,
                    const float *b, int sb, float *y, int64_t n);

/* y[i] = a[i*sa] * b[i*sb] + c[i*sc] with one rounding (the fused
 * executor's multiply-add peephole). */
void fe_k_fma_f32(const float *a, int sa, const float *b, int sb, const float *c, int sc,
                  float *y, int64_t n);

/* The same returning the maximum of y[0..n) as fe_k_row_max would (NaN if
 * any is NaN, -inf for n = 0): a softmax's prologue finds its row max in
 * the pass that writes the row. */
float fe_k_fma_f32_max(const float *a, int sa, const float *b, int sb, const float *c, int sc,
                       float *y, int64_t n);

/* The same on int64 values (for integer and bool outputs). */
void fe_k_unary_i64(int op, const int64_t *x, int64_t *y, int64_t n);
void fe_k_binary_i64(int op, const int64_t *a, int sa, const int64_t *b, int sb,
                     int64_t *y, int64_t n);

/* Whole tensors. y is preallocated with the broadcast shape of the inputs
 * (and its dtype decides the compute type); returns FE_OK or FE_EINPUT with
 * err set when shapes do not broadcast. cast is fe_k_unary with FE_OP_CAST. */
int fe_k_unary(int op, int approx_tanh, const fe_k_tensor *x, fe_k_tensor *y, fe_error *err);
int fe_k_binary(int op, const fe_k_tensor *a, const fe_k_tensor *b, fe_k_tensor *y,
                fe_error *err);
int fe_k_where(const fe_k_tensor *c, const fe_k_tensor *a, const fe_k_tensor *b,
               fe_k_tensor *y, fe_error *err);

/* y = x * s elementwise (all_reduce on one host, scaling helpers). */
int fe_k_scale(const fe_k_tensor *x, double s, fe_k_tensor *y, fe_error *err);

#endif
