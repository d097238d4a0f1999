/* error.c: fe_error, the one error type. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* A C0 or DEL byte, or the lead of a UTF-8 C1 control (U+0080..U+009F);
 * with keep_lines, not '\n' or '\t'. */
static int control(const unsigned char *c, int keep_lines)
{
    if (keep_lines && (*c == '\n' || *c == '\t'))
        return 0;
    return *c < 0x20 || *c == 0x7f || (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f);
}

/* Has word w a byte below 0x20, 0x7f or 0xc2 (the bytes control() looks
 * at)? Bit tricks on eight bytes at once, each test exact. */
static int suspect_word(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t del = w ^ (0x7f * ones), c2 = w ^ (0xc2 * ones);
    return ((((w - 0x20 * ones) & ~w) | ((del - ones) & ~del) | ((c2 - ones) & ~c2)) & highs) != 0;
}

long fe_control_at(const char *s, int keep_lines)
{
    /* Every reason of a plan passes here, and a benchmark-mode reason is a
     * few hundred bytes: plain text is skipped eight bytes at a time. */
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        uint64_t w;
        if (i + 8 <= len && (memcpy(&w, u + i, 8), !suspect_word(w))) {
            i += 8;
            continue;
        }
        if ((u[i] < 0x20 || u[i] == 0x7f || u[i] == 0xc2) && control(u + i, keep_lines))
            return (long)i;
        i++;
    }
    return -1;
}

char *fe_escape_dup(const char *s, int keep_lines)
{
    size_t size = 4 * strlen(s) + 1;   /* each byte at most \xNN */
    char *out = malloc(size);
    if (out)
        fe_escape_into(out, size, s, keep_lines);
    return out;
}

size_t fe_escape_into(char *dst, size_t size, const char *src, int keep_lines)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    if (!size)
        return 0;
    for (const unsigned char *c = (const unsigned char *)(src ? src : ""); *c; c++) {
        /* U+0080..U+009F in UTF-8 take two bytes (0x9b is CSI, as ESC [) */
        int c1 = c[0] == 0xc2;
        if (!control(c, keep_lines)) {
            if (k + 1 >= size)
                break;
            dst[k++] = (char)*c;
            continue;
        }
        if (k + 4 * (1 + c1) >= size)
            break;
        for (int i = 0; i <= c1; i++) {
            dst[k++] = '\\';
            dst[k++] = 'x';
            dst[k++] = hex[c[i] >> 4];
            dst[k++] = hex[c[i] & 15];
        }
        c += c1;
    }
    dst[k] = '\0';
    return k;
}

/* Messages carry names and text from input files: escaped, one line each. */
int fe_error_set(fe_error *err, int code, const char *fmt, ...)
{
    if (err) {
        char raw[sizeof err->message];
        va_list ap;
        err->code = code;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        fe_escape_into(err->message, sizeof err->message, raw, 0);
    }
    return code;
}

void fe_error_cause(fe_error *err, const char *fmt, ...)
{
    char raw[sizeof err->message], tail[sizeof err->message];
    va_list ap;

    if (!err || err->code == FE_OK)
        return;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    fe_escape_into(tail, sizeof tail, raw, 0);
    size_t m = strnlen(err->message, sizeof err->message - 1);
    snprintf(err->message + m, sizeof err->message - m, ": %s", tail);
}

void fe_error_prefix(fe_error *err, const char *fmt, ...)
{
    char raw[sizeof err->message], head[sizeof err->message];
    va_list ap;

    if (!err || err->code == FE_OK)
        return;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    fe_escape_into(head, sizeof head, raw, 0);
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

/* Edit distance counting insertions, deletions, substitutions and a swap
 * of neighbours as one edit each ("sliu", "rms_nrom": the typos people
 * make); names are short. */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int d[80][80];
    if (la >= 80 || lb >= 80)
        return 99;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *fe_closest(const char *key, const char *const *names, int n)
{
    int best = 3, at = -1, len = (int)strlen(key);
    for (int i = 0; i < n; i++) {
        int d = distance(key, names[i]);
        if (d < len && (d < best || (d == best && at >= 0 && strcmp(names[i], names[at]) < 0))) {
            best = d;
            at = i;
        }
    }
    return at >= 0 ? names[at] : NULL;
}

const char *fe_did_you_mean(const char *key, const char *list, char *hint, size_t size)
{
    const char *names[512];
    char buf[8192];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t && n < 512; t = strtok_r(NULL, ", ", &save))
        names[n++] = t;
    const char *near = key ? fe_closest(key, names, n) : NULL;
    if (near)
        snprintf(hint, size, " (did you mean '%s'?)", near);
    else if (size)
        hint[0] = 0;
    return hint;
}
