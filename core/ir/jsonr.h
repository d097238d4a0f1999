/* jsonr.h: a pull reader for JSON text in memory.
 *
 * The model loader reads a million nodes with it: no tree and no allocation
 * per value (strings without escapes point into the buffer; others decode
 * into one reusable scratch buffer). It tracks line and column for messages
 * and bounds nesting depth, so hostile input fails cleanly.
 */
#ifndef FE_JSONR_H
#define FE_JSONR_H

#include <stddef.h>
#include <stdint.h>

#define FE_JR_MAXDEPTH 512

typedef struct fe_jr {
    const char *buf;
    size_t len, pos;
    int line;
    size_t bol;            /* offset of the current line's first byte */
    char *scratch;         /* decoded strings; grows */
    size_t scap;
    char err[256];         /* set on failure, with err_line/err_col */
    int err_line, err_col;
    int depth;             /* open containers */
    int key_line, key_col; /* where the last object key read started */
    uint8_t first[FE_JR_MAXDEPTH];   /* no item read yet at this depth */
} fe_jr;

typedef enum { FE_JR_EOF, FE_JR_OBJ, FE_JR_ARR, FE_JR_STR, FE_JR_NUM, FE_JR_TRUE,
               FE_JR_FALSE, FE_JR_NULL, FE_JR_BAD } fe_jr_kind;

/* A decoded string: s[0..n) (not NUL-terminated unless noted). */
typedef struct fe_jr_str {
    const char *s;
    size_t n;
} fe_jr_str;

void fe_jr_init(fe_jr *r, const char *buf, size_t len);
void fe_jr_free(fe_jr *r);

/* Kind of the next value, after skipping whitespace; does not consume. */
fe_jr_kind fe_jr_peek(fe_jr *r);

/* Current line and column (1-based) of the next non-space byte. */
void fe_jr_where(fe_jr *r, int *line, int *col);

/* Each reader returns 0 on success, -1 with r->err set. */
int fe_jr_string(fe_jr *r, fe_jr_str *out);   /* valid until the next string read */
/* Length of the valid UTF-8 sequence starting at p (lead byte >= 0x80,
 * avail bytes readable), or 0 if it is not one: overlong forms, surrogates
 * and code points past U+10FFFF are invalid. */
size_t fe_jr_utf8_len(const unsigned char *p, size_t avail);
/* A string copied NUL-terminated into dst[0..cap); -1 if longer. */
int fe_jr_string_copy(fe_jr *r, char *dst, size_t cap, size_t *n);
int fe_jr_number(fe_jr *r, int *is_int, int64_t *i, double *d);
int fe_jr_bool(fe_jr *r, int *v);
int fe_jr_null(fe_jr *r);
/* Skip one value of any kind; its byte span is [*start, *end). */
int fe_jr_skip(fe_jr *r, size_t *start, size_t *end);

/* Containers: call _begin, then _next until it returns 0 (closed) or -1.
 * For objects, _next reads the key (valid until the next string read) and
 * the ':' after it, and records where the key starts in key_line/key_col. */
int fe_jr_obj_begin(fe_jr *r);
int fe_jr_obj_next(fe_jr *r, fe_jr_str *key);
int fe_jr_arr_begin(fe_jr *r);
int fe_jr_arr_next(fe_jr *r);

/* Is the rest of the buffer only whitespace? */
int fe_jr_at_end(fe_jr *r);

/* Save and restore the position (to re-read a value another way). */
typedef struct fe_jr_mark {
    size_t pos, bol;
    int line;
} fe_jr_mark;
fe_jr_mark fe_jr_save(const fe_jr *r);
void fe_jr_restore(fe_jr *r, fe_jr_mark m);

#endif
