/* blas.c: OpenBLAS opened at its first use (see blas.h).
 *
 * Note on OpenBLAS and the address space. OpenBLAS 0.3.21 (Debian 12's)
 * maps a BUFFER_SIZE buffer, 128 MiB on x86-64, for every thread of its
 * pool in its constructor and for every thread that calls it, and when a
 * mapping fails it tries again, forever. Linked into the command, it hung
 * every command before main under `ulimit -v 350000`. So the library is
 * opened here with dlopen, once, when a matmul_blas kernel first runs, and
 * only after checking that the buffers fit: measured on two cores, loading
 * took 300 MiB of address space (the library and one buffer per core), the
 * first sgemm 440 MiB, and with OMP_NUM_THREADS=8 sgemms from a parallel
 * region 1.4 GiB, about 10 buffers. NEED() asks for the library and 2T + 1
 * buffers, T the OpenMP threads, which covers both. Without an address-space
 * limit nothing is checked.
 *
 * The path is the OpenMP build's (FE_OPENBLAS, from the Makefile), so that
 * the process keeps one OpenMP thread pool; the soname is the fallback.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "blas.h"

#ifndef FE_OPENBLAS
#define FE_OPENBLAS "libopenblas.so.0"
#endif

#define MIB (1024.0 * 1024.0)
#define BUFFER ((size_t)132 << 20)   /* 128 MiB and its alignment, per thread */
#define LIBRARY ((size_t)64 << 20)   /* the library's code and data */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static fe_k_sgemm_fn sgemm;
static fe_error why;                 /* why sgemm is NULL */

/* Bytes of address space the process maps now (0 if unknown). */
static size_t mapped_now(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    long pg = sysconf(_SC_PAGESIZE);
    return pg > 0 ? (size_t)pages * (size_t)pg : 0;
}

/* 0 if `need` more bytes of address space can be mapped under the limit:
 * a reservation that touches nothing, undone at once. */
static int fits(size_t need)
{
    void *p = mmap(NULL, need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    munmap(p, need);
    return 0;
}

static int room_for_buffers(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    size_t need = LIBRARY + (size_t)(2 * threads + 1) * BUFFER;
    if (fits(need) == 0)
        return 0;
    size_t used = mapped_now(), lim = (size_t)rl.rlim_cur;
    fe_error_set(&why, FE_ERUNTIME, "matmul_blas: OpenBLAS needs about %.0f MiB of address space "
                 "(the library and 2 x %d + 1 buffers of 128 MiB for %d OpenMP thread%s) but the "
                 "process's "
                 "limit (ulimit -v %zu) leaves %.0f MiB, and OpenBLAS hangs when it runs short, so "
                 "it was not loaded; raise the limit, use fewer threads (OMP_NUM_THREADS=1 needs "
                 "%.0f MiB) or another kernel choice (matmul_blocked)",
                 (double)need / MIB, threads, threads, threads == 1 ? "" : "s", lim / 1024,
                 lim > used ? (double)(lim - used) / MIB : 0.0, (double)(LIBRARY + 3 * BUFFER) / MIB);
    return -1;
}

static void load(void)
{
    if (room_for_buffers())
        return;
    void *h = dlopen(FE_OPENBLAS, RTLD_NOW | RTLD_LOCAL);
    if (!h && strchr(FE_OPENBLAS, '/'))
        h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        fe_error_set(&why, FE_ERUNTIME, "matmul_blas: cannot load OpenBLAS (%s); install "
                     "libopenblas0-openmp (scripts/deps.sh) or use another kernel choice "
                     "(matmul_blocked)", e ? e : FE_OPENBLAS);
        return;
    }
    /* a void * to a function pointer, as POSIX allows for dlsym */
    void *f = dlsym(h, "cblas_sgemm");
    memcpy(&sgemm, &f, sizeof sgemm);
    if (!sgemm)
        fe_error_set(&why, FE_ERUNTIME, "matmul_blas: %s has no cblas_sgemm", FE_OPENBLAS);
}

fe_k_sgemm_fn fe_k_blas_sgemm(fe_error *err)
{
    pthread_once(&once, load);
    if (!sgemm && err)
        *err = why;
    return sgemm;
}
