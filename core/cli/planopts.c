/* planopts.c: the options that say how to plan a model (policies, params,
 * dims, machine, profile, Lua limits, a saved plan) and making that plan;
 * shared by run, bench and profile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A positive number option value, or -1 after a usage error. */
static double positive(const char *cmd, const char *name, const char *val, const char *what)
{
    char *end;
    double v = strtod(val, &end);
    if (end == val || *end || !(v > 0) || v > 1e15) {
        fe_cli_usage(cmd, "%s needs %s, got '%s'", name, what, val);
        return -1;
    }
    return v;
}

int fe_cli_limit_opt(const char *cmd, int argc, char **argv, int *i, fe_engine_options *eng)
{
    const char *val;
    int m;
    double v;
#define OPT(name) ((m = fe_cli_opt(cmd, argc, argv, i, name, &val)) != 0)
    if (OPT("--max-instructions")) {
        if ((v = m == 2 ? -1 : positive(cmd, "--max-instructions", val, "a positive count")) < 0)
            return 2;
        eng->max_instructions = (int64_t)v;
    } else if (OPT("--max-memory")) {
        if ((v = m == 2 ? -1 : positive(cmd, "--max-memory", val, "a positive number of MiB")) < 0)
            return 2;
        eng->max_memory = (int64_t)(v * 1048576.0);
    } else if (OPT("--max-seconds")) {
        if ((v = m == 2 ? -1 : positive(cmd, "--max-seconds", val, "a positive number of seconds")) < 0)
            return 2;
        eng->max_seconds = v;
    } else {
        return 0;
    }
#undef OPT
    return 1;
}

/* --dim NAME=v1,v2,...: the buckets of a dispatch table, positive and
 * increasing (bucket v serves the values above the one before it, up to
 * v, so their order is their meaning). 0 or 2 after a usage error. */
static int add_buckets(const char *cmd, fe_cli_plan_opts *o, const char *arg)
{
    fe_dimarg d;
    if (fe_cli_parse_dim(cmd, arg, &d))
        return 2;
    if (o->nbuckets)
        return fe_cli_usage(cmd, "--dim %s: only one dim may take several values (%s already does)",
                            arg, o->bucket_dim);
    snprintf(o->bucket_dim, sizeof o->bucket_dim, "%s", d.name);
    for (int k = 0; k < d.n; k++) {
        long long v = d.values[k];
        for (int j = 0; j < o->nbuckets; j++)
            if (o->buckets[j] == v)
                return fe_cli_usage(cmd, "--dim %s: %lld is given twice", arg, v);
        if (o->nbuckets && v < o->buckets[o->nbuckets - 1])
            return fe_cli_usage(cmd, "--dim %s: list the buckets in increasing order (%lld after "
                                "%lld): bucket v serves the values above the bucket before it, "
                                "up to v", arg, v, (long long)o->buckets[o->nbuckets - 1]);
        o->buckets[o->nbuckets++] = v;
    }
    return 0;
}

int fe_cli_plan_opt(const char *cmd, int argc, char **argv, int *i, fe_cli_plan_opts *o)
{
    const char *val;
    int m = fe_cli_limit_opt(cmd, argc, argv, i, &o->eng);
    if (m)
        return m;
#define OPT(name) ((m = fe_cli_opt(cmd, argc, argv, i, name, &val)) != 0)
    if (OPT("--policy")) {
        if (m == 2)
            return 2;
        if (o->npolicies == 16)
            return fe_cli_usage(cmd, "at most 16 --policy options");
        o->policies[o->npolicies++] = val;
    } else if (OPT("--combine")) {
        if (m == 2)
            return 2;
        if (strcmp(val, "all") && strcmp(val, "any") && strcmp(val, "chain") && strcmp(val, "vote"))
            return fe_cli_usage(cmd, "--combine %s: expected all, any, chain or vote", val);
        o->combine = val;
    } else if (OPT("--param")) {
        if (m == 2)
            return 2;
        if (!strchr(val, '=') || val[0] == '=')
            return fe_cli_usage(cmd, "--param expects KEY=VALUE, e.g. --param margin=0.2");
        if (o->nparams == 64)
            return fe_cli_usage(cmd, "at most 64 --param options");
        o->params[o->nparams++] = val;
    } else if (OPT("--dim")) {
        if (m == 2 || (strchr(val, ',') ? add_buckets(cmd, o, val) : fe_cli_add_dim(cmd, &o->dims, val)))
            return 2;
    } else if (strcmp(argv[*i], "--ignore-model-name") == 0) {
        o->ignore_model = 1;
    } else if (OPT("--plan")) {
        if (m == 2)
            return 2;
        o->plan_in = val;
    } else if (OPT("--machine")) {
        if (m == 2)
            return 2;
        o->eng.machine = val;
    } else if (OPT("--profile")) {
        if (m == 2)
            return 2;
        o->profile = val;
    } else if (OPT("--weights")) {
        if (m == 2)
            return 2;
        o->eng.weights = val;
    } else if (OPT("--inputs")) {
        if (m == 2)
            return 2;
        o->eng.inputs = val;
    } else if (OPT("--bench-budget")) {
        double v = m == 2 ? -1 : positive(cmd, "--bench-budget", val, "a positive number of seconds");
        if (v < 0)
            return 2;
        o->eng.bench_budget = v;
    } else {
        return 0;
    }
#undef OPT
    return 1;
}

int fe_cli_plan_check(const char *cmd, const fe_cli_plan_opts *o, int need_policy)
{
    if (o->plan_in && o->npolicies)
        return fe_cli_usage(cmd, "give either --plan or --policy, not both");
    if (o->ignore_model && !o->plan_in)
        return fe_cli_usage(cmd, "--ignore-model-name goes with --plan");
    if (need_policy && !o->plan_in && o->npolicies == 0)
        return fe_cli_usage(cmd, "missing --policy (try 'fuseeng policies' for the shipped ones)");
    if (o->nbuckets && strcmp(cmd, "run") != 0)
        return fe_cli_usage(cmd, "--dim %s=V1,V2,...: several values of a dim go with 'fuseeng "
                            "run' only", o->bucket_dim);
    if (o->nbuckets && o->plan_in)
        return fe_cli_usage(cmd, "--dim %s with several values plans buckets, --plan reads a "
                            "plan: give one or the other (the model's %s picks the bucket of a "
                            "dispatch table)", o->bucket_dim, o->bucket_dim);
    for (int i = 0; o->nbuckets && i < o->dims.n; i++)
        if (strcmp(o->dims.names[i], o->bucket_dim) == 0)
            return fe_cli_usage(cmd, "--dim %s is given twice", o->bucket_dim);
    if (o->npolicies > 1 && !o->combine)
        return fe_cli_usage(cmd, "%d policies given: say how to combine them with --combine "
                            "all|any|chain|vote", o->npolicies);
    return 0;
}

fe_policy *fe_cli_load_policies(fe_engine *e, const char *const *names, int n, const char *combine,
                                const char *const *params, int nparams, fe_error *err)
{
    fe_policy *list[16] = {0}, *p = NULL;
    for (int i = 0; i < n; i++) {
        if (!(list[i] = fe_engine_load_policy(e, names[i], err))) {
            while (i-- > 0)
                fe_policy_free(list[i]);
            return NULL;
        }
    }
    if (n == 1) {
        p = list[0];
    } else {
        p = fe_engine_combine(e, combine, list, n, err);
        for (int i = 0; i < n; i++)
            fe_policy_free(list[i]);
        if (!p)
            return NULL;
    }
    for (int i = 0; i < nparams; i++) {
        char key[256];
        const char *eq = strchr(params[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - params[i]), params[i]);
        if (fe_policy_set_param(p, key, eq + 1, err) != FE_OK) {
            fe_cli_prefix(err, "--param %s: ", params[i]);
            fe_policy_free(p);
            return NULL;
        }
    }
    return p;
}

/* A saved plan, at its dims and on its machine (fe_saved_plan_read). The
 * engine starts on the default machine: the plan's replaces it unless
 * --machine is given, which the read loads after the model, so that a bad
 * plan or model is reported before a bad machine. */
static int plan_from_file(const char *model, const fe_cli_plan_opts *o, fe_cli_planned *out,
                          fe_error *err)
{
    fe_engine_options eng = o->eng;
    eng.machine = NULL;
    fe_read_options ro = {o->dims.n, o->dims.names, o->dims.values, o->eng.machine,
                          o->ignore_model};
    if (!(out->e = fe_engine_new(&eng, err)) ||
        !(out->saved = fe_saved_plan_read(out->e, o->plan_in, model, &ro, err)) ||
        (o->profile && fe_engine_set_profile(out->e, o->profile, err) != FE_OK)) {
        fe_cli_planned_free(out);
        return err->code ? err->code : FE_ERUNTIME;
    }
    out->model = fe_saved_plan_model(out->saved);
    out->plan = fe_saved_plan_plan(out->saved);
    if (fe_model_check_data(out->model, o->eng.weights, o->eng.inputs, NULL, err) != FE_OK) {
        fe_cli_planned_free(out);
        return err->code;
    }
    const char *dim = NULL;
    int64_t bucket = fe_saved_plan_bucket(out->saved, &dim);
    if (bucket)
        fe_cli_printf(stderr, "fuseeng: note: %s is a dispatch table: %s=%lld runs the plan of "
                      "bucket %s=%lld\n", o->plan_in, dim,
                      (long long)fe_model_dim(out->model, dim), dim, (long long)bucket);
    if (fe_saved_plan_made_for(out->saved))
        fe_cli_printf(stderr, "fuseeng: note: %s was made for model '%s' (--ignore-model-name)\n",
                      o->plan_in, fe_saved_plan_made_for(out->saved));
    return FE_OK;
}

int fe_cli_plan_make(const char *model, const fe_cli_plan_opts *o, fe_cli_planned *out,
                     fe_error *err)
{
    memset(out, 0, sizeof *out);
    if (o->plan_in)
        return plan_from_file(model, o, out, err);
    /* The data files are checked before planning: a long run must not end
     * in a file that never fitted the model. */
    if (!(out->model = fe_model_load_dims(model, o->dims.n, o->dims.names, o->dims.values, err)) ||
        fe_model_check_data(out->model, o->eng.weights, o->eng.inputs, NULL, err) != FE_OK ||
        !(out->e = fe_engine_new(&o->eng, err)) ||
        (o->profile && fe_engine_set_profile(out->e, o->profile, err) != FE_OK))
        goto fail;
    if (o->npolicies) {
        out->policy = fe_cli_load_policies(out->e, o->policies, o->npolicies, o->combine, o->params,
                                           o->nparams, err);
        if (out->policy)
            out->plan = fe_policy_plan(out->policy, out->model, &out->stats, err);
        if (out->plan)
            fe_cli_warn_fallback(out->stats.fault);
    } else {
        out->plan = fe_model_unfused(out->model, err);
    }
    if (out->plan)
        return FE_OK;
fail:
    fe_cli_planned_free(out);
    return err->code ? err->code : FE_ERUNTIME;
}

void fe_cli_planned_free(fe_cli_planned *p)
{
    if (p->saved) {
        fe_saved_plan_free(p->saved);
    } else {
        fe_plan_free(p->plan);
        fe_model_free(p->model);
    }
    fe_policy_free(p->policy);
    fe_engine_free(p->e);
    memset(p, 0, sizeof *p);
}

const char *fe_cli_plan_label(const fe_cli_plan_opts *o, const fe_plan *p)
{
    if (o->plan_in)
        return o->plan_in;
    return fe_plan_policy(p) ? fe_plan_policy(p) : "unfused";
}

int fe_cli_plan_inputs(const char *model, const fe_cli_plan_opts *o, fe_cli_file *in, int cap)
{
    const fe_cli_file fixed[] = {{"the model", model}, {"--plan", o->plan_in},
                                 {"--profile", o->profile}, {"--machine", o->eng.machine},
                                 {"--weights", o->eng.weights}, {"--inputs", o->eng.inputs}};
    int n = 0;
    for (int i = 0; i < 6 && n < cap; i++)
        in[n++] = fixed[i];
    for (int i = 0; i < o->npolicies && n < cap; i++)
        in[n++] = (fe_cli_file){"--policy", o->policies[i]};
    return n;
}
