/* scratch.h: reusable 64-byte aligned scratch buffers for kernels (GEMM
 * packing, attention scores). Large buffers freshly mapped on every call
 * cost page faults that dwarf the kernel; this keeps a few recently freed
 * ones. Thread-safe. */
#ifndef FE_SCRATCH_H
#define FE_SCRATCH_H

#include <stddef.h>

/* A buffer of at least bytes (contents undefined), or NULL when out of
 * memory. Return it with fe_k_scratch_put, never free(): it starts past a
 * header of the block malloc gave (a buffer never returned leaks). */
void *fe_k_scratch_get(size_t bytes);
/* Give a buffer from fe_k_scratch_get back (NULL is ignored). */
void fe_k_scratch_put(void *p);
/* Free every kept buffer (also done at exit). */
void fe_k_scratch_trim(void);

#endif
