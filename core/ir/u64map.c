/* u64map.c: see u64map.h. */
#include <stdlib.h>
#include <string.h>

#include "u64map.h"

/* The slot of key in slots[0..cap): where it is, or the empty one where it
 * would go. */
static size_t slot(const uint64_t *slots, size_t cap, uint64_t key)
{
    size_t h = (size_t)fe_mix64(key) & (cap - 1);
    while (slots[2 * h] && slots[2 * h] != key)
        h = (h + 1) & (cap - 1);
    return h;
}

uint64_t *fe_u64map_get(const fe_u64map *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t h = slot(m->slots, m->cap, key);
    return m->slots[2 * h] ? &m->slots[2 * h + 1] : NULL;
}

int fe_u64map_put(fe_u64map *m, uint64_t key, uint64_t value)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        uint64_t *s = calloc(2 * cap, sizeof *s);
        if (!s)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            if (m->slots[2 * i]) {
                size_t h = slot(s, cap, m->slots[2 * i]);
                s[2 * h] = m->slots[2 * i];
                s[2 * h + 1] = m->slots[2 * i + 1];
            }
        free(m->slots);
        m->slots = s;
        m->cap = cap;
    }
    size_t h = slot(m->slots, m->cap, key);
    int fresh = !m->slots[2 * h];
    m->n += (size_t)fresh;
    m->slots[2 * h] = key;
    m->slots[2 * h + 1] = value;
    return fresh;
}

void fe_u64map_clear(fe_u64map *m)
{
    if (m->slots)
        memset(m->slots, 0, 2 * m->cap * sizeof *m->slots);
    m->n = 0;
}

void fe_u64map_free(fe_u64map *m)
{
    free(m->slots);
    *m = (fe_u64map){0};
}
