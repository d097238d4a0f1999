/* arena.c: first-fit placement by lifetime (arena.h). Largest first, as
 * offline allocators do: the big tensors take the bottom of the block and
 * small ones fill the gaps their lifetimes leave. For each tensor the
 * placed tensors alive at the same time are sorted by offset and the
 * first gap that fits is taken: O(n^2 log n) over n tensors. */
#include <stdlib.h>

#include "arena.h"

static int by_size(const void *a, const void *b)
{
    const fe_life *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return (x->t > y->t) - (x->t < y->t);
}

static int by_off(const void *a, const void *b)
{
    const fe_life *x = *(const fe_life *const *)a, *y = *(const fe_life *const *)b;
    return (x->off > y->off) - (x->off < y->off);
}

static int64_t rounded(int64_t bytes, int64_t align)
{
    return (bytes + align - 1) / align * align;
}

int64_t fe_arena_place(fe_life *lv, int n, int64_t align)
{
    int64_t top = 0;
    if (n <= 0)
        return 0;
    const fe_life **live = malloc(((size_t)n + 1) * sizeof *live);
    if (!live)
        return -1;
    if (align < 1)
        align = 1;
    qsort(lv, (size_t)n, sizeof *lv, by_size);
    for (int i = 0; i < n; i++) {
        int m = 0;
        for (int j = 0; j < i; j++)
            if (!(lv[j].last < lv[i].def || lv[i].last < lv[j].def))
                live[m++] = &lv[j];
        qsort(live, (size_t)m, sizeof *live, by_off);
        int64_t size = rounded(lv[i].bytes, align), off = 0;
        for (int k = 0; k < m; k++) {
            if (live[k]->off >= off + size)
                break;   /* the gap below it fits */
            int64_t end = live[k]->off + rounded(live[k]->bytes, align);
            if (end > off)
                off = end;
        }
        lv[i].off = off;
        if (off + size > top)
            top = off + size;
    }
    free(live);
    return top;
}
