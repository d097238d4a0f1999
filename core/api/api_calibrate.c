/* api_calibrate.c: fuseeng calibrate as a call: the device measured
 * (core/exec/calibrate.c) and written as a machine file. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "calibrate.h"
#include "version.h"

static int write_machine(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    (void)format, (void)err;
    const fe_machine *m = obj;
    const fe_calib_notes *n = arg;
    const char *notes[32] = {0};
    for (int i = 0; i < fe_machine_nfields() && i < 32; i++)
        notes[i] = n->field[i];
    fe_machine_write_lua(m, n->header, notes, f);
    return FE_OK;
}

char *fe_calibrate_machine(const fe_calibrate_options *o, fe_error *err)
{
    fe_calib_opts co = {0};
    if (o) {
        co.device = o->device;
        co.budget = o->budget;
        co.name = o->name;
        co.progress = o->progress;
    }
    if (co.device != FE_DEVICE_CPU && co.device != FE_DEVICE_CUDA) {
        fe_error_set(err, FE_EINPUT, "fe_calibrate_machine: device %d is not cpu (0) or cuda (1)",
                     co.device);
        return NULL;
    }
    if (co.name && (!co.name[0] || strlen(co.name) > 63 || strspn(co.name,
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != strlen(co.name))) {
        fe_error_set(err, FE_EINPUT, "calibrate: the name '%.80s' is not 1 to 63 letters, digits, "
                     "'_', '-' or '.'", co.name);
        return NULL;
    }
    fe_machine m;
    fe_calib_notes *notes = calloc(1, sizeof *notes);
    if (!notes) {
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    char *text = NULL;
    if (fe_calibrate(&co, &m, notes, err) == FE_OK) {
        char date[32];
        time_t now = time(NULL);
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
        snprintf(notes->header, sizeof notes->header,
                 "%s.lua: this %s measured by fuseeng calibrate (fuseeng %s) on %s.\n"
                 "%s\n"
                 "Every figure was measured with the engine's own kernels and is the one that\n"
                 "makes the simulator's formula give its probe's measured time (docs/fidelity.md);\n"
                 "the note above each says how, with the median and spread. Run\n"
                 "`fuseeng fidelity MODEL... --machine THIS_FILE` to see how well it predicts.\n"
                 "Units: bytes, bytes per second, FLOP per second, microseconds.",
                 m.name, co.device == FE_DEVICE_CUDA ? "GPU" : "CPU", FE_VERSION, date,
                 m.description);
        text = fe_api_text(write_machine, &m, notes, FE_FORMAT_TEXT, err);
    }
    free(notes);
    return text;
}
