/* clock.h: the engine's clocks, one owner: the monotonic clock that every
 * timing and time limit reads, its cheap coarse variant for the sandbox's
 * hook, and the process's CPU time. The kernels sit right above core/ir
 * and read it too. */
#ifndef FE_CLOCK_H
#define FE_CLOCK_H

#include <stdint.h>

/* Monotonic wall time in seconds (CLOCK_MONOTONIC): only differences mean
 * anything. */
double fe_clock_s(void);

/* Coarse monotonic time in ns (CLOCK_MONOTONIC_COARSE): a few ns to read, a
 * few ms of resolution, plenty for limits in seconds (the sandbox's hook
 * reads it every thousand Lua instructions). */
int64_t fe_clock_coarse_ns(void);

/* CPU seconds of the whole process, every thread (CLOCK_PROCESS_CPUTIME_ID). */
double fe_clock_cpu_s(void);

#endif
