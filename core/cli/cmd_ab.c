/* cmd_ab.c: `fuseeng ab`: compare policies on models, from the command
 * line or a suite file, whole or in shards that `fuseeng ab merge` joins,
 * and `fuseeng ab --diff A B MODEL`: where two policies' plans differ. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng ab MODEL... --policy A --policy B [--policy C ...] [options]\n"
    "       fuseeng ab --suite SUITE.json|SUITE.lua [options]\n"
    "       fuseeng ab merge PART.json... [--json|--csv|--md] [--svg|--html FILE] [--out FILE]\n"
    "       fuseeng ab --diff A B MODEL [--machine M] [--dim NAME=V] [--json]\n"
    "\n"
    "Plan every model (at every dims setting, on every machine) with every policy,\n"
    "simulate the plans and compare them with the first policy, the baseline: kernels,\n"
    "simulated time, ratio (baseline time / policy time), L3 bytes, L2 peak,\n"
    "device-memory peak, spill bytes, planning time; the fastest plan of each row is\n"
    "starred, and the summary gives each policy's geometric mean ratio and its wins,\n"
    "ties and losses. A policy that fails on a model fails its cell only.\n"
    "docs/ab.md is the reference.\n"
    "\n"
    "  --policy SPEC     a policy: a name in policies/ or a file, NAME{K=V,...} with\n"
    "                    parameters, HOW(SPEC,SPEC,...) a combination (all, any, chain,\n"
    "                    vote); at least two, the first is the baseline\n"
    "  --suite FILE      models, dims, machines and policies from a file (docs/ab.md)\n"
    "  --param K=V       set a parameter in every policy that has it\n"
    "  --machine M       a simulated machine; repeat for several (default gcu)\n"
    "  --dim NAME=V      set a dim in every model that has it; NAME=V1,V2,... sweeps it\n"
    "  --profile FILE    measured times for profile-driven policies\n"
    "  --optimal         also plan every row with policies/optimal.lua: the optimum\n"
    "                    under the cost model, and each policy's gap to it (%)\n"
    "  --against TRUTH   also hold every plan against a real compiler's kernels on the\n"
    "                    same model (a truth file, docs/formats.md; repeat for several\n"
    "                    models): pairwise agreement (recall, precision) and the\n"
    "                    kernels that differ, in every output\n"
    "  --json, --csv, --md   the results as JSON, CSV or Markdown (default: a table)\n"
    "  --svg FILE        also write a bar chart of the speedups over unfused\n"
    "  --html FILE       also write one self-contained page: the tables, a chart per\n"
    "                    row with the intervals, the diffs against the baseline and\n"
    "                    each plan's Perfetto trace\n"
    "  --out FILE        write the results to FILE instead of the standard output\n"
    "  --shard I/N       run rows I, I+N, ... only and print a shard file for merge\n"
    "  --measure         also run the plans on this CPU's kernels, interleaved in\n"
    "                    shuffled rounds; medians, a 95% bootstrap interval of each\n"
    "                    ratio (\"same\" when it holds 1), and a check of the results\n"
    "  --device cpu|cuda where --measure runs the plans and policies' ctx:bench\n"
    "                    measures (default cpu; the reference that checks results\n"
    "                    always runs on the CPU)\n"
    "  --reps N          timed rounds per row with --measure (default: by --budget)\n"
    "  --budget S        seconds of timed runs per plan with --measure (default 0.5)\n"
    "  --weights FILE    the model's weights from a safetensors file for --measure and\n"
    "                    ctx:bench (docs/formats.md); every model must match it\n"
    "  --inputs FILE     the graph inputs from a safetensors file likewise\n"
    "  --diff A B MODEL  the groups where A's and B's plans differ, the decisions\n"
    "                    behind each, and each difference simulated\n"
    "  --max-instructions N, --max-memory MIB, --max-seconds S\n"
    "                    limits of each policy run and of a Lua suite (as for run)\n"
    "\n"
    "Exit status 1 when a policy failed on a model, or with --measure a plan or a\n"
    "model did not run (its cells say FAILED and why, in every format; the rest of\n"
    "the report is complete), or --measure finds a plan whose results differ from the reference\n"
    "(marked WRONG), 2 for bad input.\n";

#define MAXARGS 256

typedef struct ab_opts {
    char command[2048];               /* the command line, for the reports' provenance */
    const char *models[MAXARGS], *policies[64], *params[64], *dims[64], *machines[64];
    const char *truths[MAXARGS];
    int nmodels, npolicies, nparams, ndims, nmachines, ntruths;
    const char *suite, *svg, *html, *out, *profile, *shard_arg, *diff[3];
    int format, measure, reps, shard, nshards, merge, device, optimal;
    double budget;
    fe_engine_options limits;   /* the Lua limits */
} ab_opts;

static int add(const char **list, int *n, int cap, const char *val, const char *what)
{
    if (*n == cap)
        return fe_cli_usage("ab", "at most %d %s", cap, what);
    list[(*n)++] = val;
    return 0;
}

/* "I/N" with 1 <= I <= N. */
static int parse_shard(const char *s, ab_opts *o)
{
    char *end;
    long i = strtol(s, &end, 10), n = *end == '/' ? strtol(end + 1, &end, 10) : 0;
    if (*end || i < 1 || n < 1 || i > n || n > 100000)
        return fe_cli_usage("ab", "--shard %s: expected I/N with 1 <= I <= N (for example 2/3)", s);
    o->shard = (int)i;
    o->nshards = (int)n;
    return 0;
}

static int set_format(ab_opts *o, int format)
{
    if (o->format && o->format != format)
        return fe_cli_usage("ab", "--json, --csv and --md exclude each other");
    o->format = format;
    return 0;
}

static int parse_opt(int argc, char **argv, int *i, ab_opts *o)
{
    const char *val;
    int m;
    struct { const char *name; const char **list; int *n, cap; } lists[] = {
        {"--policy", o->policies, &o->npolicies, 64}, {"--param", o->params, &o->nparams, 64},
        {"--dim", o->dims, &o->ndims, 64}, {"--machine", o->machines, &o->nmachines, 64},
        {"--against", o->truths, &o->ntruths, MAXARGS}};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        if ((m = fe_cli_opt("ab", argc, argv, i, lists[k].name, &val)))
            return m == 2 ? 2 : add(lists[k].list, lists[k].n, lists[k].cap, val, lists[k].name);
    struct { const char *name; const char **dst; } singles[] = {
        {"--suite", &o->suite}, {"--svg", &o->svg}, {"--html", &o->html}, {"--out", &o->out},
        {"--profile", &o->profile}, {"--shard", &o->shard_arg},
        {"--weights", &o->limits.weights}, {"--inputs", &o->limits.inputs}};
    for (size_t k = 0; k < sizeof singles / sizeof singles[0]; k++)
        if ((m = fe_cli_opt("ab", argc, argv, i, singles[k].name, singles[k].dst)))
            return m == 2 ? 2 : 0;
    if ((m = fe_cli_opt("ab", argc, argv, i, "--device", &val))) {
        if (m == 2 || fe_cli_device("ab", val, &o->device))
            return 2;
        o->limits.bench_device = o->device;   /* a policy's ctx:bench too */
        return 0;
    }
    if ((m = fe_cli_opt("ab", argc, argv, i, "--budget", &val)))
        return m == 2 || fe_cli_seconds("ab", "--budget", val, &o->budget) ? 2 : 0;
    if ((m = fe_cli_opt("ab", argc, argv, i, "--reps", &val)))
        return m == 2 || fe_cli_count("ab", "--reps", val, 1, 100000, &o->reps) ? 2 : 0;
    if (strcmp(argv[*i], "--diff") == 0) {
        if (*i + 3 >= argc)
            return fe_cli_usage("ab", "--diff expects A B MODEL");
        for (int k = 0; k < 3; k++)
            o->diff[k] = argv[++*i];
        return 0;
    }
    if (strcmp(argv[*i], "--measure") == 0)
        return o->measure = 1, 0;
    if (strcmp(argv[*i], "--optimal") == 0)
        return o->optimal = 1, 0;
    if (strcmp(argv[*i], "--json") == 0)
        return set_format(o, FE_FORMAT_JSON);
    if (strcmp(argv[*i], "--csv") == 0)
        return set_format(o, FE_FORMAT_CSV);
    if (strcmp(argv[*i], "--md") == 0)
        return set_format(o, FE_FORMAT_MD);
    return fe_cli_usage("ab", "unknown option '%s'", argv[*i]);
}

static int parse(int argc, char **argv, ab_opts *o)
{
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "merge") == 0) {
        o->merge = 1;
        first = 2;
    }
    for (int i = first; i < argc; i++) {
        int m = fe_cli_limit_opt("ab", argc, argv, &i, &o->limits);
        if (m == 2)
            return 2;
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            if (parse_opt(argc, argv, &i, o))
                return 2;
        } else if (add(o->models, &o->nmodels, MAXARGS, argv[i], o->merge ? "shard files" : "models")) {
            return 2;
        }
    }
    if (o->shard_arg && parse_shard(o->shard_arg, o))
        return 2;
    if (o->merge) {
        if (o->nmodels == 0)
            return fe_cli_usage("ab", "merge: give the shard files (fuseeng ab ... --shard I/N)");
        if (o->npolicies || o->suite || o->shard_arg || o->measure || o->diff[0] || o->nmachines ||
            o->ndims || o->nparams || o->limits.weights || o->limits.inputs || o->optimal ||
            o->ntruths)
            return fe_cli_usage("ab", "merge takes shard files and output options only");
        return 0;
    }
    if (o->diff[0]) {
        if (o->nmodels || o->npolicies || o->suite || o->shard_arg || o->measure || o->nmachines > 1 ||
            o->format == FE_FORMAT_CSV || o->format == FE_FORMAT_MD || o->svg || o->html || o->optimal ||
            o->ntruths)
            return fe_cli_usage("ab", "--diff A B MODEL takes --machine, --dim, --param, --profile "
                                "and --json only");
        return 0;
    }
    if (o->suite && (o->nmodels || o->npolicies))
        return fe_cli_usage("ab", "give the models and policies in the suite or on the command "
                            "line, not both");
    if (!o->suite && o->nmodels == 0)
        return fe_cli_usage("ab", "missing MODEL (or --suite FILE)");
    if (!o->suite && o->npolicies < 2)
        return fe_cli_usage("ab", "give at least two --policy options to compare");
    if (o->shard_arg && o->ntruths)
        return fe_cli_usage("ab", "--against does not combine with --shard: a shard file does not "
                            "carry the agreement (run the rows with --against unsharded)");
    if (o->shard_arg && (o->format || o->svg || o->html))
        return fe_cli_usage("ab", "--shard prints a shard file; give the output options to "
                            "'fuseeng ab merge'");
    fe_cli_file in[2 * MAXARGS + 4], outs[] = {{"--svg", o->svg}, {"--html", o->html}, {"--out", o->out}};
    int nin = 0;
    for (int i = 0; i < o->nmodels; i++)
        in[nin++] = (fe_cli_file){"a model", o->models[i]};
    for (int i = 0; i < o->ntruths; i++)
        in[nin++] = (fe_cli_file){"--against", o->truths[i]};
    in[nin++] = (fe_cli_file){"--suite", o->suite};
    in[nin++] = (fe_cli_file){"--profile", o->profile};
    in[nin++] = (fe_cli_file){"--weights", o->limits.weights};
    in[nin++] = (fe_cli_file){"--inputs", o->limits.inputs};
    return fe_cli_distinct("ab", in, nin, outs, 3);
}

/* Print (or write with --out) text; the SVG chart first. */
static int emit(const ab_opts *o, fe_ab *ab, int format, fe_error *err)
{
    if (o->svg && fe_cli_write(o->svg, "the chart", fe_ab_format(ab, FE_FORMAT_SVG, err), err))
        return -1;
    if (o->html) {   /* traces go to PAGE.traces/ beside the page, which links them */
        char dir[1100], *slash;
        snprintf(dir, sizeof dir, "%s.traces", o->html);
        slash = strrchr(dir, '/');
        fe_ab_link_traces(ab, slash ? slash + 1 : dir);
        if (fe_cli_write(o->html, "the page", fe_ab_format(ab, FE_FORMAT_HTML, err), err) ||
            fe_ab_write_traces(ab, dir, err))
            return -1;
    }
    char *text = fe_ab_format(ab, format, err);
    if (o->out)
        return fe_cli_write(o->out, "the results", text, err) ? -1 : 0;
    return fe_cli_put(text);
}

static int merge(const ab_opts *o)
{
    fe_error err = {0};
    fe_ab *ab = fe_ab_merge(o->nmodels, o->models, &err);
    fe_ab_set_command(ab, o->command);
    int rc = !ab || emit(o, ab, o->format, &err) ? fe_cli_fail(&err) : 0;
    if (rc == 0 && fe_ab_failed(ab)) {
        fprintf(stderr, "fuseeng: %d cell%s failed (marked FAILED)\n", fe_ab_failed(ab),
                fe_ab_failed(ab) == 1 ? "" : "s");
        rc = 1;
    }
    fe_ab_free(ab);
    return rc;
}

static int diff(fe_engine *e, const ab_opts *o)
{
    fe_error err = {0};
    fe_policy *a = fe_engine_load_policy(e, o->diff[0], &err), *b = NULL;
    char dims[1024] = "";
    for (int i = 0; i < o->ndims; i++)
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%s", i ? "," : "", o->dims[i]);
    int rc = 0;
    if (!a || !(b = fe_engine_load_policy(e, o->diff[1], &err)))
        rc = fe_cli_fail(&err);
    for (int i = 0; rc == 0 && i < o->nparams; i++) {
        char key[256];
        const char *eq = strchr(o->params[i], '=');
        if (!eq || eq == o->params[i]) {
            rc = fe_cli_usage("ab", "--param %s: expected KEY=VALUE", o->params[i]);
            break;
        }
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->params[i]), o->params[i]);
        fe_error ea = {0}, eb = {0};
        int ra = fe_policy_set_param(a, key, eq + 1, &ea), rb = fe_policy_set_param(b, key, eq + 1, &eb);
        if (ra != FE_OK && rb != FE_OK)
            rc = fe_cli_fail(&ea);
    }
    if (rc == 0 &&
        fe_cli_put(fe_engine_ab_diff(e, o->diff[2], dims[0] ? dims : NULL, a, b,
                                     o->format == FE_FORMAT_JSON ? FE_FORMAT_JSON : FE_FORMAT_TEXT,
                                     &err)))
        rc = fe_cli_fail(&err);
    fe_policy_free(a);
    fe_policy_free(b);
    return rc;
}

static int compare(fe_engine *e, const ab_opts *o)
{
    fe_error err = {0};
    fe_policy *opt = NULL;   /* before the suite: it takes --param too */
    if (o->optimal && !(opt = fe_engine_load_policy(e, "optimal", &err)))
        return fe_cli_fail(&err);
    fe_ab_suite_options so = {o->nmodels, o->models, o->npolicies, o->policies, o->nparams,
                              o->params, o->ndims, o->dims, o->nmachines, o->machines, opt};
    fe_ab_suite *s = o->suite ? fe_ab_suite_read(e, o->suite, &so, &err) : fe_ab_suite_new(e, &so, &err);
    if (!s) {
        fe_policy_free(opt);
        return fe_cli_fail(&err);
    }
    fe_ab_run_options ro = {o->measure, o->budget, o->reps, o->shard, o->nshards, o->html != NULL,
                            o->limits.weights, o->limits.inputs, o->device, opt, o->ntruths,
                            o->truths};
    fe_progress_catch_ctrl_c();   /* Ctrl-C: the report of the rows done */
    fe_ab *ab = fe_engine_ab_suite(e, s, &ro, &err);
    fe_ab_set_command(ab, o->command);
    fe_policy_free(opt);
    int rc = 0;
    for (int i = 0; i < fe_ab_faults(ab); i++)
        fe_cli_warn_fallback(fe_ab_fault(ab, i));
    if (!ab || emit(o, ab, o->shard ? FE_FORMAT_PART : o->format, &err))
        rc = fe_cli_fail(&err);
    int failed = rc ? 0 : fe_ab_failed(ab), wrong = rc ? 0 : fe_ab_wrong(ab);
    if (failed) {
        fprintf(stderr, "fuseeng: %d cell%s failed (marked FAILED: the policy failed on that model, "
                "or with --measure the plan or the model did not run; the other cells are "
                "complete)\n", failed, failed == 1 ? "" : "s");
        rc = 1;
    }
    if (wrong) {
        fprintf(stderr, "fuseeng: %d plan%s computed results that differ from the unfused reference "
                "(marked WRONG); 'fuseeng run MODEL --policy P --execute' shows which output\n",
                wrong, wrong == 1 ? "" : "s");
        rc = 1;
    }
    if (rc != 2 && fe_ab_interrupted(ab))
        rc = fe_cli_interrupted();
    fe_ab_free(ab);
    fe_ab_suite_free(s);
    return rc;
}

static int run(int argc, char **argv)
{
    ab_opts o = {0};
    int rc = parse(argc, argv, &o);
    fe_cli_command_line(argc, argv, o.command, sizeof o.command);
    if (rc)
        return rc;
    if (o.merge)
        return merge(&o);
    fe_error err = {0};
    fe_engine_options eo = o.limits;
    eo.machine = o.diff[0] && o.nmachines ? o.machines[0] : NULL;
    fe_engine *e = fe_engine_new(&eo, &err);
    if (!e)
        return fe_cli_fail(&err);
    if (o.profile && fe_engine_set_profile(e, o.profile, &err) != FE_OK)
        rc = fe_cli_fail(&err);
    else
        rc = o.diff[0] ? diff(e, &o) : compare(e, &o);
    fe_engine_free(e);
    return rc;
}

const fe_cmd fe_cmd_ab = {"ab", "compare policies on models (simulated, measured, sharded)", usage,
                          run};
