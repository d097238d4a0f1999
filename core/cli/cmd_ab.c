/* cmd_ab.c: `fuseeng ab MODEL... --policy A --policy B`: compare policies on
 * the same models and the same simulated machine. */
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng ab MODEL... --policy A --policy B [--policy C ...] [options]\n"
    "\n"
    "Plan every MODEL with every policy on one simulated machine and compare them\n"
    "with the unfused baseline: kernels, simulated time, speedup, L3 traffic,\n"
    "device-memory peak, tiled groups. The fastest plan of each model is marked.\n"
    "\n"
    "  --policy P        a policy (at least two; a name in policies/ or a file)\n"
    "  --param K=V       override a parameter in every policy that has it\n"
    "  --machine M       simulated machine (default gcu)\n"
    "  --profile FILE    measured times for profile-driven policies\n"
    "  --dim NAME=V      override a dim in every model that has it\n"
    "  --json            print the results as JSON\n"
    "  --csv             print one CSV row per model and policy\n"
    "  --svg FILE        write a bar chart of the speedups\n"
    "  --measure         also run every plan on this CPU's kernels: measured time\n"
    "                    (median), speedup over every op as its own kernel, and a\n"
    "                    check of the results against the unfused reference\n"
    "  --budget S        seconds of timed runs per plan with --measure (default 0.5)\n"
    "  --max-instructions N, --max-memory MIB, --max-seconds S\n"
    "                    limits of each policy run (as for fuseeng run)\n"
    "\n"
    "Exit status 1 when --measure finds a plan whose results differ from the\n"
    "reference (the table marks it), 2 for bad input.\n";

typedef struct ab_opts {
    const char *models[64];
    int nmodels;
    const char *policies[16];
    int npolicies;
    const char *params[64];
    int nparams;
    fe_cli_dims dims;
    const char *machine, *svg, *profile;
    int json, csv, measure;
    double budget;
    fe_engine_options limits;   /* the Lua limits */
} ab_opts;

static int parse(int argc, char **argv, ab_opts *o)
{
    const char *val;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_limit_opt("ab", argc, argv, &i, &o->limits);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if ((m = fe_cli_opt("ab", argc, argv, &i, "--policy", &val))) {
            if (m == 2)
                return 2;
            if (o->npolicies == 16)
                return fe_cli_usage("ab", "at most 16 policies");
            o->policies[o->npolicies++] = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--param", &val))) {
            if (m == 2)
                return 2;
            if (!strchr(val, '=') || val[0] == '=' || o->nparams == 64)
                return fe_cli_usage("ab", "--param expects KEY=VALUE");
            o->params[o->nparams++] = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--machine", &val))) {
            if (m == 2)
                return 2;
            o->machine = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--profile", &val))) {
            if (m == 2)
                return 2;
            o->profile = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--svg", &val))) {
            if (m == 2)
                return 2;
            o->svg = val;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--dim", &val))) {
            if (m == 2 || fe_cli_add_dim("ab", &o->dims, val))
                return 2;
        } else if ((m = fe_cli_opt("ab", argc, argv, &i, "--budget", &val))) {
            if (m == 2 || fe_cli_seconds("ab", "--budget", val, &o->budget))
                return 2;
        } else if (strcmp(argv[i], "--measure") == 0) {
            o->measure = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (strcmp(argv[i], "--csv") == 0) {
            o->csv = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("ab", "unknown option '%s'", argv[i]);
        } else {
            if (o->nmodels == 64)
                return fe_cli_usage("ab", "at most 64 models");
            o->models[o->nmodels++] = argv[i];
        }
    }
    if (o->nmodels == 0)
        return fe_cli_usage("ab", "missing MODEL");
    if (o->npolicies < 2)
        return fe_cli_usage("ab", "give at least two --policy options to compare");
    if (o->json && o->csv)
        return fe_cli_usage("ab", "--json and --csv exclude each other");
    fe_cli_file in[64 + 16 + 2], out[] = {{"--svg", o->svg}};
    int nin = 0;
    for (int i = 0; i < o->nmodels; i++)
        in[nin++] = (fe_cli_file){"a model", o->models[i]};
    for (int i = 0; i < o->npolicies; i++)
        in[nin++] = (fe_cli_file){"--policy", o->policies[i]};
    in[nin++] = (fe_cli_file){"--machine", o->machine};
    in[nin++] = (fe_cli_file){"--profile", o->profile};
    return fe_cli_distinct("ab", in, nin, out, 1);
}

/* Apply --param K=V to policy p where it has K; unknown everywhere is an
 * error (checked by the caller). Returns the number of params applied. */
static int apply_params(fe_policy *p, const ab_opts *o, int *used, fe_error *err)
{
    for (int i = 0; i < o->nparams; i++) {
        char key[256];
        const char *eq = strchr(o->params[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->params[i]), o->params[i]);
        fe_error local = {0};
        if (fe_policy_set_param(p, key, eq + 1, &local) == FE_OK) {
            used[i] = 1;
        } else if (!strstr(local.message, "has no param")) {
            *err = local;
            return -1;
        }
    }
    return 0;
}

static int run(int argc, char **argv)
{
    ab_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_engine_options eo = o.limits;
    eo.machine = o.machine;
    fe_engine *e = fe_engine_new(&eo, &err);
    if (!e)
        return fe_cli_fail(&err);
    if (o.profile && fe_engine_set_profile(e, o.profile, &err) != FE_OK) {
        fe_engine_free(e);
        return fe_cli_fail(&err);
    }
    fe_policy *pols[16] = {0};
    fe_ab *ab = NULL;
    int used[64] = {0};
    for (int i = 0; i < o.npolicies; i++) {
        if (!(pols[i] = fe_engine_load_policy(e, o.policies[i], &err)) ||
            apply_params(pols[i], &o, used, &err) != 0) {
            rc = fe_cli_fail(&err);
            goto out;
        }
    }
    for (int i = 0; i < o.nparams; i++)
        if (!used[i]) {
            rc = fe_cli_usage("ab", "--param %s: no policy given has that parameter", o.params[i]);
            goto out;
        }
    fe_ab_options ao = {o.nmodels, o.models, o.npolicies, pols, o.dims.n, o.dims.names,
                        o.dims.values, o.measure, o.budget};
    ab = fe_engine_ab(e, &ao, &err);
    for (int i = 0; i < fe_ab_faults(ab); i++)
        fe_cli_warn_fallback(fe_ab_fault(ab, i));
    if (!ab ||
        (o.svg && fe_cli_write(o.svg, "the chart", fe_ab_format(ab, FE_FORMAT_SVG, &err), &err)) ||
        fe_cli_put(fe_ab_format(ab, o.json ? FE_FORMAT_JSON : o.csv ? FE_FORMAT_CSV : FE_FORMAT_TEXT,
                                &err))) {
        rc = fe_cli_fail(&err);
        goto out;
    }
    int wrong = fe_ab_wrong(ab);
    if (wrong) {
        fprintf(stderr, "fuseeng: %d plan%s computed results that differ from the unfused reference "
                "(marked WRONG); 'fuseeng run MODEL --policy P --execute' shows which output\n",
                wrong, wrong == 1 ? "" : "s");
        rc = 1;
    }
out:
    fe_ab_free(ab);
    for (int i = 0; i < o.npolicies; i++)
        fe_policy_free(pols[i]);
    fe_engine_free(e);
    return rc;
}

const fe_cmd fe_cmd_ab = {"ab", "compare policies on models (simulated)", usage, run};
