/* bench_util.h: what the benchmark programs share: the median,
 * the argument filter, a measurement in a child process (its own peak
 * RSS) and a command's JSON output.
 * Header-only (static functions): each benchmark is one program of one
 * file, and these are too small to be a library of their own. */
#ifndef FE_BENCH_UTIL_H
#define FE_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "graph.h"

/* Bytes a whole-graph kernel must move: every input and weight read once,
 * every graph output written once. */
static inline double graph_io_bytes(const fe_graph *g)
{
    double b = 0;
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *tt = fe_graph_tensor(g, t);
        if (tt->producer < 0 || (tt->flags & FE_T_OUTPUT))
            b += (double)tt->bytes;
    }
    return b;
}

/* Median of v[0..n) (n > 0); sorts v in place. */
static inline double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Whether a benchmark's command line (PROGRAM ARG1 NAME...) asks for
 * `name`: every name is wanted when it names none. */
static inline int wanted(int argc, char **argv, const char *name)
{
    if (argc <= 2)
        return 1;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], name))
            return 1;
    return 0;
}

/* Run work(ctx, msg, cap) in a forked child, so that the peak RSS wait4
 * reports is the work's own: the child sends back the message work wrote
 * into msg (at most cap - 1 bytes). 0 with msg and *rss_kib set, or -1 when
 * the child failed (work returned non-zero, having said why on stderr). */
static inline int bench_child(int (*work)(void *ctx, char *msg, size_t cap), void *ctx,
                              char *msg, size_t cap, long *rss_kib)
{
    int fd[2], status;
    struct rusage ru;
    if (cap < 1 || pipe(fd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        memset(msg, 0, cap);
        if (work(ctx, msg, cap))
            _exit(1);
        size_t n = strlen(msg);
        _exit(write(fd[1], msg, n) == (ssize_t)n ? 0 : 1);
    }
    close(fd[1]);
    memset(msg, 0, cap);
    ssize_t got = pid < 0 ? -1 : read(fd[0], msg, cap - 1);
    close(fd[0]);
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || got <= 0)
        return -1;
    *rss_kib = ru.ru_maxrss;
    return 0;
}

/* Run cmd and parse its stdout as one JSON value; NULL if it fails. The
 * output is read to its end before the pipe closes: a writer that still
 * flushes would otherwise die of a broken pipe. */
static inline json_t *run_json(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + len, 1, cap - len, p)) > 0;) {
        len += got;
        if (len == cap) {
            char *more = realloc(buf, cap *= 2);
            if (!more)
                free(buf);
            buf = more;
        }
    }
    int rc = pclose(p);
    json_error_t je;
    json_t *v = rc == 0 && buf ? json_loadb(buf, len, JSON_DISABLE_EOF_CHECK, &je) : NULL;
    free(buf);
    return v;
}

/* The value at a dotted path ("summary.executed.check_ms"), or NULL. */
static inline json_t *json_at(json_t *v, const char *path)
{
    char key[128];
    const char *s = path;
    while (v && *s) {
        size_t n = strcspn(s, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, s);
        v = json_object_get(v, key);
        s += n + (s[n] == '.');
    }
    return v;
}

/* The number at a dotted path, or -1. */
static inline double json_num(json_t *v, const char *path)
{
    v = json_at(v, path);
    return json_is_number(v) ? json_number_value(v) : -1;
}

/* Whether the value at a dotted path is true. */
static inline int json_true_at(json_t *v, const char *path)
{
    return json_is_true(json_at(v, path));
}

#endif
