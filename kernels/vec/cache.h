/* cache.h: the cache sizes kernels tune for (tile widths, when to stream
 * stores past the cache), read once from sysfs. */
#ifndef FE_CACHE_H
#define FE_CACHE_H

#include <stdint.h>

/* Bytes of the last-level cache shared by the CPUs this process runs on,
 * and of one core's L2. Sysfs first (sysconf reports the host's total L3 in
 * some VMs); defaults 32 MiB and 1 MiB when unknown. */
long fe_k_cache_llc(void);
long fe_k_cache_l2(void);

/* The part of the last-level cache this process's threads can expect to
 * keep: the LLC, but at most 12 MiB per OpenMP thread (the most any x86
 * part gives a core), since a virtual machine reports its host chip's
 * whole L3. The LLC itself when fe_k_cache_set named one. For choices that
 * ask whether data stays cached (streaming stores). */
long fe_k_cache_share(void);

/* Tune for these sizes instead of the detected ones (0 keeps a size as
 * detected): for hosts whose sysfs misreports, and for tests that must
 * check a cache-dependent choice (streaming stores, column blocks) the same
 * way on every machine. Programs compiled afterwards see the new sizes. */
void fe_k_cache_set(long l2, long llc);

/* Memory to pull into cache while a kernel works on data already there:
 * the hardware prefetcher idles while a tile is worked on in L1, so
 * without this, loading a tile and computing it take turns. A kernel at
 * its element i fetches element i of every stream (one cache line per 16
 * floats); the addresses are only hints, and may lie past any buffer. */
typedef struct fe_k_pf {
    const float *p[4];
    int n;
} fe_k_pf;

/* The address of stream k's element i, computed without pointer arithmetic
 * (the stream may point past its buffer). */
static inline const char *fe_k_pf_at(const fe_k_pf *pf, int k, int64_t i)
{
    return (const char *)((uintptr_t)pf->p[k] + (uintptr_t)i * sizeof(float));
}

#endif
