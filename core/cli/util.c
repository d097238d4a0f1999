/* util.c: helpers shared by the CLI commands: usage errors, options, units. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int fe_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuseeng %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'fuseeng help %s'.\n", cmd);
    return 2;
}

int fe_cli_fail(const fe_error *err)
{
    fprintf(stderr, "fuseeng: %s\n", err->message);
    return err->code == FE_OK ? 0 : err->code == FE_EINPUT ? 2 : 1;
}

int fe_cli_put(char *text)
{
    if (!text)
        return -1;
    fputs(text, stdout);
    fe_free(text);
    return 0;
}

int fe_cli_write(const char *path, const char *what, char *text, fe_error *err)
{
    if (!text)
        return err->code ? err->code : FE_ERUNTIME;
    int rc = fe_write_file(path, what, text, err);
    fe_free(text);
    return rc;
}

void fe_cli_prefix(fe_error *err, const char *fmt, ...)
{
    char head[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    fe_error_prepend(err, head);
}

void fe_cli_warn_fallback(const char *fault)
{
    if (fault[0])
        fprintf(stderr, "fuseeng: warning: %s; continuing without its fusions (fallback_on_error = "
                "unfused)\n", fault);
}

int fe_cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fe_cli_usage(cmd, "%s needs a value", name);
        return 2;
    }
    *val = argv[++*i];
    return 1;
}

int fe_cli_add_dim(const char *cmd, fe_cli_dims *dims, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *end;
    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof dims->buf[0])
        return fe_cli_usage(cmd, "--dim expects NAME=VALUE, e.g. --dim S=4096; got '%s'", arg);
    if (dims->n >= 64)
        return fe_cli_usage(cmd, "at most 64 --dim options");
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (errno || *end || end == eq + 1 || v < 1)
        return fe_cli_usage(cmd, "--dim %s: the value must be a positive integer", arg);
    memcpy(dims->buf[dims->n], arg, (size_t)(eq - arg));
    dims->buf[dims->n][eq - arg] = '\0';
    dims->names[dims->n] = dims->buf[dims->n];
    dims->values[dims->n] = v;
    dims->n++;
    return 0;
}

int fe_cli_seed(const char *cmd, const char *val, uint64_t *seed)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(val, &end, 10);
    if (errno || end == val || *end || val[0] == '-' || v == 0)
        return fe_cli_usage(cmd, "--seed needs a positive integer, got '%s'", val);
    *seed = v;
    return 0;
}

int fe_cli_seconds(const char *cmd, const char *name, const char *val, double *s)
{
    char *end;
    double v = strtod(val, &end);
    if (end == val || *end || !(v > 0) || v > 86400)
        return fe_cli_usage(cmd, "%s needs a number of seconds in (0, 86400], got '%s'", name, val);
    *s = v;
    return 0;
}
