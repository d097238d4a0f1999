/* strtab.h: interned strings. Each distinct string gets a dense int32 id;
 * the text lives in one growing arena, so a million names cost a few
 * allocations, not a million. */
#ifndef FE_STRTAB_H
#define FE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct fe_strtab fe_strtab;

/* New empty table, or NULL when out of memory. Free with fe_strtab_free. */
fe_strtab *fe_strtab_new(void);
void fe_strtab_free(fe_strtab *t);

/* Id of s[0..len), adding it if new; -1 when out of memory. */
int32_t fe_strtab_intern(fe_strtab *t, const char *s, size_t len);

/* Add s as a new id without looking for an equal string, nor making it
 * findable: for text stored once (notes) that interning would only hash.
 * The id, or -1 when out of memory. */
int32_t fe_strtab_append(fe_strtab *t, const char *s, size_t len);

/* Id of s[0..len) if present, else -1. */
int32_t fe_strtab_find(const fe_strtab *t, const char *s, size_t len);

/* NUL-terminated text of id; valid until the next fe_strtab_intern or
 * fe_strtab_append, which may move the text as the table grows: keep ids,
 * not pointers, across them. */
const char *fe_strtab_str(const fe_strtab *t, int32_t id);
size_t fe_strtab_len(const fe_strtab *t, int32_t id);

/* Number of ids handed out; ids are 0 .. count-1. */
int32_t fe_strtab_count(const fe_strtab *t);

/* Bytes held by the table (for memory reports). */
size_t fe_strtab_bytes(const fe_strtab *t);

#endif
