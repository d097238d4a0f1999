/* cache.h: the cache sizes kernels tune for (tile widths, when to stream
 * stores past the cache), read once from sysfs. */
#ifndef FE_CACHE_H
#define FE_CACHE_H

/* Bytes of the last-level cache shared by the CPUs this process runs on,
 * and of one core's L2. Sysfs first (sysconf reports the host's total L3 in
 * some VMs); defaults 32 MiB and 1 MiB when unknown. */
long fe_k_cache_llc(void);
long fe_k_cache_l2(void);

#endif
