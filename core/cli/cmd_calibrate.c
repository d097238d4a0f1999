/* cmd_calibrate.c: `fuseeng calibrate [--device cpu|cuda] -o FILE`:
 * measure this CPU or the GPU into a machine file for the simulator. */
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng calibrate [--device cpu|cuda] [-o FILE] [options]\n"
    "\n"
    "Measure this CPU (or the GPU) with the engine's own kernels and write a machine\n"
    "file for --machine: the per-kernel overhead, a memory sweep from 64 KiB past the\n"
    "last-level cache (the GPU's L2), the on-chip traffic of fused chains, vector and\n"
    "matrix FLOP rates, the cost of a tile and of register spills. Each figure is the\n"
    "one that makes the simulator's formula give its probe's measured time, and a\n"
    "comment above it says how it was measured, with its spread. Takes about half a\n"
    "minute; a progress line shows on a terminal. docs/fidelity.md is the reference.\n"
    "\n"
    "  -o, --output FILE  write the machine file here (default: the standard output)\n"
    "  --device cpu|cuda  what to measure (default cpu)\n"
    "  --name NAME        the machine's name (default host, or cuda)\n"
    "  --budget S         seconds of repetitions per probe (default 0.25)\n"
    "  --quiet            no progress line\n"
    "\n"
    "Exit status 2 for bad options or a device that cannot be opened.\n";

static int run(int argc, char **argv)
{
    const char *out = NULL, *val;
    fe_calibrate_options o = {0};
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        int m;
        if ((m = fe_cli_opt("calibrate", argc, argv, &i, "-o", &val)) ||
            (m = fe_cli_opt("calibrate", argc, argv, &i, "--output", &val))) {
            if (m == 2)
                return 2;
            out = val;
        } else if ((m = fe_cli_opt("calibrate", argc, argv, &i, "--device", &val))) {
            if (m == 2 || fe_cli_device("calibrate", val, &o.device))
                return 2;
        } else if ((m = fe_cli_opt("calibrate", argc, argv, &i, "--name", &val))) {
            if (m == 2)
                return 2;
            o.name = val;
        } else if ((m = fe_cli_opt("calibrate", argc, argv, &i, "--budget", &val))) {
            if (m == 2 || fe_cli_seconds("calibrate", "--budget", val, &o.budget))
                return 2;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else {
            return fe_cli_usage("calibrate", "unknown %s '%s'",
                                argv[i][0] == '-' ? "option" : "argument", argv[i]);
        }
    }
    if (out) {   /* a directory that cannot take the file: say so before measuring */
        char dir[4096];
        const char *slash = strrchr(out, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - out) + 1 : 1, slash ? out : ".");
        if (access(dir, W_OK) != 0)
            return fe_cli_usage("calibrate", "-o %s: cannot write in %s", out, dir);
    }
    o.progress = !quiet;   /* drawn only on a terminal, never after --quiet (progress.h) */
    fe_error err = {0};
    char *text = fe_calibrate_machine(&o, &err);
    if (!text)
        return fe_cli_fail(&err);
    if (out)
        return fe_cli_write(out, "the machine file", text, &err) ? fe_cli_fail(&err) : 0;
    return fe_cli_put(text) ? 1 : 0;
}

const fe_cmd fe_cmd_calibrate = {"calibrate", "measure this CPU or the GPU into a machine file",
                                 usage, run};
