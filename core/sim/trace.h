/* trace.h: simulator reports as a Chrome trace-event / Perfetto JSON file
 * (open it at ui.perfetto.dev or chrome://tracing). */
#ifndef FE_TRACE_H
#define FE_TRACE_H

#include <stdio.h>

#include "sim.h"

/* Write one trace holding n reports, each as its own process named by
 * labels[i] (NULL: "POLICY on MACHINE"): a "kernels" track of complete
 * events (one per group, named by its ops, args with bytes, split,
 * registers) and counter tracks for L2 occupancy and device memory. Times
 * are the simulated microseconds. Returns FE_OK, or FE_EINPUT if writing
 * failed (an output file is the user's choice: exit status 2). */
int fe_trace_write(FILE *f, const fe_sim_report *const *reports, const char *const *labels, int n,
                   fe_error *err);

/* The same into a file at path, written whole or not at all (outfile.h):
 * a failure leaves no partial file. */
int fe_trace_write_file(const char *path, const fe_sim_report *const *reports,
                        const char *const *labels, int n, fe_error *err);

#endif
