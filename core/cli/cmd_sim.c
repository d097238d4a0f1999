/* cmd_sim.c: `fuseeng sim MODEL --plan plan.json`: simulate a saved plan
 * the way it was made (fe_saved_plan_read): at its dims, on its machine,
 * and only for the model it names unless --ignore-model-name is given. */
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng sim MODEL --plan PLAN [--machine M] [--dim NAME=V] [--verbose] [--json]\n"
    "                   [--trace FILE] [--ignore-model-name]\n"
    "\n"
    "Simulate a saved plan (fuseeng.plan/1, e.g. from fuseeng run --plan-out) of MODEL\n"
    "and compare it with the unfused baseline. The plan is simulated as it was made:\n"
    "at the dims it records and on the machine it names (a shipped machine); --dim\n"
    "and --machine override them, and the report says which values came from where.\n"
    "The plan is checked like any plan: every node in one group, groups convex and\n"
    "acyclic, kernel classes. A group without a split gets the simulator's default.\n"
    "PLAN may be a dispatch table (fuseeng.dispatch/1, from run --dim NAME=V1,V2,...):\n"
    "the plan of the bucket serving the model's value of NAME (--dim, else the\n"
    "model's) is simulated, at that value.\n"
    "\n"
    "  --plan PLAN          the plan file (required)\n"
    "  --machine M          a name in lua/machines or a machine file (default: the\n"
    "                       plan's machine, else gcu)\n"
    "  --dim NAME=V         override a dim (default: the plan's dims, else the model's)\n"
    "  --ignore-model-name  simulate a plan whose \"model\" names another model (its\n"
    "                       node names must still be MODEL's)\n"
    "  --verbose            add a line per group (with --json, per-group figures)\n"
    "  --json               print the report as JSON\n"
    "  --trace FILE         write a Perfetto / Chrome trace of the plan and the baseline\n"
    "  --max-instructions N, --max-memory MIB, --max-seconds S\n"
    "                       limits of the machine file's Lua run (as for fuseeng run)\n"
    "\n"
    "Exit status 2 for a bad model, plan, machine or option, or a plan for another model.\n";

static int run(int argc, char **argv)
{
    const char *model = NULL, *trace = NULL, *planfile = NULL, *val;
    fe_cli_dims dims = {0};
    fe_read_options ro = {0};
    fe_engine_options eo = {0};
    int verbose = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_limit_opt("sim", argc, argv, &i, &eo);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if ((m = fe_cli_opt("sim", argc, argv, &i, "--plan", &val))) {
            if (m == 2)
                return 2;
            planfile = val;
        } else if ((m = fe_cli_opt("sim", argc, argv, &i, "--machine", &val))) {
            if (m == 2)
                return 2;
            ro.machine = val;
        } else if ((m = fe_cli_opt("sim", argc, argv, &i, "--trace", &val))) {
            if (m == 2)
                return 2;
            trace = val;
        } else if ((m = fe_cli_opt("sim", argc, argv, &i, "--dim", &val))) {
            if (m == 2 || fe_cli_add_dim("sim", &dims, val))
                return 2;
        } else if (strcmp(argv[i], "--verbose") == 0) {
            verbose = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--ignore-model-name") == 0) {
            ro.ignore_model_name = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("sim", "unknown option '%s'", argv[i]);
        } else if (model) {
            return fe_cli_usage("sim", "one MODEL at a time (got '%s' and '%s')", model, argv[i]);
        } else {
            model = argv[i];
        }
    }
    if (!model)
        return fe_cli_usage("sim", "missing MODEL (a fuseeng.model/1 JSON file)");
    if (!planfile)
        return fe_cli_usage("sim", "missing --plan PLAN (a fuseeng.plan/1 file)");
    fe_cli_file in[] = {{"the model", model}, {"--plan", planfile}, {"--machine", ro.machine}},
                out[] = {{"--trace", trace}};
    if (fe_cli_distinct("sim", in, 3, out, 1))
        return 2;
    ro.ndims = dims.n;
    ro.dim_names = dims.names;
    ro.dim_values = dims.values;

    fe_error err = {0};
    fe_engine *e = NULL;
    fe_saved_plan *s = NULL;
    fe_report *rep = NULL;
    int rc = 0, groups = verbose ? FE_WITH_GROUPS : 0;
    /* The limits are the machine file's: the engine's own library loads
     * under the defaults. */
    fe_engine_options home = {.home = eo.home};
    if (!(e = fe_engine_new(&home, &err)))
        goto fail;
    fe_engine_set_limits(e, &eo);
    if (!(s = fe_saved_plan_read(e, planfile, model, &ro, &err)) ||
        !(rep = fe_engine_simulate(e, fe_saved_plan_plan(s), &err)))
        goto fail;
    if (trace && fe_cli_write(trace, "the trace", fe_report_format(rep, s, FE_FORMAT_TRACE, &err),
                              &err) != FE_OK)
        goto fail;
    if (json) {
        if (fe_cli_put(fe_report_format(rep, s, FE_FORMAT_JSON | groups, &err)))
            goto fail;
    } else {
        fe_cli_printf(stdout, "model %s, plan %s (%d groups)\n",
                      fe_model_name(fe_saved_plan_model(s)), planfile,
                      fe_plan_groups(fe_saved_plan_plan(s)));
        if (fe_cli_put(fe_saved_plan_format(s, FE_FORMAT_TEXT, &err)) ||
            fe_cli_put(fe_report_format(rep, NULL, FE_FORMAT_TEXT | groups, &err)))
            goto fail;
    }
    goto out;
fail:
    rc = fe_cli_fail(&err);
out:
    fe_report_free(rep);
    fe_saved_plan_free(s);
    fe_engine_free(e);
    return rc;
}

const fe_cmd fe_cmd_sim = {"sim", "simulate a saved plan on a machine", usage, run};
