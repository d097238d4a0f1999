/* setids.c: dense ids for sets of ids (setids.h).
 *
 * An open-addressing hash table (linear probing, at most half full) whose
 * slots hold entry numbers; an entry is a set's hash and where its members
 * sit in one growing arena of copies. Entry i has id i + 1. Hooks ask for
 * the ids of both groups of every candidate pair, so a lookup is one hash
 * over the members and, on a hit, one memcmp. */
#include <stdlib.h>
#include <string.h>

#include "setids.h"

typedef struct entry {
    uint64_t hash;
    int64_t off;         /* members at arena[off .. off + n) */
    int32_t n;
} entry;

struct fe_setids {
    int32_t *slots;      /* entry number or -1; cap slots, a power of two */
    int64_t cap;
    entry *entries;
    int64_t nentries, cap_entries;
    int32_t *arena;
    int64_t narena, cap_arena;
};

fe_setids *fe_setids_new(void)
{
    fe_setids *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cap = 1024;
    s->slots = malloc((size_t)s->cap * sizeof *s->slots);
    if (!s->slots) {
        free(s);
        return NULL;
    }
    memset(s->slots, 0xff, (size_t)s->cap * sizeof *s->slots);
    return s;
}

void fe_setids_free(fe_setids *s)
{
    if (!s)
        return;
    free(s->slots);
    free(s->entries);
    free(s->arena);
    free(s);
}

static uint64_t hash_set(const int32_t *v, int32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)n;
    for (int32_t i = 0; i < n; i++) {
        h ^= (uint32_t)v[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return h;
}

/* Double the slots and re-place every entry. */
static int grow_slots(fe_setids *s)
{
    int64_t cap = s->cap * 2;
    int32_t *slots = malloc((size_t)cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, (size_t)cap * sizeof *slots);
    for (int64_t e = 0; e < s->nentries; e++) {
        int64_t i = (int64_t)(s->entries[e].hash & (uint64_t)(cap - 1));
        while (slots[i] >= 0)
            i = (i + 1) & (cap - 1);
        slots[i] = (int32_t)e;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

/* Room for one more entry and n more arena members. */
static int reserve(fe_setids *s, int32_t n)
{
    if (s->nentries == s->cap_entries) {
        int64_t cap = s->cap_entries ? s->cap_entries * 2 : 1024;
        entry *e = realloc(s->entries, (size_t)cap * sizeof *e);
        if (!e)
            return -1;
        s->entries = e;
        s->cap_entries = cap;
    }
    if (s->narena + n > s->cap_arena) {
        int64_t cap = s->cap_arena ? s->cap_arena * 2 : 4096;
        while (cap < s->narena + n)
            cap *= 2;
        int32_t *a = realloc(s->arena, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        s->arena = a;
        s->cap_arena = cap;
    }
    return 0;
}

int64_t fe_setids_get(fe_setids *s, const int32_t *v, int32_t n)
{
    uint64_t h = hash_set(v, n);
    int64_t i = (int64_t)(h & (uint64_t)(s->cap - 1));
    for (; s->slots[i] >= 0; i = (i + 1) & (s->cap - 1)) {
        const entry *e = &s->entries[s->slots[i]];
        if (e->hash == h && e->n == n &&
            memcmp(s->arena + e->off, v, (size_t)n * sizeof *v) == 0)
            return s->slots[i] + 1;
    }
    if (s->nentries >= INT32_MAX - 1 || reserve(s, n) != 0)
        return -1;
    entry *e = &s->entries[s->nentries];
    *e = (entry){.hash = h, .off = s->narena, .n = n};
    memcpy(s->arena + s->narena, v, (size_t)n * sizeof *v);
    s->narena += n;
    s->slots[i] = (int32_t)s->nentries++;
    if (s->nentries * 2 > s->cap && grow_slots(s) != 0)
        return -1;
    return s->nentries;
}
