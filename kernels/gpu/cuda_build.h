/* cuda_build.h: a generated kernel compiled (NVRTC), cached on disk and
 * loaded, with what the compiler and the driver say of it.
 *
 * The cache key is the source (which holds every shape and stride, so it
 * is the group's structural signature), the architecture and the NVRTC
 * version. Images live in $FUSEENG_CACHE_DIR/cuda, else
 * $XDG_CACHE_HOME/fuseeng/cuda, else ~/.cache/fuseeng/cuda, each beside
 * its source, which a load compares before it trusts the image; writes are
 * atomic (a temporary file renamed), so processes may share the folder.
 * FUSEENG_CACHE_DIR=off turns the cache off.
 */
#ifndef FE_CUDA_BUILD_H
#define FE_CUDA_BUILD_H

#include "cuda.h"
#include "cuda_src.h"

typedef struct fe_cuda_kernel {
    fe_cu_module mod;
    fe_cu_func fn;
    fe_cuda_shape shape;
    fe_cuda_fattr attr;        /* registers, spills (local bytes), occupancy */
    char *src;                 /* owned */
    int from_cache;            /* the image came from the disk cache */
    double build_ms;           /* compile (or cache read) and load */
} fe_cuda_kernel;

/* Build k from src (taken over: freed with k, also on failure) and its
 * launch shape. The kernel's function is named "fe_kernel". FE_OK, or
 * NVRTC's error (FE_EINPUT, with the source line) or the driver's. */
int fe_cuda_kernel_build(fe_cuda_kernel *k, char *src, const fe_cuda_shape *shape, fe_error *err);
void fe_cuda_kernel_free(fe_cuda_kernel *k);

/* The cache folder in use (no trailing slash), or "" when it is off. */
const char *fe_cuda_cache_dir(void);

/* With FUSEENG_CUDA_DUMP=DIR set, src written to DIR/<hash of src>.cu (the
 * folder made if needed; a source already there is written once). Every
 * kernel a group gets passes here, also those planned without a device
 * (--show-kernels), so that a test can compile each without a GPU
 * (tests/cli/cuda_clang.sh). Nothing happens without the variable, and a
 * write that fails is ignored: the dump is for readers, never the run. */
void fe_cuda_dump(const char *src);

#endif
