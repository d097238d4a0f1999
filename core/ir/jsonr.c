/* jsonr.c: the pull JSON reader (RFC 8259 syntax, UTF-8 checked). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

void fe_jr_init(fe_jr *r, const char *buf, size_t len)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->len = len;
    r->line = 1;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        r->pos = r->bol = 3;
}

void fe_jr_free(fe_jr *r)
{
    free(r->scratch);
    r->scratch = NULL;
}

static void ws(fe_jr *r)
{
    const char *b = r->buf;
    size_t p = r->pos, n = r->len;
    while (p < n) {
        char c = b[p];
        if (c == ' ' || c == '\t' || c == '\r') {
            p++;
        } else if (c == '\n') {
            r->line++;
            r->bol = ++p;
        } else {
            break;
        }
    }
    r->pos = p;
}

static int fail(fe_jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(fe_jr *r, const char *fmt, ...)
{
    va_list ap;
    if (r->err[0])
        return -1;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->err_line = r->line;
    r->err_col = (int)(r->pos - r->bol) + 1;
    return -1;
}

/* What the next byte looks like, for messages. */
static const char *found(fe_jr *r)
{
    static _Thread_local char buf[32];
    if (r->pos >= r->len)
        return "the end of the file";
    unsigned char c = (unsigned char)r->buf[r->pos];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, sizeof buf, "'%c'", c);
    else
        snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
}

void fe_jr_where(fe_jr *r, int *line, int *col)
{
    ws(r);
    *line = r->line;
    *col = (int)(r->pos - r->bol) + 1;
}

fe_jr_kind fe_jr_peek(fe_jr *r)
{
    ws(r);
    if (r->pos >= r->len)
        return FE_JR_EOF;
    switch (r->buf[r->pos]) {
    case '{': return FE_JR_OBJ;
    case '[': return FE_JR_ARR;
    case '"': return FE_JR_STR;
    case 't': return FE_JR_TRUE;
    case 'f': return FE_JR_FALSE;
    case 'n': return FE_JR_NULL;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': return FE_JR_NUM;
    default: return FE_JR_BAD;
    }
}

static int put(fe_jr *r, size_t *n, const char *s, size_t k)
{
    if (*n + k + 1 > r->scap) {
        size_t cap = r->scap ? r->scap : 256;
        while (cap < *n + k + 1)
            cap *= 2;
        char *p = realloc(r->scratch, cap);
        if (!p)
            return fail(r, "out of memory decoding a string");
        r->scratch = p;
        r->scap = cap;
    }
    memcpy(r->scratch + *n, s, k);
    *n += k;
    return 0;
}

static int hex4(const char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        *v <<= 4;
        if (c >= '0' && c <= '9') *v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') *v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    return 0;
}

static size_t utf8(unsigned cp, char *out)
{
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 63)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | ((cp >> 6) & 63));
        out[2] = (char)(0x80 | (cp & 63)); return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | ((cp >> 12) & 63));
    out[2] = (char)(0x80 | ((cp >> 6) & 63)); out[3] = (char)(0x80 | (cp & 63)); return 4;
}

size_t fe_jr_utf8_len(const unsigned char *p, size_t avail)
{
    size_t n;
    unsigned cp;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) { n = 2; cp = p[0] & 0x1F; }
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) { n = 3; cp = p[0] & 0x0F; }
    else if (p[0] >= 0xF0 && p[0] <= 0xF4) { n = 4; cp = p[0] & 0x07; }
    else return 0;
    if (n > avail)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

int fe_jr_string(fe_jr *r, fe_jr_str *out)
{
    ws(r);
    if (r->pos >= r->len || r->buf[r->pos] != '"')
        return fail(r, "expected a string, found %s", found(r));
    const unsigned char *b = (const unsigned char *)r->buf;
    size_t p = r->pos + 1, start = p, n = 0;
    int copying = 0;
    for (;;) {
        if (p >= r->len)
            return fail(r, "unterminated string");
        unsigned char c = b[p];
        if (c == '"')
            break;
        if (c < 0x20) {
            r->pos = p;
            return fail(r, "control character 0x%02x inside a string (escape it)", c);
        }
        if (c >= 0x80) {
            size_t k = fe_jr_utf8_len(b + p, r->len - p);
            if (!k) {
                r->pos = p;
                return fail(r, "invalid UTF-8 in a string");
            }
            if (copying && put(r, &n, (const char *)b + p, k))
                return -1;
            p += k;
            continue;
        }
        if (c != '\\') {
            if (copying && put(r, &n, (const char *)b + p, 1))
                return -1;
            p++;
            continue;
        }
        /* An escape: from here on decode into the scratch buffer. */
        if (!copying) {
            copying = 1;
            n = 0;
            if (put(r, &n, (const char *)b + start, p - start))
                return -1;
        }
        if (p + 1 >= r->len)
            return fail(r, "unterminated string");
        char e = (char)b[p + 1], ch[4];
        size_t k = 1;
        p += 2;
        switch (e) {
        case '"': ch[0] = '"'; break;
        case '\\': ch[0] = '\\'; break;
        case '/': ch[0] = '/'; break;
        case 'b': ch[0] = '\b'; break;
        case 'f': ch[0] = '\f'; break;
        case 'n': ch[0] = '\n'; break;
        case 'r': ch[0] = '\r'; break;
        case 't': ch[0] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (p + 4 > r->len || hex4((const char *)b + p, &cp)) {
                r->pos = p;
                return fail(r, "invalid \\u escape");
            }
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (p + 6 > r->len || b[p] != '\\' || b[p + 1] != 'u' ||
                    hex4((const char *)b + p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    r->pos = p;
                    return fail(r, "unpaired UTF-16 surrogate in a \\u escape");
                }
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                r->pos = p;
                return fail(r, "unpaired UTF-16 surrogate in a \\u escape");
            }
            if (cp == 0) {
                r->pos = p;
                return fail(r, "\\u0000 is not allowed in names");
            }
            k = utf8(cp, ch);
            break;
        }
        default:
            r->pos = p - 2;   /* point at the backslash */
            return fail(r, "invalid escape '\\%c'", e);
        }
        if (put(r, &n, ch, k))
            return -1;
    }
    if (copying) {
        r->scratch[n] = '\0';
        out->s = r->scratch;
        out->n = n;
    } else {
        out->s = (const char *)b + start;
        out->n = p - start;
    }
    r->pos = p + 1;
    return 0;
}

int fe_jr_string_copy(fe_jr *r, char *dst, size_t cap, size_t *n)
{
    fe_jr_str s;
    if (fe_jr_string(r, &s))
        return -1;
    if (n)
        *n = s.n;
    if (s.n + 1 > cap)
        return 1;
    memcpy(dst, s.s, s.n);
    dst[s.n] = '\0';
    return 0;
}

int fe_jr_number(fe_jr *r, int *is_int, int64_t *iv, double *dv)
{
    ws(r);
    const char *b = r->buf;
    size_t p = r->pos, n = r->len, start = p;
    int neg = 0, frac = 0;
    if (p < n && b[p] == '-') {
        neg = 1;
        p++;
    }
    if (p >= n || b[p] < '0' || b[p] > '9')
        return fail(r, "expected a number, found %s", found(r));
    /* JSON forbids leading zeros: 0 then a digit is malformed. */
    if (b[p] == '0' && p + 1 < n && b[p + 1] >= '0' && b[p + 1] <= '9') {
        r->pos = p;
        return fail(r, "a number may not have leading zeros");
    }
    uint64_t acc = 0;
    int overflow = 0;
    while (p < n && b[p] >= '0' && b[p] <= '9') {
        unsigned d = (unsigned)(b[p] - '0');
        if (acc > (UINT64_MAX - d) / 10)
            overflow = 1;
        else
            acc = acc * 10 + d;
        p++;
    }
    if (p < n && b[p] == '.') {
        frac = 1;
        p++;
        if (p >= n || b[p] < '0' || b[p] > '9') {
            r->pos = p;
            return fail(r, "expected a digit after '.'");
        }
        while (p < n && b[p] >= '0' && b[p] <= '9')
            p++;
    }
    if (p < n && (b[p] == 'e' || b[p] == 'E')) {
        frac = 1;
        p++;
        if (p < n && (b[p] == '+' || b[p] == '-'))
            p++;
        if (p >= n || b[p] < '0' || b[p] > '9') {
            r->pos = p;
            return fail(r, "expected a digit in the exponent");
        }
        while (p < n && b[p] >= '0' && b[p] <= '9')
            p++;
    }
    if (!frac) {
        if (overflow || acc > (uint64_t)INT64_MAX + (uint64_t)neg)
            return fail(r, "integer %.*s does not fit in 64 bits", (int)(p - start > 40 ? 40 : p - start),
                        b + start);
        *is_int = 1;
        *iv = neg ? (int64_t)(0 - acc) : (int64_t)acc;
        *dv = (double)*iv;
    } else {
        char tmp[512];
        size_t len = p - start;
        if (len >= sizeof tmp)
            return fail(r, "number has %zu digits; at most %zu are accepted", len, sizeof tmp - 1);
        memcpy(tmp, b + start, len);
        tmp[len] = '\0';
        errno = 0;
        double d = strtod(tmp, NULL);
        if (errno == ERANGE && (d > 1 || d < -1))
            return fail(r, "number %s is out of range for a double", tmp);
        *is_int = 0;
        *dv = d;
        *iv = (int64_t)0;
    }
    r->pos = p;
    return 0;
}

static int word(fe_jr *r, const char *w)
{
    size_t k = strlen(w);
    ws(r);
    if (r->pos + k > r->len || memcmp(r->buf + r->pos, w, k) != 0)
        return fail(r, "expected %s, found %s", w, found(r));
    r->pos += k;
    return 0;
}

int fe_jr_bool(fe_jr *r, int *v)
{
    ws(r);
    if (r->pos < r->len && r->buf[r->pos] == 't') {
        *v = 1;
        return word(r, "true");
    }
    *v = 0;
    return word(r, "false");
}

int fe_jr_null(fe_jr *r)
{
    return word(r, "null");
}

static int punct(fe_jr *r, char c, const char *what)
{
    ws(r);
    if (r->pos >= r->len || r->buf[r->pos] != c)
        return fail(r, "expected %s, found %s", what, found(r));
    r->pos++;
    return 0;
}

static int open_container(fe_jr *r, char c)
{
    if (r->depth + 1 >= FE_JR_MAXDEPTH)
        return fail(r, "maximum nesting depth (%d) reached", FE_JR_MAXDEPTH);
    if (punct(r, c, c == '{' ? "'{'" : "'['"))
        return -1;
    r->first[++r->depth] = 1;
    return 0;
}

/* After the opener or an item: 1 if another item follows (its comma
 * consumed), 0 after consuming the closer, -1 on malformed input. */
static int next_item(fe_jr *r, char close, const char *in)
{
    ws(r);
    if (r->pos >= r->len)
        return fail(r, "the file ends inside %s", in);
    char c = r->buf[r->pos];
    if (c == close) {
        r->pos++;
        r->depth--;
        return 0;
    }
    if (r->first[r->depth]) {
        r->first[r->depth] = 0;
        return 1;
    }
    if (c != ',')
        return fail(r, "expected ',' or '%c' in %s, found %s", close, in, found(r));
    r->pos++;
    return 1;
}

int fe_jr_obj_begin(fe_jr *r)
{
    return open_container(r, '{');
}

int fe_jr_obj_next(fe_jr *r, fe_jr_str *key)
{
    int k = next_item(r, '}', "an object");
    if (k <= 0)
        return k;
    if (fe_jr_peek(r) != FE_JR_STR)
        return fail(r, "expected a quoted key, found %s", found(r));
    r->key_line = r->line;
    r->key_col = (int)(r->pos - r->bol) + 1;
    if (fe_jr_string(r, key) || punct(r, ':', "':' after a key"))
        return -1;
    return 1;
}

int fe_jr_arr_begin(fe_jr *r)
{
    return open_container(r, '[');
}

int fe_jr_arr_next(fe_jr *r)
{
    return next_item(r, ']', "an array");
}

int fe_jr_at_end(fe_jr *r)
{
    ws(r);
    return r->pos >= r->len;
}

fe_jr_mark fe_jr_save(const fe_jr *r)
{
    return (fe_jr_mark){r->pos, r->bol, r->line};
}

void fe_jr_restore(fe_jr *r, fe_jr_mark m)
{
    r->pos = m.pos;
    r->bol = m.bol;
    r->line = m.line;
}

static int skip_value(fe_jr *r)
{
    fe_jr_str s;
    int k, b, is_int;
    int64_t i;
    double d;
    switch (fe_jr_peek(r)) {
    case FE_JR_OBJ:
        if (fe_jr_obj_begin(r))
            return -1;
        while ((k = fe_jr_obj_next(r, &s)) > 0)
            if (skip_value(r))
                return -1;
        return k;
    case FE_JR_ARR:
        if (fe_jr_arr_begin(r))
            return -1;
        while ((k = fe_jr_arr_next(r)) > 0)
            if (skip_value(r))
                return -1;
        return k;
    case FE_JR_STR: return fe_jr_string(r, &s);
    case FE_JR_NUM: return fe_jr_number(r, &is_int, &i, &d);
    case FE_JR_TRUE:
    case FE_JR_FALSE: return fe_jr_bool(r, &b);
    case FE_JR_NULL: return fe_jr_null(r);
    case FE_JR_EOF: return fail(r, "the file ends where a value was expected");
    default: return fail(r, "expected a value, found %s", found(r));
    }
}

int fe_jr_skip(fe_jr *r, size_t *start, size_t *end)
{
    ws(r);
    *start = r->pos;
    if (skip_value(r))
        return -1;
    *end = r->pos;
    return 0;
}
