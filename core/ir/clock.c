/* clock.c: the engine's clocks (clock.h). */
#include <time.h>

#include "clock.h"

static double seconds_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double fe_clock_s(void)
{
    return seconds_of(CLOCK_MONOTONIC);
}

int64_t fe_clock_coarse_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double fe_clock_cpu_s(void)
{
    return seconds_of(CLOCK_PROCESS_CPUTIME_ID);
}
