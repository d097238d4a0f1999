/* util.c: helpers shared by the CLI commands: usage errors, options, units. */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* Print fmt to f with control characters escaped (fe_escape): the
 * arguments are names and paths from the command line and input files. */
static void vput(FILE *f, int keep_lines, const char *fmt, va_list ap)
{
    char raw[4096], shown[4 * sizeof raw];
    vsnprintf(raw, sizeof raw, fmt, ap);
    fe_escape(shown, sizeof shown, raw, keep_lines);
    fputs(shown, f);
}

void fe_cli_printf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(f, 1, fmt, ap);
    va_end(ap);
}

int fe_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuseeng %s: ", cmd);
    va_start(ap, fmt);
    vput(stderr, 0, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'fuseeng help %s')\n", cmd);
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

int fe_cli_interrupted(void)
{
    fprintf(stderr, "fuseeng: interrupted (Ctrl-C): what was finished is printed above\n");
    return 130;
}

void fe_cli_command_line(int argc, char **argv, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "fuseeng");
    for (int i = 0; i < argc && n < size; i++) {
        const char *a = argv[i];
        int plain = *a != 0;
        for (const char *c = a; *c && plain; c++)
            plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *c) != NULL;
        n += (size_t)snprintf(buf + n, size - n, plain ? " %s" : " '", a);
        for (const char *c = a; !plain && *c && n < size; c++)
            n += (size_t)snprintf(buf + n, size - n, *c == '\'' ? "'\\''" : "%c", *c);
        if (!plain && n < size)
            n += (size_t)snprintf(buf + n, size - n, "'");
    }
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
        fe_cli_printf(stderr, "fuseeng: warning: %s; continuing without its fusions "
                      "(fallback_on_error = unfused)\n", fault);
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

int fe_cli_parse_dim(const char *cmd, const char *arg, fe_dimarg *d)
{
    fe_error err = {0};
    if (fe_dimarg_parse(arg, strlen(arg), d, &err) != FE_OK)
        return fe_cli_usage(cmd, "--dim %s: %s", arg, err.message);
    return 0;
}

int fe_cli_add_dim(const char *cmd, fe_cli_dims *dims, const char *arg)
{
    fe_dimarg d;
    if (fe_cli_parse_dim(cmd, arg, &d))
        return 2;
    if (d.n > 1)
        return fe_cli_usage(cmd, "--dim %s: %s takes one value per dim", arg, cmd);
    if (dims->n >= 64)
        return fe_cli_usage(cmd, "at most 64 --dim options");
    snprintf(dims->buf[dims->n], sizeof dims->buf[0], "%s", d.name);
    dims->names[dims->n] = dims->buf[dims->n];
    dims->values[dims->n] = d.values[0];
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

int fe_cli_device(const char *cmd, const char *val, int *device)
{
    if (!strcmp(val, "cpu"))
        *device = FE_DEVICE_CPU;
    else if (!strcmp(val, "cuda"))
        *device = FE_DEVICE_CUDA;
    else
        return fe_cli_usage(cmd, "--device is cpu or cuda, got '%s'", val);
    return 0;
}

/* Same file: by device and inode when both exist, else (by_name) by name.
 * An input that does not exist as a file (a shipped policy's bare name)
 * cannot be overwritten. */
static int same_file(const char *a, const char *b, int by_name)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return by_name && strcmp(a, b) == 0;
}

int fe_cli_distinct(const char *cmd, const fe_cli_file *in, int nin, const fe_cli_file *out,
                    int nout)
{
    for (int i = 0; i < nout; i++) {
        if (!out[i].path)
            continue;
        for (int k = 0; k < nin; k++)
            if (in[k].path && same_file(out[i].path, in[k].path, 0))
                return fe_cli_usage(cmd, "%s %s is also %s, which this command reads; write "
                                    "the output to another file", out[i].opt, out[i].path,
                                    in[k].opt);
        for (int k = 0; k < i; k++)
            if (out[k].path && same_file(out[i].path, out[k].path, 1))
                return fe_cli_usage(cmd, "%s and %s both name %s; give each output its own "
                                    "file", out[k].opt, out[i].opt, out[i].path);
    }
    return 0;
}

int fe_cli_shipped(fe_engine *e, char (*names)[64], int cap)
{
    char pat[PATH_MAX + 32];
    glob_t gl;
    snprintf(pat, sizeof pat, "%s/policies/*.lua", fe_engine_home(e));
    if (glob(pat, 0, NULL, &gl) != 0) {
        fprintf(stderr, "fuseeng: no policies in %s/policies\n", fe_engine_home(e));
        return -1;
    }
    int n = 0;
    for (size_t i = 0; i < gl.gl_pathc && n < cap; i++) {
        const char *b = strrchr(gl.gl_pathv[i], '/');
        b = b ? b + 1 : gl.gl_pathv[i];
        size_t len = strlen(b) - 4;   /* without ".lua" */
        if (len < 64)
            snprintf(names[n++], 64, "%.*s", (int)len, b);
    }
    globfree(&gl);
    return n;
}

int fe_cli_count(const char *cmd, const char *name, const char *val, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long n = strtol(val, &end, 10);
    if (end == val || *end || errno || n < lo || n > hi)
        return fe_cli_usage(cmd, "%s expects a whole number from %ld to %ld", name, lo, hi);
    *out = (int)n;
    return 0;
}
