/* error.c: fe_error, the one error type. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int fe_error_set(fe_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

void fe_error_prefix(fe_error *err, const char *fmt, ...)
{
    char head[sizeof err->message];
    va_list ap;

    if (!err || err->code == FE_OK)
        return;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    /* Shift the message right to make room, truncating its tail. */
    size_t h = strlen(head), cap = sizeof err->message - 1;
    size_t m = strnlen(err->message, cap);
    if (h > cap)
        h = cap;
    if (m > cap - h)
        m = cap - h;
    memmove(err->message + h, err->message, m);
    memcpy(err->message, head, h);
    err->message[h + m] = '\0';
}

int fe_error_exit_code(int code)
{
    if (code == FE_OK)
        return 0;
    return code == FE_EINPUT ? 2 : 1;
}

void *fe_malloc(size_t n, fe_error *err)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        fe_error_set(err, FE_ENOMEM, "out of memory allocating %zu bytes", n);
    return p;
}

void *fe_calloc(size_t n, size_t size, fe_error *err)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        fe_error_set(err, FE_ENOMEM, "out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

/* Edit distance (insertions, deletions, substitutions); names are short. */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[80];
    if (la >= 80 || lb >= 80)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *fe_closest(const char *key, const char *const *names, int n)
{
    int best = 3, at = -1;
    for (int i = 0; i < n; i++) {
        int d = distance(key, names[i]);
        if (d < best) {
            best = d;
            at = i;
        }
    }
    return at >= 0 ? names[at] : NULL;
}
