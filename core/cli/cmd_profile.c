/* cmd_profile.c: `fuseeng profile MODEL [--policy P] -o profile.json`:
 * measure single ops and a plan's groups on this CPU and write the profile
 * file (InfiniCore's {single, fused} form, plus exact keys and meta). */
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng profile MODEL [--policy P | --plan FILE] -o PROFILE [options]\n"
    "\n"
    "Measure every op of MODEL alone and every fused group of the plan on this CPU's\n"
    "kernels or the GPU's (--device), and write a profile file for --profile and\n"
    "ctx.profile (the profile_lookup policy): \"single\" by op name and by exact key\n"
    "(op, dtypes, shapes), \"fused\" by compat key (\"silu+mul\") and by exact key (16\n"
    "hex digits of SHA-256 over the group's canonical text), times in ms (medians).\n"
    "Several items with the same key (an op on different shapes, layers repeating)\n"
    "get the median of their medians. Without --policy or --plan only single ops are\n"
    "measured.\n"
    "\n"
    "  -o, --output FILE  the profile file to write (required)\n"
    "  --policy P         plan with P; its groups of two or more nodes are measured\n"
    "  --plan FILE        measure the groups of a saved plan instead (at its dims and\n"
    "                     machine, as for bench; --ignore-model-name as well)\n"
    "  --dim NAME=V       override a model dim\n"
    "  --budget S         seconds of repetitions per item (default 0.2)\n"
    "  --device cpu|cuda  where to run and time them (default cpu); on cuda the\n"
    "                     generated kernels (docs/cuda.md), timed by CUDA events\n"
    "  --seed N           random inputs and weights (default 1)\n"
    "  --weights FILE     the model's weights from a safetensors file (docs/formats.md)\n"
    "  --inputs FILE      the graph inputs from a safetensors file\n"
    "  --param, --combine, --machine, --profile, --max-instructions, --max-memory,\n"
    "  --max-seconds      as for fuseeng run\n";

typedef struct prof_opts {
    const char *model, *out;
    fe_cli_plan_opts plan;
    fe_timing_options m;
} prof_opts;

static int parse(int argc, char **argv, prof_opts *o)
{
    const char *val = NULL;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_plan_opt("profile", argc, argv, &i, &o->plan);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if ((m = fe_cli_opt("profile", argc, argv, &i, "-o", &val)) ||
            (m = fe_cli_opt("profile", argc, argv, &i, "--output", &val))) {
            if (m == 2)
                return 2;
            o->out = val;
        } else if ((m = fe_cli_opt("profile", argc, argv, &i, "--budget", &val))) {
            if (m == 2 || fe_cli_seconds("profile", "--budget", val, &o->m.budget))
                return 2;
        } else if ((m = fe_cli_opt("profile", argc, argv, &i, "--device", &val))) {
            if (m == 2 || fe_cli_device("profile", val, &o->m.device))
                return 2;
            o->plan.eng.bench_device = o->m.device;   /* a policy's ctx:bench too */
        } else if ((m = fe_cli_opt("profile", argc, argv, &i, "--seed", &val))) {
            if (m == 2 || fe_cli_seed("profile", val, &o->m.seed))
                return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("profile", "unknown option '%s'", argv[i]);
        } else if (o->model) {
            return fe_cli_usage("profile", "one MODEL at a time (got '%s' and '%s')", o->model,
                                argv[i]);
        } else {
            o->model = argv[i];
        }
    }
    if (!o->model)
        return fe_cli_usage("profile", "missing MODEL (a fuseeng.model/1 JSON file)");
    if (!o->out)
        return fe_cli_usage("profile", "missing -o PROFILE (the file to write)");
    fe_cli_file in[24], out[] = {{"-o", o->out}};
    if (fe_cli_distinct("profile", in, fe_cli_plan_inputs(o->model, &o->plan, in, 24), out, 1))
        return 2;
    return fe_cli_plan_check("profile", &o->plan, 0);
}

static int run(int argc, char **argv)
{
    prof_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_cli_planned pl;
    fe_timing *t = NULL;
    fe_profile_info info;
    if (fe_cli_plan_make(o.model, &o.plan, &pl, &err) != FE_OK)
        return fe_cli_fail(&err);
    o.m.weights = o.plan.eng.weights;
    o.m.inputs = o.plan.eng.inputs;
    fe_progress_catch_ctrl_c();   /* Ctrl-C: the profile of the groups measured */
    if (!(t = fe_plan_time(pl.plan, &o.m, &err)) ||
        fe_timing_write_profile(t, o.out, &info, &err) != FE_OK) {
        rc = fe_cli_fail(&err);
    } else {
        const char *name = fe_model_name(pl.model);
        fe_cli_printf(stdout, "wrote %s: %d single and %d fused entries from %d ops and %d "
                      "groups of %s (%s)\n", o.out, info.single, info.fused,
                      fe_model_nodes(pl.model), info.groups, name[0] ? name : o.model,
                      fe_threads());
        if (fe_timing_interrupted(t))
            rc = fe_cli_interrupted();
    }
    fe_timing_free(t);
    fe_cli_planned_free(&pl);
    return rc;
}

const fe_cmd fe_cmd_profile = {"profile", "measure ops and groups into a profile file", usage, run};
