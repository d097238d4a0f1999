/* cmd_sim.c: `fuseeng sim MODEL --plan plan.json`: simulate a saved plan
 * the way it was made (planfile.h): at its dims, on its machine, and only
 * for the model it names unless --ignore-model-name is given. */
#include <string.h>

#include "cli.h"
#include "machine.h"
#include "planfile.h"
#include "plan_json.h"
#include "sandbox.h"
#include "sim.h"
#include "trace.h"

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
    const char *model = NULL, *trace = NULL, *val;
    fe_cli_dims dims = {0};
    fe_cli_planfile s = {0};
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
            s.planfile = val;
        } else if ((m = fe_cli_opt("sim", argc, argv, &i, "--machine", &val))) {
            if (m == 2)
                return 2;
            s.machine_opt = val;
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
            s.forced = 1;
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
    if (!s.planfile)
        return fe_cli_usage("sim", "missing --plan PLAN (a fuseeng.plan/1 file)");
    s.opts = &dims;

    fe_error err = {0};
    fe_graph *g = NULL;
    fe_machine machine;
    /* the machine file runs under the Lua limits given */
    fe_sandbox_opts so = {eo.max_instructions, eo.max_memory, eo.max_seconds, eo.home};
    fe_sandbox *sb = NULL;
    fe_plan *plan = NULL, *base = NULL;
    fe_sim_report rep, brep;
    int rc = 0, have = 0, haveb = 0;
    if (fe_plan_file_open(s.planfile, &s.pf, &err) != FE_OK || !(g = fe_cli_planfile_model(model, &s, &err)) ||
        !(sb = fe_sandbox_new(&so, &err)) || fe_cli_planfile_machine(&s, sb, &machine, &err) != FE_OK ||
        !(plan = fe_plan_file_plan(&s.pf, g, &err)) ||
        !(base = fe_plan_unfused(g, &err))) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    if (fe_sim_plan(plan, &machine, &rep, &err) != FE_OK) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    have = 1;
    if (fe_sim_plan(base, &machine, &brep, &err) != FE_OK) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    haveb = 1;
    if (trace) {
        const fe_sim_report *reps[2] = {&rep, &brep};
        const char *labels[2] = {s.planfile, "unfused"};
        if (fe_trace_write_file(trace, reps, labels, 2, &err) != FE_OK) {
            rc = fe_cli_fail(&err);
            goto out;
        }
    }
    if (json) {
        fe_jw w;
        fe_jw_init(&w, stdout, 2);
        fe_jw_obj(&w);
        fe_jw_key(&w, "setup");
        fe_cli_planfile_json(&s, g, &machine, &w);
        fe_jw_key(&w, "plan");
        fe_sim_report_json(&rep, &w, verbose);
        fe_jw_key(&w, "versus_unfused");
        fe_sim_report_compare_json(&rep, &brep, &w);
        fe_jw_end(&w);
    } else {
        printf("model %s, plan %s (%d groups)\n", g->name, s.planfile, plan->ngroups);
        fe_cli_planfile_text(&s, g, &machine, stdout);
        fe_sim_report_compare_table(&rep, &brep, stdout);
        if (verbose) {
            printf("\ngroups\n");
            fe_sim_report_groups_table(&rep, stdout);
        }
    }
out:
    if (have)
        fe_sim_report_free(&rep);
    if (haveb)
        fe_sim_report_free(&brep);
    fe_plan_free(plan);
    fe_plan_free(base);
    fe_plan_file_close(&s.pf);
    fe_sandbox_free(sb);
    fe_graph_free(g);
    return rc;
}

const fe_cmd fe_cmd_sim = {"sim", "simulate a saved plan on a machine", usage, run};
