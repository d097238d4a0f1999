/* blas.h: OpenBLAS, opened at its first use (blas.c).
 *
 * The library is not linked: OpenBLAS maps a 128 MiB buffer per thread in
 * its constructor, and when the address space is too small for them it
 * retries forever, so a linked OpenBLAS hung every command before main
 * under a small `ulimit -v`, BLAS or not. Opened here, only a run that
 * uses it (the matmul_blas kernel choice) depends on it, and that run is
 * refused with the numbers when the buffers cannot fit. */
#ifndef FE_BLAS_H
#define FE_BLAS_H

#include <cblas.h>

#include "error.h"

typedef __typeof__(&cblas_sgemm) fe_k_sgemm_fn;

/* OpenBLAS's cblas_sgemm, loading the library on the first call (thread-
 * safe; once loaded it stays). NULL with FE_ERUNTIME in err when it cannot
 * be loaded, or when the process's address-space limit (RLIMIT_AS, `ulimit
 * -v`) leaves too little room for its buffers: the message gives both
 * sizes and what to change. */
fe_k_sgemm_fn fe_k_blas_sgemm(fe_error *err);

#endif
