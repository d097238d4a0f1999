/* tensor_mem.c: tensor memory, on huge pages when large (see tensor_mem.h). */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "tensor_mem.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *fe_k_tensor_mem(size_t bytes)
{
    void *p = NULL;
    size_t n = bytes ? (bytes + 63) & ~(size_t)63 : 64;
    int big = n >= 2 * HUGE_PAGE;
    if (n < bytes || posix_memalign(&p, big ? HUGE_PAGE : 64, n))
        return NULL;
#ifdef MADV_HUGEPAGE
    /* Only the whole spans: a huge page for the tail would commit up to
     * 2 MiB past the tensor. The advice may fail (a kernel without THP);
     * the memory is as good without it. */
    if (big)
        (void)madvise(p, n & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}
