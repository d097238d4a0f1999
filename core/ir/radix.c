/* radix.c: least-significant-digit radix sort of 64-bit keys (radix.h).
 * Six digits of 11 bits; one read counts all six, and a digit every key
 * shares (the high bits of small ids) costs no pass. */
#include <string.h>

#include "radix.h"

#define DIGIT 11
#define BUCKETS (1u << DIGIT)
#define PASSES ((64 + DIGIT - 1) / DIGIT)

void fe_radix_sort_kv(fe_kv *items, fe_kv *tmp, size_t n)
{
    static _Thread_local size_t count[PASSES][BUCKETS];
    if (n < 2)
        return;
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < PASSES; d++)
            count[d][(items[i].key >> (d * DIGIT)) & (BUCKETS - 1)]++;
    fe_kv *from = items, *to = tmp;
    for (int d = 0; d < PASSES; d++) {
        size_t *c = count[d];
        if (c[(from[0].key >> (d * DIGIT)) & (BUCKETS - 1)] == n)
            continue;   /* every key has this digit */
        size_t at = 0;
        for (unsigned b = 0; b < BUCKETS; b++) {
            size_t k = c[b];
            c[b] = at;
            at += k;
        }
        for (size_t i = 0; i < n; i++)
            to[c[(from[i].key >> (d * DIGIT)) & (BUCKETS - 1)]++] = from[i];
        fe_kv *t = from;
        from = to;
        to = t;
    }
    if (from != items)
        memcpy(items, from, n * sizeof *items);
}
