/* positions.h: kernels whose values come from element positions: arange
 * and triu / tril (the registry's arange and trilu ops), what positions
 * and causal masks are built from when their length is a symbolic dim.
 */
#ifndef FE_POSITIONS_H
#define FE_POSITIONS_H

#include <stdint.h>

#include "error.h"
#include "ktensor.h"

/* y[i] = start + step * i, for y's length, in y's dtype (computed in int64,
 * then converted as fe_k_store_i64 does). */
int fe_k_arange(int64_t start, int64_t step, fe_k_tensor *y, fe_error *err);

/* y = x where the last two axes' column - row >= diagonal (upper) or
 * <= diagonal (lower), else zero; x and y have one shape, rank >= 2. */
int fe_k_trilu(const fe_k_tensor *x, int upper, int64_t diagonal, fe_k_tensor *y, fe_error *err);

#endif
