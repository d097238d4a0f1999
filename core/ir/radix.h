/* radix.h: sorting many 64-bit keys in linear time.
 *
 * The greedy driver sorts a million candidate pairs each round; a hash set
 * or map of that size costs a cache miss per lookup, a sort a few passes
 * over memory in order. */
#ifndef FE_RADIX_H
#define FE_RADIX_H

#include <stddef.h>
#include <stdint.h>

typedef struct fe_kv {
    uint64_t key, val;
} fe_kv;

/* Sort items[0..n) by key, ascending and stable (equal keys keep their
 * order); tmp is scratch room for n items. */
void fe_radix_sort_kv(fe_kv *items, fe_kv *tmp, size_t n);

#endif
