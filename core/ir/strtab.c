/* strtab.c: interned strings in an arena, found through an open-addressing
 * hash of ids (linear probing, load factor kept under 1/2). */
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

struct fe_strtab {
    char *text;          /* all strings, each NUL-terminated */
    size_t text_len, text_cap;
    struct { uint32_t off, len; } *ent;   /* id -> where its text is */
    size_t ent_cap;
    int32_t count;       /* ids in use */
    int32_t nhashed;     /* of them, those in the hash (not appended) */
    int32_t *slots;      /* hash slot -> id, -1 empty */
    uint32_t nslots;     /* power of two */
};

/* An appended string's len has this bit: it is in no hash slot. */
#define APPENDED 0x80000000u

/* Eight bytes per multiply, then a final mix (the slot is the low bits):
 * the strings go from short names to decision reasons of a few hundred
 * bytes, and node sets (group ids) of up to hundreds of ints. */
static uint32_t hash(const char *s, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ len, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s + i, len - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    h ^= h >> 29;
    h *= 0xff51afd7ed558ccdu;
    return (uint32_t)(h ^ (h >> 32));
}

fe_strtab *fe_strtab_new(void)
{
    fe_strtab *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nslots = 64;
    t->slots = malloc(t->nslots * sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    memset(t->slots, 0xff, t->nslots * sizeof *t->slots);
    return t;
}

void fe_strtab_free(fe_strtab *t)
{
    if (!t)
        return;
    free(t->text);
    free(t->ent);
    free(t->slots);
    free(t);
}

static int32_t lookup(const fe_strtab *t, const char *s, size_t len, uint32_t h, uint32_t *slot)
{
    uint32_t mask = t->nslots - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        int32_t id = t->slots[i];
        if (id < 0) {
            *slot = i;
            return -1;
        }
        if (t->ent[id].len == len && memcmp(t->text + t->ent[id].off, s, len) == 0) {
            *slot = i;
            return id;
        }
    }
}

static int rehash(fe_strtab *t)
{
    uint32_t n = t->nslots * 2;
    int32_t *slots = malloc(n * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, n * sizeof *slots);
    for (int32_t id = 0; id < t->count; id++) {
        if (t->ent[id].len & APPENDED)
            continue;
        uint32_t i = hash(t->text + t->ent[id].off, t->ent[id].len) & (n - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (n - 1);
        slots[i] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    return 0;
}

static int grow(void **p, size_t elem, size_t need, size_t *cap)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

int32_t fe_strtab_intern(fe_strtab *t, const char *s, size_t len)
{
    uint32_t h = hash(s, len), slot;
    int32_t id = lookup(t, s, len, h, &slot);
    if (id >= 0)
        return id;
    if (len > UINT32_MAX / 2 || t->count == INT32_MAX)
        return -1;
    if (t->text_len + len + 1 > UINT32_MAX)
        return -1;

    if (grow((void **)&t->ent, sizeof *t->ent, (size_t)t->count + 1, &t->ent_cap))
        return -1;
    if (grow((void **)&t->text, 1, t->text_len + len + 1, &t->text_cap))
        return -1;

    id = t->count++;
    t->ent[id].off = (uint32_t)t->text_len;
    t->ent[id].len = (uint32_t)len;
    memcpy(t->text + t->text_len, s, len);
    t->text[t->text_len + len] = '\0';
    t->text_len += len + 1;
    t->slots[slot] = id;
    t->nhashed++;
    if ((uint32_t)t->nhashed * 2 > t->nslots && rehash(t) != 0) {
        /* The id is stored; a failed rehash only leaves the table fuller. */
        if ((uint32_t)t->nhashed + 1 >= t->nslots)
            return -1;
    }
    return id;
}

int32_t fe_strtab_append(fe_strtab *t, const char *s, size_t len)
{
    if (len > UINT32_MAX / 2 || t->count == INT32_MAX || t->text_len + len + 1 > UINT32_MAX)
        return -1;
    if (grow((void **)&t->ent, sizeof *t->ent, (size_t)t->count + 1, &t->ent_cap) ||
        grow((void **)&t->text, 1, t->text_len + len + 1, &t->text_cap))
        return -1;
    int32_t id = t->count++;
    t->ent[id].off = (uint32_t)t->text_len;
    t->ent[id].len = (uint32_t)len | APPENDED;
    memcpy(t->text + t->text_len, s, len);
    t->text[t->text_len + len] = '\0';
    t->text_len += len + 1;
    return id;
}

int32_t fe_strtab_find(const fe_strtab *t, const char *s, size_t len)
{
    uint32_t slot;
    return lookup(t, s, len, hash(s, len), &slot);
}

const char *fe_strtab_str(const fe_strtab *t, int32_t id)
{
    return t->text + t->ent[id].off;
}

size_t fe_strtab_len(const fe_strtab *t, int32_t id)
{
    return t->ent[id].len & ~APPENDED;
}

int32_t fe_strtab_count(const fe_strtab *t)
{
    return t->count;
}

size_t fe_strtab_bytes(const fe_strtab *t)
{
    return t->text_cap + t->ent_cap * sizeof *t->ent + t->nslots * sizeof *t->slots;
}
