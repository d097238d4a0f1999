/* u64map.h: a map from nonzero 64-bit keys to 64-bit values, in open
 * addressing (linear probing, load kept under 1/2): the drivers' candidate
 * sets and answer caches. Key 0 marks an empty slot. */
#ifndef FE_U64MAP_H
#define FE_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct fe_u64map {
    uint64_t *slots;    /* key, value; key 0: empty */
    size_t cap, n;      /* slots (a power of two, or 0), keys held */
} fe_u64map;            /* {0} is an empty map */

/* splitmix64's finalizer: every bit of x reaches every bit of the result.
 * The map hashes keys with it; signatures and sequence keys mix with it. */
static inline uint64_t fe_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* FNV-1a over n bytes from p, continuing from h (FE_FNV_SEED to start):
 * seeds from names (exec.c), cache keys from text (suites, CUDA kernels). */
#define FE_FNV_SEED 14695981039346656037ull
static inline uint64_t fe_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* key's value, or NULL when absent; valid until the next put. */
uint64_t *fe_u64map_get(const fe_u64map *m, uint64_t key);

/* Set key (nonzero) to value: 1 if the key is new, 0 if it was there, -1
 * when out of memory (the map unchanged). */
int fe_u64map_put(fe_u64map *m, uint64_t key, uint64_t value);

/* Empty the map, keeping its room. */
void fe_u64map_clear(fe_u64map *m);

void fe_u64map_free(fe_u64map *m);

#endif
