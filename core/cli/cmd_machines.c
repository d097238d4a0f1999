/* cmd_machines.c: `fuseeng machines`: the machines shipped in lua/machines,
 * one line each with what --machine NAME simulates. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng machines\n"
    "\n"
    "List the simulated machines shipped in lua/machines, each with its one-line\n"
    "description (L2 size and bandwidth, L3 bandwidth, launch time). Give a name to\n"
    "--machine, or a path to your own machine file (docs/simulator.md).\n";

static int run(int argc, char **argv)
{
    fe_error err = {0};
    if (argc > 1)
        return fe_cli_usage("machines", "takes no arguments (got '%s')", argv[1]);
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e)
        return fe_cli_fail(&err);
    char names[4096];
    fe_engine_machine_names(e, names, sizeof names);
    int rc = 0, n = 0;
    for (char *save = NULL, *t = strtok_r(names, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        if (fe_engine_set_machine(e, t, &err) != FE_OK) {   /* a broken file: say so, go on */
            fprintf(stderr, "fuseeng machines: %s\n", err.message);
            rc = 1;
            continue;
        }
        fe_cli_printf(stdout, "%-12s %s\n", t, fe_engine_machine_description(e));
        n++;
    }
    if (!n && !rc) {
        fprintf(stderr, "fuseeng machines: no machine files in %s/lua/machines\n", fe_engine_home(e));
        rc = 1;
    }
    fe_engine_free(e);
    return rc;
}

const fe_cmd fe_cmd_machines = {"machines", "list the shipped simulated machines", usage, run};
