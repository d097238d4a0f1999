/* convert.h: dtype conversions. Every kernel computes in float32 (integers in
 * int64) and stores f16/bf16 by rounding to nearest even; these functions are
 * the only place that knows how each dtype is laid out in memory.
 */
#ifndef FE_CONVERT_H
#define FE_CONVERT_H

#include <stdint.h>

/* One value, portable (no SIMD). NaN stays NaN (quiet), infinities and
 * signed zeros are kept, f32 -> f16 overflows to infinity and keeps
 * subnormals, all rounding to nearest even. */
uint16_t fe_k_f32_to_f16(float x);
float fe_k_f16_to_f32(uint16_t h);
uint16_t fe_k_f32_to_bf16(float x);
float fe_k_bf16_to_f32(uint16_t h);

/* Float to integer as casts do: truncate toward zero; NaN gives 0 and values
 * beyond the type's range saturate (C leaves both undefined). */
int64_t fe_k_f32_to_i64(float x);
int64_t fe_k_f64_to_i64(double x);

/* n elements of src (dtype sdt) starting at element index off, converted to
 * float32 into dst. Bool and integers convert exactly up to 2^24. */
void fe_k_load_f32(const void *src, int sdt, int64_t off, float *dst, int64_t n);
/* n float32 values into dst (dtype ddt) at element index off: f16/bf16 round
 * to nearest even, integers truncate (fe_k_f32_to_i64, then wrap to the
 * width), bool stores x != 0 (NaN is true, as in PyTorch). */
void fe_k_store_f32(void *dst, int ddt, int64_t off, const float *src, int64_t n);
/* Like fe_k_store_f32 but with non-temporal stores where the dtype allows
 * (f32, f16): for large outputs that will not be re-read soon. Callers
 * issue fe_k_stream_fence() before another thread reads the data. */
void fe_k_store_f32_nt(void *dst, int ddt, int64_t off, const float *src, int64_t n);
void fe_k_stream_fence(void);

/* Integer view of n elements (bool, i8, i32, i64 exactly; floats truncate). */
void fe_k_load_i64(const void *src, int sdt, int64_t off, int64_t *dst, int64_t n);
/* n int64 values into dst of dtype ddt (integers wrap, bool is != 0, floats
 * convert with rounding). */
void fe_k_store_i64(void *dst, int ddt, int64_t off, const int64_t *src, int64_t n);

/* Round each value to what dtype dt can hold, as storing and reloading it
 * would (f16/bf16 rounding, integer truncation and wrap, bool to 0/1). f32
 * leaves values unchanged. The fused executor uses it so that intermediates
 * it never stores still carry their tensor's precision. */
void fe_k_round_to(int dt, float *x, int64_t n);

/* Convert n elements between any two dtypes (same rules as above). */
void fe_k_convert(void *dst, int ddt, const void *src, int sdt, int64_t n);

/* 1 if dt is stored as integers or bool (computed in int64), else 0. */
int fe_k_dtype_is_int(int dt);
/* 1 if float32 holds every value of dt exactly (not i32 or i64, exact only
 * up to 2^24): what may pass through the fused executor's f32 slots. */
int fe_k_dtype_f32_exact(int dt);

#endif
