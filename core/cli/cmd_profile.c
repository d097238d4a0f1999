/* cmd_profile.c: `fuseeng profile MODEL [--policy P] -o profile.json`:
 * measure single ops and a plan's groups on this CPU and write the profile
 * file (InfiniCore's {single, fused} form, plus exact keys and meta). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "groupkey.h"
#include "measure.h"
#include "profile.h"

static const char usage[] =
    "usage: fuseeng profile MODEL [--policy P | --plan FILE] -o PROFILE [options]\n"
    "\n"
    "Measure every op of MODEL alone and every fused group of the plan on this CPU's\n"
    "kernels, and write a profile file for --profile and ctx.profile (the\n"
    "profile_lookup policy): \"single\" by op name and by exact key (op, dtypes,\n"
    "shapes), \"fused\" by compat key (\"silu+mul\") and by exact key (16 hex digits of\n"
    "SHA-256 over the group's canonical text), times in ms (medians). Several items\n"
    "with the same key (an op on different shapes, layers repeating) get the median\n"
    "of their medians. Without --policy or --plan only single ops are measured.\n"
    "\n"
    "  -o, --output FILE  the profile file to write (required)\n"
    "  --policy P         plan with P; its groups of two or more nodes are measured\n"
    "  --plan FILE        measure the groups of a saved plan instead (at its dims and\n"
    "                     machine, as for bench; --ignore-model-name as well)\n"
    "  --dim NAME=V       override a model dim\n"
    "  --budget S         seconds of repetitions per item (default 0.2)\n"
    "  --seed N           random inputs and weights (default 1)\n"
    "  --param, --combine, --machine, --profile, --max-instructions, --max-memory,\n"
    "  --max-seconds      as for fuseeng run\n";

typedef struct prof_opts {
    const char *model, *out;
    fe_cli_plan_opts plan;
    fe_cli_measure_opts m;
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
    return fe_cli_plan_check("profile", &o->plan, 0);
}

/* One measurement under one key; entries with equal keys are merged. */
typedef struct entry {
    int fused;
    char *key, *text;
    double ms;
} entry;

typedef struct entries {
    entry *v;
    int n, cap;
} entries;

static int add(entries *es, int fused, const char *key, const char *text, double ms)
{
    if (es->n == es->cap) {
        int nc = es->cap ? 2 * es->cap : 64;
        entry *nv = realloc(es->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        es->v = nv;
        es->cap = nc;
    }
    entry *e = &es->v[es->n];
    e->fused = fused;
    e->ms = ms;
    e->key = strdup(key);
    e->text = text ? strdup(text) : NULL;
    if (!e->key || (text && !e->text)) {
        free(e->key);
        free(e->text);
        return -1;
    }
    es->n++;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->fused != y->fused)
        return x->fused - y->fused;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->ms > y->ms) - (x->ms < y->ms);
}

/* Both keys of the group nodes[0..n) with time ms. */
static int add_group(entries *es, const fe_graph *g, const int32_t *nodes, int n, double ms)
{
    char exact[17], compat[4096], text[4096];
    if (fe_group_exact_key(g, nodes, n, exact) != FE_OK)
        return -1;
    if (fe_group_compat_key(g, nodes, n, compat, sizeof compat) >= sizeof compat)
        return 0;   /* a compat key this long names nothing a lookup would ask for */
    fe_group_shape_text(g, nodes, n, text, sizeof text);
    int fused = n > 1;
    return add(es, fused, exact, text, ms) || add(es, fused, compat, NULL, ms) ? -1 : 0;
}

/* Merge equal keys (median of their times) into a profile. */
static fe_profile *collect(entries *es, fe_error *err)
{
    fe_profile *p = fe_profile_new(err);
    if (!p)
        return NULL;
    qsort(es->v, (size_t)es->n, sizeof *es->v, by_key);
    for (int i = 0; i < es->n;) {
        int j = i;
        while (j < es->n && es->v[j].fused == es->v[i].fused && !strcmp(es->v[j].key, es->v[i].key))
            j++;
        int k = i + (j - i) / 2;
        double med = (j - i) % 2 ? es->v[k].ms : 0.5 * (es->v[k - 1].ms + es->v[k].ms);
        if (fe_profile_add(p, es->v[i].fused, es->v[i].key, med, es->v[i].text) != FE_OK) {
            fe_profile_free(p);
            fe_error_set(err, FE_ENOMEM, "out of memory");
            return NULL;
        }
        i = j;
    }
    return p;
}

static void entries_free(entries *es)
{
    for (int i = 0; i < es->n; i++) {
        free(es->v[i].key);
        free(es->v[i].text);
    }
    free(es->v);
}

static int run(int argc, char **argv)
{
    prof_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_cli_planned pl;
    fe_cli_measured m;
    entries es = {0};
    fe_profile *prof = NULL;
    int nfused = 0;
    if (fe_cli_plan_make(o.model, &o.plan, &pl, &err) != FE_OK)
        return fe_cli_fail(&err);
    if (fe_cli_measure(pl.plan, &o.m, &m, &err) != FE_OK) {
        fe_cli_planned_free(&pl);
        return fe_cli_fail(&err);
    }
    const fe_graph *g = pl.g;
    int oom = 0;
    for (int32_t v = 0; v < g->nnodes && !oom; v++)
        oom = add_group(&es, g, &v, 1, m.node_ms[v].median_ms);
    for (int gi = 0; gi < m.ngroups && !oom; gi++) {
        const fe_bench_group *bg = &m.groups[gi];
        if (bg->n > 1) {
            oom = add_group(&es, g, bg->nodes, bg->n, bg->fused.median_ms);
            nfused++;
        }
    }
    if (oom) {
        fe_error_set(&err, FE_ENOMEM, "out of memory");
        rc = fe_cli_fail(&err);
    }
    else if (!(prof = collect(&es, &err)))
        rc = fe_cli_fail(&err);
    else if (fe_profile_write(prof, o.out, "host", &err) != FE_OK)
        rc = fe_cli_fail(&err);
    else
        printf("wrote %s: %d single and %d fused entries from %d ops and %d groups of %s "
               "(%s)\n", o.out, fe_profile_count(prof, 0), fe_profile_count(prof, 1),
               g->nnodes, nfused, g->name[0] ? g->name : o.model, fe_cli_threads());
    fe_profile_free(prof);
    entries_free(&es);
    fe_cli_measured_free(&m);
    fe_cli_planned_free(&pl);
    return rc;
}

const fe_cmd fe_cmd_profile = {"profile", "measure ops and groups into a profile file", usage, run};
