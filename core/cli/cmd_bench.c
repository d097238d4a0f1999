/* cmd_bench.c: `fuseeng bench MODEL [--policy P]`: time every group of a
 * plan and every single op on this CPU's kernels. */
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng bench MODEL [--policy P | --plan FILE] [options]\n"
    "\n"
    "Time, on this CPU's kernels or the GPU's (--device), every group of the plan\n"
    "(as one kernel, with its kernel choice and split) and every single op alone,\n"
    "then the plan and the unfused plan end to end (on the GPU also both replayed\n"
    "as CUDA graphs, when neither has an op on the host). Each item gets a warm-up and repetitions until its time\n"
    "budget; the report gives median, min, max, spread (interquartile range),\n"
    "repetitions, bytes (inputs read once + outputs written once) and the effective\n"
    "bandwidth. The two plans end to end run in interleaved rounds, and their\n"
    "speedup is the median of the rounds' ratios with its 95% interval. Without\n"
    "--policy or --plan every op is its own group.\n"
    "\n"
    "  --policy P         plan with P (repeat with --combine, --param as for run)\n"
    "  --plan FILE        time a saved plan (fuseeng run --plan-out), at the dims and\n"
    "                     on the machine it records unless --dim / --machine say\n"
    "                     otherwise (--ignore-model-name: made for another model)\n"
    "  --dim NAME=V       override a model dim\n"
    "  --machine M        the simulated machine the policy plans for (default gcu)\n"
    "  --profile FILE     measured times for profile-driven policies\n"
    "  --budget S         seconds of repetitions per item (default 0.2)\n"
    "  --device cpu|cuda  where to run and time them (default cpu); on cuda the\n"
    "                     generated kernels (docs/cuda.md), timed by CUDA events\n"
    "  --seed N           random inputs and weights (default 1)\n"
    "  --weights FILE     the model's weights from a safetensors file (every tensor of\n"
    "                     kind weight; docs/formats.md) instead of random values\n"
    "  --inputs FILE      the graph inputs from a safetensors file likewise\n"
    "  --json             print the results as JSON (fuseeng.bench/1)\n"
    "  --max-instructions N, --max-memory MIB, --max-seconds S\n"
    "                     limits of the policy run (as for fuseeng run)\n"
    "\n"
    "Set OMP_NUM_THREADS to choose the threads. Exit status 2 for a bad model,\n"
    "policy, option or data file, or a model with ops that have no kernel.\n";

typedef struct bench_opts {
    const char *model;
    fe_cli_plan_opts plan;
    fe_timing_options m;
    int json;
} bench_opts;

static int parse(int argc, char **argv, bench_opts *o)
{
    const char *val = NULL;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_plan_opt("bench", argc, argv, &i, &o->plan);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if ((m = fe_cli_opt("bench", argc, argv, &i, "--budget", &val))) {
            if (m == 2 || fe_cli_seconds("bench", "--budget", val, &o->m.budget))
                return 2;
        } else if ((m = fe_cli_opt("bench", argc, argv, &i, "--device", &val))) {
            if (m == 2 || fe_cli_device("bench", val, &o->m.device))
                return 2;
            o->plan.eng.bench_device = o->m.device;   /* a policy's ctx:bench too */
        } else if ((m = fe_cli_opt("bench", argc, argv, &i, "--seed", &val))) {
            if (m == 2 || fe_cli_seed("bench", val, &o->m.seed))
                return 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("bench", "unknown option '%s'", argv[i]);
        } else if (o->model) {
            return fe_cli_usage("bench", "one MODEL at a time (got '%s' and '%s')", o->model, argv[i]);
        } else {
            o->model = argv[i];
        }
    }
    if (!o->model)
        return fe_cli_usage("bench", "missing MODEL (a fuseeng.model/1 JSON file)");
    return fe_cli_plan_check("bench", &o->plan, 0);
}

static int run(int argc, char **argv)
{
    bench_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_cli_planned pl;
    fe_timing *t = NULL;
    if (fe_cli_plan_make(o.model, &o.plan, &pl, &err) != FE_OK)
        return fe_cli_fail(&err);
    o.m.totals = 1;
    o.m.weights = o.plan.eng.weights;
    o.m.inputs = o.plan.eng.inputs;
    fe_progress_catch_ctrl_c();   /* Ctrl-C: the report of the groups measured */
    if (!(t = fe_plan_time(pl.plan, &o.m, &err)) ||
        fe_cli_put(fe_timing_format(t, fe_cli_plan_label(&o.plan, pl.plan),
                                    o.json ? FE_FORMAT_JSON : FE_FORMAT_TEXT, &err)))
        rc = fe_cli_fail(&err);
    else if (fe_timing_interrupted(t))
        rc = fe_cli_interrupted();
    fe_timing_free(t);
    fe_cli_planned_free(&pl);
    return rc;
}

const fe_cmd fe_cmd_bench = {"bench", "time a plan's groups and every op on the CPU or GPU", usage, run};
