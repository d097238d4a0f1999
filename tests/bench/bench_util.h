/* bench_util.h: the clock and the median every benchmark program uses.
 * Header-only (static functions): each benchmark is one program of one
 * file, and these are too small to be a library of their own. */
#ifndef FE_BENCH_UTIL_H
#define FE_BENCH_UTIL_H

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

#endif
