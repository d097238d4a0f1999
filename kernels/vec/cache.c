/* cache.c: cache sizes from sysfs (see cache.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cache.h"

/* "32768K" / "1M" / "512" in a sysfs cache size file, or -1 */
static long sysfs_size(int index)
{
    char path[96], buf[64];
    long v = -1;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (fgets(buf, sizeof buf, f)) {
        char *end;
        v = strtol(buf, &end, 10);
        if (*end == 'K')
            v <<= 10;
        else if (*end == 'M')
            v <<= 20;
    }
    fclose(f);
    return v > 0 ? v : -1;
}

static long cached(int level, long *slot, long dflt)
{
    long v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (v > 0)
        return v;
    /* index2 is L2, index3 the L3 on x86 sysfs layouts */
    v = sysfs_size(level);
    if (v <= 0) {
#ifdef _SC_LEVEL3_CACHE_SIZE
        v = sysconf(level == 3 ? _SC_LEVEL3_CACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
#endif
    }
    if (v <= 0)
        v = dflt;
    __atomic_store_n(slot, v, __ATOMIC_RELAXED);
    return v;
}

static long llc, l2;
static int llc_given;   /* fe_k_cache_set named the LLC: no share is guessed */

long fe_k_cache_llc(void)
{
    return cached(3, &llc, 32L << 20);
}

long fe_k_cache_l2(void)
{
    return cached(2, &l2, 1L << 20);
}

/* The most L3 any x86 part gives one core: Zen 4 X3D's 96 MiB over 8
 * cores. A virtual machine reports its host chip's whole L3 (480 MiB, seen
 * on a 2-vCPU Xeon guest), of which its few threads hold a small part. */
#define LLC_PER_THREAD_MAX (12L << 20)

long fe_k_cache_share(void)
{
    long v = fe_k_cache_llc();
    if (__atomic_load_n(&llc_given, __ATOMIC_RELAXED))
        return v;
    long threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    long cap = threads * LLC_PER_THREAD_MAX;
    return v < cap ? v : cap;
}

void fe_k_cache_set(long l2_bytes, long llc_bytes)
{
    __atomic_store_n(&llc_given, llc_bytes > 0, __ATOMIC_RELAXED);
    __atomic_store_n(&l2, l2_bytes > 0 ? l2_bytes : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&llc, llc_bytes > 0 ? llc_bytes : 0, __ATOMIC_RELAXED);
}
