/* cmd_fidelity.c: `fuseeng fidelity MODEL... --machine M`: plan every model
 * with every shipped policy, simulate each plan on M, measure it on the
 * device (fuseeng ab --measure underneath) and say how well the simulated
 * times predict the measured ones (docs/fidelity.md). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng fidelity MODEL... --machine M [options]\n"
    "\n"
    "Plan each model with every shipped policy (or those of --policy), simulate each\n"
    "plan on the machine M and run it on the device in interleaved rounds (as\n"
    "'fuseeng ab --measure' does, no_fusion being the baseline), then report per plan\n"
    "the simulated and measured times and the relative error, and per model the\n"
    "Spearman rank correlation of the simulated and measured times and whether the\n"
    "simulator's fastest plan is the measured best (within its interval). Plans the\n"
    "simulator cannot tell apart count once; a model whose plans the device cannot\n"
    "tell apart is reported as tied and not counted. The summary gives the mean of\n"
    "the models' rank correlations, the median |relative error| over all plans and\n"
    "how often the simulator picks the best. docs/fidelity.md is the reference.\n"
    "\n"
    "  --machine M       the simulated machine (a name in lua/machines or a file;\n"
    "                    fuseeng calibrate writes one for this host); default gcu\n"
    "  --device cpu|cuda where the plans run (default cpu)\n"
    "  --policy P        only these policies (repeat); no_fusion is always added\n"
    "  --skip P          every shipped policy but these (repeat)\n"
    "  --param K=V       set a parameter in every policy that has it\n"
    "  --dim NAME=V      set a dim in every model that has it\n"
    "  --profile FILE    measured times for profile-driven policies\n"
    "  --budget S        seconds of timed rounds per plan (default 0.5)\n"
    "  --reps N          timed rounds per model (default: by --budget)\n"
    "  --weights FILE, --inputs FILE   the models' data (as for fuseeng ab)\n"
    "  --json            the figures as JSON (fuseeng.fidelity/1)\n"
    "  --svg FILE        also write a scatter of simulated against measured times\n"
    "  --out FILE        write the results to FILE instead of the standard output\n"
    "  --max-instructions N, --max-memory MIB, --max-seconds S\n"
    "                    limits of each policy run (as for run)\n"
    "\n"
    "Exit status 1 when a policy failed on a model or a plan computed wrong results\n"
    "(the report still completes), 2 for bad input.\n";

enum { MAXN = 64 };

typedef struct fid_opts {
    const char *models[MAXN], *only[MAXN], *skip[MAXN], *params[MAXN], *dims[MAXN];
    int nmodels, nonly, nskip, nparams, ndims;
    const char *machine, *svg, *out, *profile;
    int json, reps, device;
    char command[2048];               /* the command line, for the report's provenance */
    double budget;
    fe_engine_options limits;
} fid_opts;

static int add(const char **list, int *n, const char *val, const char *what)
{
    if (*n == MAXN)
        return fe_cli_usage("fidelity", "at most %d %s", MAXN, what);
    list[(*n)++] = val;
    return 0;
}

static int parse_opt(int argc, char **argv, int *i, fid_opts *o)
{
    const char *val;
    int m;
    struct { const char *name; const char **list; int *n; } lists[] = {
        {"--policy", o->only, &o->nonly}, {"--skip", o->skip, &o->nskip},
        {"--param", o->params, &o->nparams}, {"--dim", o->dims, &o->ndims}};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        if ((m = fe_cli_opt("fidelity", argc, argv, i, lists[k].name, &val)))
            return m == 2 ? 2 : add(lists[k].list, lists[k].n, val, lists[k].name);
    struct { const char *name; const char **dst; } singles[] = {
        {"--machine", &o->machine}, {"--svg", &o->svg}, {"--out", &o->out},
        {"--profile", &o->profile}, {"--weights", &o->limits.weights},
        {"--inputs", &o->limits.inputs}};
    for (size_t k = 0; k < sizeof singles / sizeof singles[0]; k++)
        if ((m = fe_cli_opt("fidelity", argc, argv, i, singles[k].name, singles[k].dst)))
            return m == 2 ? 2 : 0;
    if ((m = fe_cli_opt("fidelity", argc, argv, i, "--device", &val))) {
        if (m == 2 || fe_cli_device("fidelity", val, &o->device))
            return 2;
        o->limits.bench_device = o->device;
        return 0;
    }
    if ((m = fe_cli_opt("fidelity", argc, argv, i, "--budget", &val)))
        return m == 2 || fe_cli_seconds("fidelity", "--budget", val, &o->budget) ? 2 : 0;
    if ((m = fe_cli_opt("fidelity", argc, argv, i, "--reps", &val)))
        return m == 2 || fe_cli_count("fidelity", "--reps", val, 1, 100000, &o->reps) ? 2 : 0;
    if (strcmp(argv[*i], "--json") == 0)
        return o->json = 1, 0;
    return fe_cli_usage("fidelity", "unknown option '%s'", argv[*i]);
}

static int parse(int argc, char **argv, fid_opts *o)
{
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_limit_opt("fidelity", argc, argv, &i, &o->limits);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            if (parse_opt(argc, argv, &i, o))
                return 2;
        } else if (add(o->models, &o->nmodels, argv[i], "models")) {
            return 2;
        }
    }
    if (o->nmodels == 0)
        return fe_cli_usage("fidelity", "missing MODEL");
    if (o->nonly && o->nskip)
        return fe_cli_usage("fidelity", "--policy and --skip do not go together");
    fe_cli_file in[MAXN + 4], outs[] = {{"--svg", o->svg}, {"--out", o->out}};
    int nin = 0;
    for (int i = 0; i < o->nmodels; i++)
        in[nin++] = (fe_cli_file){"a model", o->models[i]};
    in[nin++] = (fe_cli_file){"--profile", o->profile};
    in[nin++] = (fe_cli_file){"--weights", o->limits.weights};
    in[nin++] = (fe_cli_file){"--inputs", o->limits.inputs};
    return fe_cli_distinct("fidelity", in, nin, outs, 2);
}

static int is_baseline(const char *spec)
{
    return strcmp(spec, "no_fusion") == 0 || strcmp(spec, "no_fusion.lua") == 0;
}

/* The policy specs, no_fusion first: --policy's, or the shipped ones
 * less --skip's (an unknown --skip is an error, so a typo cannot widen the
 * run). Returns the count or -1 after printing why. */
static int policy_specs(fe_engine *e, const fid_opts *o, const char **specs, char (*names)[64])
{
    int n = 0;
    specs[n++] = "no_fusion";
    if (o->nonly) {
        for (int i = 0; i < o->nonly; i++)
            if (!is_baseline(o->only[i]))
                specs[n++] = o->only[i];
        return n;
    }
    int ns = fe_cli_shipped(e, names, MAXN);
    if (ns < 0)
        return -1;
    for (int s = 0; s < o->nskip; s++) {
        int found = 0;
        for (int i = 0; i < ns; i++)
            found |= strcmp(o->skip[s], names[i]) == 0;
        if (!found) {
            fe_cli_usage("fidelity", "--skip %s: no such shipped policy", o->skip[s]);
            return -1;
        }
    }
    for (int i = 0; i < ns && n < MAXN; i++) {
        int skip = is_baseline(names[i]);
        for (int s = 0; s < o->nskip; s++)
            skip |= strcmp(o->skip[s], names[i]) == 0;
        if (!skip)
            specs[n++] = names[i];
    }
    return n;
}

static int report(const fid_opts *o, const fe_fidelity *f, fe_error *err)
{
    if (o->svg && fe_cli_write(o->svg, "the scatter", fe_fidelity_format(f, FE_FORMAT_SVG, err), err))
        return -1;
    char *text = fe_fidelity_format(f, o->json ? FE_FORMAT_JSON : FE_FORMAT_TEXT, err);
    if (o->out)
        return fe_cli_write(o->out, "the results", text, err) ? -1 : 0;
    return fe_cli_put(text);
}

static int measure(fe_engine *e, const fid_opts *o)
{
    fe_error err = {0};
    const char *specs[MAXN + 1];
    char names[MAXN][64];
    int np = policy_specs(e, o, specs, names);
    if (np < 0)
        return 2;
    if (np < 2)
        return fe_cli_usage("fidelity", "give at least one policy besides no_fusion");
    const char *machine = o->machine ? o->machine : "gcu";
    fe_ab_suite_options so = {o->nmodels, o->models, np, specs, o->nparams, o->params, o->ndims,
                              o->dims, 1, &machine, NULL};
    fe_ab_suite *s = fe_ab_suite_new(e, &so, &err);
    if (!s)
        return fe_cli_fail(&err);
    fe_ab_run_options ro = {1, o->budget, o->reps, 0, 0, 0, o->limits.weights, o->limits.inputs,
                            o->device, NULL, 0, NULL};
    fe_progress_catch_ctrl_c();   /* Ctrl-C (or timeout -s INT): the models measured so far */
    fe_ab *ab = fe_engine_ab_suite(e, s, &ro, &err);
    fe_ab_set_command(ab, o->command);
    fe_fidelity *f = ab ? fe_ab_fidelity(ab, &err) : NULL;
    int rc = 0;
    for (int i = 0; ab && i < fe_ab_faults(ab); i++)
        fe_cli_warn_fallback(fe_ab_fault(ab, i));
    if (!f || report(o, f, &err))
        rc = fe_cli_fail(&err);
    int failed = rc ? 0 : fe_ab_failed(ab), wrong = rc ? 0 : fe_ab_wrong(ab);
    if (failed) {
        fprintf(stderr, "fuseeng: %d polic%s failed on a model ('fuseeng ab' with the same "
                "options shows why); the others are counted\n", failed, failed == 1 ? "y" : "ies");
        rc = 1;
    }
    if (wrong) {
        fprintf(stderr, "fuseeng: %d plan%s computed results that differ from the unfused "
                "reference; 'fuseeng ab --measure' marks them WRONG\n", wrong, wrong == 1 ? "" : "s");
        rc = 1;
    }
    if (rc != 2 && ab && fe_ab_interrupted(ab))   /* the models finished are reported */
        rc = fe_cli_interrupted();
    fe_fidelity_free(f);
    fe_ab_free(ab);
    fe_ab_suite_free(s);
    return rc;
}

static int run(int argc, char **argv)
{
    fid_opts o = {0};
    int rc = parse(argc, argv, &o);
    fe_cli_command_line(argc, argv, o.command, sizeof o.command);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_engine *e = fe_engine_new(&o.limits, &err);
    if (!e)
        return fe_cli_fail(&err);
    if (o.profile && fe_engine_set_profile(e, o.profile, &err) != FE_OK)
        rc = fe_cli_fail(&err);
    else
        rc = measure(e, &o);
    fe_engine_free(e);
    return rc;
}

const fe_cmd fe_cmd_fidelity = {"fidelity", "how well a simulated machine predicts measured plans",
                                usage, run};
