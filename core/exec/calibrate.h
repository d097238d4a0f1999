/* calibrate.h: a device measured with the engine's own kernels, as a
 * machine description for the simulator (fuseeng calibrate). */
#ifndef FE_CALIBRATE_H
#define FE_CALIBRATE_H

#include <stdio.h>

#include "error.h"
#include "machine.h"

typedef struct fe_calib_opts {
    int device;           /* FE_DEVICE_CPU or FE_DEVICE_CUDA */
    double budget;        /* seconds of repetitions per probe; 0 means 0.25 */
    const char *name;     /* the machine's name; NULL: "host" or "cuda" */
    int progress;         /* 1: a progress line on stderr */
} fe_calib_opts;

/* The notes of a calibration: per machine field (fe_machine_field_index),
 * how its figure was measured and its spread; and the whole run's. */
typedef struct fe_calib_notes {
    char header[4096];
    char field[32][1024];
} fe_calib_notes;

/* Measure the device of o into *m (every field set, checked by
 * fe_machine_check) with notes. FE_OK, or an error (a device that cannot
 * be opened: FE_EINPUT saying what is missing). */
int fe_calibrate(const fe_calib_opts *o, fe_machine *m, fe_calib_notes *notes, fe_error *err);

#endif
