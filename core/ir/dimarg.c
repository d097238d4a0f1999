/* dimarg.c: "NAME=V" and "NAME=V1,V2,..." (dimarg.h). The name is
 * everything before the first '=', 1 to 127 bytes; then 1 to 64 values
 * separated by commas, each a positive integer that fits 64 bits, spaces
 * allowed around it. A single value and a list word their errors as the
 * command line always has ("the value must be...", "value 2 is empty..."). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dimarg.h"
#include "error.h"

/* The value in p[0..end): 0 with it in *v, or -1 (*empty: it is blank). */
static int value(const char *p, const char *end, int64_t *v, int *empty)
{
    while (p < end && *p == ' ')
        p++;
    while (end > p && end[-1] == ' ')
        end--;
    *empty = p == end;
    if (p == end)
        return -1;
    int64_t x = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9' || x > (INT64_MAX - (*p - '0')) / 10)
            return -1;
        x = x * 10 + (*p - '0');
    }
    *v = x;
    return x > 0 ? 0 : -1;
}

int fe_dimarg_parse(const char *text, size_t len, fe_dimarg *d, fe_error *err)
{
    if (!text || !d)
        return fe_error_set(err, FE_EINPUT, "fe_dimarg_parse: no text or no result");
    const char *end = text + len, *eq = memchr(text, '=', len);
    memset(d, 0, sizeof *d);
    if (!eq || eq == text)
        return fe_error_set(err, FE_EINPUT, "expected NAME=V or NAME=V1,V2,..., e.g. S=4096");
    if ((size_t)(eq - text) >= FE_DIMARG_NAME)
        return fe_error_set(err, FE_EINPUT, "the name is longer than %d bytes", FE_DIMARG_NAME - 1);
    memcpy(d->name, text, (size_t)(eq - text));
    int list = memchr(eq + 1, ',', (size_t)(end - eq - 1)) != NULL;
    for (const char *at = eq + 1;;) {
        const char *comma = memchr(at, ',', (size_t)(end - at));
        const char *stop = comma ? comma : end;
        int empty;
        if (d->n == FE_DIMARG_VALUES)
            return fe_error_set(err, FE_EINPUT, "at most %d values", FE_DIMARG_VALUES);
        if (value(at, stop, &d->values[d->n], &empty) != 0) {
            if (!list)
                return fe_error_set(err, FE_EINPUT, "the value must be a positive integer");
            return fe_error_set(err, FE_EINPUT, "value %d %s; give positive integers separated "
                                "by commas, e.g. %s=1,8,32", d->n + 1,
                                empty ? "is empty" : "is not a positive integer", d->name);
        }
        d->n++;
        if (!comma)
            return FE_OK;
        at = comma + 1;
    }
}
