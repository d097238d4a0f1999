/* norm.h: normalisations: rms_norm and layer_norm over trailing axes, and
 * inference batch_norm over axis 1. Row primitives are shared with the
 * fused executor.
 */
#ifndef FE_NORM_H
#define FE_NORM_H

#include <stdint.h>

#include "cache.h"
#include "error.h"
#include "ktensor.h"

/* y = x * rsqrt(mean(x^2) + eps) * w over one row of n; w may be NULL
 * (no weight); y may be x. ss, when not NULL, is the row's sum of squares,
 * found by the caller (a fused pass that made the row). */
void fe_k_row_rmsnorm(const float *x, const float *w, float *y, int64_t n, float eps,
                      const float *ss);
/* rms_norm writing y (float32 output memory) with non-temporal stores,
 * pulling pf's streams (the next row's inputs, n floats each; may be NULL)
 * into cache as it writes. */
void fe_k_row_rmsnorm_nt(const float *x, const float *w, float *y, int64_t n, float eps,
                         const float *ss, const fe_k_pf *pf);
/* y = (x - mean) * rsqrt(var + eps) * w + b, biased variance (two passes);
 * w and b may be NULL. */
void fe_k_row_layernorm(const float *x, const float *w, const float *b, float *y,
                        int64_t n, float eps);

/* Whole tensors: normalise over the last `n` elements of each row (n = the
 * product of normalized_shape). weight / bias may be NULL and otherwise hold
 * n elements. layer = 0 is rms_norm, 1 is layer_norm. */
int fe_k_norm(int layer, const fe_k_tensor *x, const fe_k_tensor *w, const fe_k_tensor *b,
              int64_t n, double eps, fe_k_tensor *y, fe_error *err);

/* Inference batch norm over channel axis 1 of x [N, C, ...]. */
int fe_k_batch_norm(const fe_k_tensor *x, const fe_k_tensor *w, const fe_k_tensor *b,
                    const fe_k_tensor *mean, const fe_k_tensor *var, double eps,
                    fe_k_tensor *y, fe_error *err);

#endif
