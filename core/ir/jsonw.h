/* jsonw.h: a streaming JSON writer, the one place that formats JSON output
 * (models, plans, reports, traces, profiles). It never builds a tree, so a
 * million-node model is written in constant memory. */
#ifndef FE_JSONW_H
#define FE_JSONW_H

#include <stdint.h>
#include <stdio.h>

#define FE_JW_MAXDEPTH 64

typedef struct fe_jw {
    FILE *f;
    int indent;                  /* spaces per level; 0 = compact */
    int depth;
    int flat_from;               /* depth at which output goes on one line; 0 = none */
    uint8_t count[FE_JW_MAXDEPTH]; /* items written at each depth (saturating) */
    char close[FE_JW_MAXDEPTH];    /* bracket that closes each open container */
    int after_key;
} fe_jw;

/* Start writing to f with the given indent (0 = compact). */
void fe_jw_init(fe_jw *w, FILE *f, int indent);

/* Containers. The _flat variants put the container on one line. */
void fe_jw_obj(fe_jw *w);
void fe_jw_obj_flat(fe_jw *w);
void fe_jw_arr(fe_jw *w);
void fe_jw_arr_flat(fe_jw *w);
void fe_jw_end(fe_jw *w);        /* closes the innermost container */

void fe_jw_key(fe_jw *w, const char *key);
void fe_jw_str(fe_jw *w, const char *s);
void fe_jw_strn(fe_jw *w, const char *s, size_t n);
void fe_jw_int(fe_jw *w, int64_t v);
/* A double in the shortest text that reads back to the same value. */
void fe_jw_num(fe_jw *w, double v);
void fe_jw_bool(fe_jw *w, int v);
void fe_jw_null(fe_jw *w);
/* Already-encoded JSON text (e.g. an attribute kept verbatim). */
void fe_jw_raw(fe_jw *w, const char *json, size_t n);

/* A writer into memory: fe_jw_mem_open starts w (compact) over a new
 * buffer, 0 or -1 when out of memory; fe_jw_mem_close ends it and
 * returns the text, which the caller frees with free() (NULL when out of
 * memory). */
typedef struct fe_jw_mem {
    FILE *f;
    char *buf;
    size_t len;
} fe_jw_mem;
int fe_jw_mem_open(fe_jw *w, fe_jw_mem *m);
char *fe_jw_mem_close(fe_jw_mem *m);

/* Write the shortest round-trip text of v into buf (at least 32 bytes). */
void fe_jw_format_double(double v, char *buf, size_t size);

#endif
