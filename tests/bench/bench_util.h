/* bench_util.h: the clock, the median and the argument filter the
 * benchmark programs share.
 * Header-only (static functions): each benchmark is one program of one
 * file, and these are too small to be a library of their own. */
#ifndef FE_BENCH_UTIL_H
#define FE_BENCH_UTIL_H

#include <string.h>
#include <time.h>

/* Monotonic wall time in seconds. */
static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
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

#endif
