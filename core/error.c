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
