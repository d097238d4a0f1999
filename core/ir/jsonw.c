/* jsonw.c: streaming JSON writer with optional indentation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"

void fe_jw_init(fe_jw *w, FILE *f, int indent)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    w->indent = indent;
}

static int flat(const fe_jw *w)
{
    return w->indent == 0 || (w->flat_from > 0 && w->depth >= w->flat_from);
}

static void newline(fe_jw *w)
{
    fputc('\n', w->f);
    for (int i = 0; i < w->depth * w->indent; i++)
        fputc(' ', w->f);
}

/* Separator and indentation before a value (or key) at the current depth. */
static void before_item(fe_jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth == 0)
        return;
    if (w->count[w->depth] > 0)
        fputc(',', w->f);
    if (flat(w)) {
        if (w->count[w->depth] > 0 && w->indent)
            fputc(' ', w->f);
    } else {
        newline(w);
    }
    if (w->count[w->depth] < 255)
        w->count[w->depth]++;
}

static void open(fe_jw *w, char c, char close, int one_line)
{
    before_item(w);
    fputc(c, w->f);
    if (w->depth + 1 >= FE_JW_MAXDEPTH)
        abort();   /* a programming error: our documents are shallow */
    w->depth++;
    w->count[w->depth] = 0;
    w->close[w->depth] = close;
    if (one_line && w->flat_from == 0)
        w->flat_from = w->depth;
}

void fe_jw_obj(fe_jw *w) { open(w, '{', '}', 0); }
void fe_jw_obj_flat(fe_jw *w) { open(w, '{', '}', 1); }
void fe_jw_arr(fe_jw *w) { open(w, '[', ']', 0); }
void fe_jw_arr_flat(fe_jw *w) { open(w, '[', ']', 1); }

void fe_jw_end(fe_jw *w)
{
    int had = w->count[w->depth] > 0, was_flat = flat(w);
    char c = w->close[w->depth];
    if (w->flat_from == w->depth)
        w->flat_from = 0;
    w->depth--;
    if (had && !was_flat)
        newline(w);
    fputc(c, w->f);
    if (w->depth == 0 && w->indent)
        fputc('\n', w->f);
}

static void put_escaped(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputc(c, f);
        }
    }
    fputc('"', f);
}

void fe_jw_key(fe_jw *w, const char *key)
{
    before_item(w);
    put_escaped(w->f, key, strlen(key));
    fputc(':', w->f);
    if (w->indent)
        fputc(' ', w->f);
    w->after_key = 1;
}

void fe_jw_strn(fe_jw *w, const char *s, size_t n)
{
    before_item(w);
    put_escaped(w->f, s, n);
}

void fe_jw_str(fe_jw *w, const char *s)
{
    if (!s) {
        fe_jw_null(w);
        return;
    }
    fe_jw_strn(w, s, strlen(s));
}

void fe_jw_int(fe_jw *w, int64_t v)
{
    before_item(w);
    fprintf(w->f, "%lld", (long long)v);
}

void fe_jw_format_double(double v, char *buf, size_t size)
{
    if (!isfinite(v)) {
        /* JSON has no infinities; write float32's max as model files do. */
        snprintf(buf, size, "%s", isnan(v) ? "null" : v > 0 ? "3.4028235e38" : "-3.4028235e38");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* Keep a real a real: "2" would read back as an integer. */
    if (!strpbrk(buf, ".eEn"))
        strncat(buf, ".0", size - strlen(buf) - 1);
}

void fe_jw_num(fe_jw *w, double v)
{
    char buf[40];
    before_item(w);
    fe_jw_format_double(v, buf, sizeof buf);
    fputs(buf, w->f);
}

void fe_jw_bool(fe_jw *w, int v)
{
    before_item(w);
    fputs(v ? "true" : "false", w->f);
}

void fe_jw_null(fe_jw *w)
{
    before_item(w);
    fputs("null", w->f);
}

void fe_jw_raw(fe_jw *w, const char *json, size_t n)
{
    before_item(w);
    fwrite(json, 1, n, w->f);
}

int fe_jw_mem_open(fe_jw *w, fe_jw_mem *m)
{
    m->buf = NULL;
    m->len = 0;
    if (!(m->f = open_memstream(&m->buf, &m->len)))
        return -1;
    fe_jw_init(w, m->f, 0);
    return 0;
}

char *fe_jw_mem_close(fe_jw_mem *m)
{
    if (fclose(m->f) != 0) {
        free(m->buf);
        return NULL;
    }
    return m->buf;
}
