/* cmd_policies.c: `fuseeng policies`: the shipped policies, one line each,
 * or with --results their simulated results on models as Markdown (the
 * table docs/policies.md is made of). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: fuseeng policies [--results MODEL... [options]]\n"
    "\n"
    "List the policies shipped in policies/ with their driver and one-line\n"
    "description. Give a name to --policy, or a path to your own file.\n"
    "\n"
    "  --results         plan every MODEL with every shipped policy on one simulated\n"
    "                    machine and print two Markdown tables: the policies (driver,\n"
    "                    source, what each decides) and, per policy and model, the\n"
    "                    generated kernels + extern calls and the speedup over the\n"
    "                    unfused plan\n"
    "  --policy P        only these policies (repeat; a name or a file)\n"
    "  --skip P          every shipped policy but these (repeat)\n"
    "  --machine M       simulated machine (default gcu)\n"
    "  --dim NAME=V      override a dim in every model that has it\n"
    "\n"
    "A policy that fails on a model is reported in its cell and in a note under\n"
    "the table; the other cells still complete (exit status 1).\n";

enum { MAX_MODELS = 64, MAX_POLICIES = 64 };

typedef struct opts {
    int results;
    const char *models[MAX_MODELS];
    int nmodels;
    const char *only[MAX_POLICIES], *skip[MAX_POLICIES];
    int nonly, nskip;
    const char *machine;
    fe_cli_dims dims;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    const char *val;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--results") == 0) {
            o->results = 1;
        } else if ((m = fe_cli_opt("policies", argc, argv, &i, "--policy", &val))) {
            if (m == 2)
                return 2;
            if (o->nonly == MAX_POLICIES)
                return fe_cli_usage("policies", "at most %d policies", MAX_POLICIES);
            o->only[o->nonly++] = val;
        } else if ((m = fe_cli_opt("policies", argc, argv, &i, "--skip", &val))) {
            if (m == 2)
                return 2;
            if (o->nskip == MAX_POLICIES)
                return fe_cli_usage("policies", "at most %d --skip", MAX_POLICIES);
            o->skip[o->nskip++] = val;
        } else if ((m = fe_cli_opt("policies", argc, argv, &i, "--machine", &val))) {
            if (m == 2)
                return 2;
            o->machine = val;
        } else if ((m = fe_cli_opt("policies", argc, argv, &i, "--dim", &val))) {
            if (m == 2 || fe_cli_add_dim("policies", &o->dims, val))
                return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("policies", "unknown option '%s'", argv[i]);
        } else {
            if (o->nmodels == MAX_MODELS)
                return fe_cli_usage("policies", "at most %d models", MAX_MODELS);
            o->models[o->nmodels++] = argv[i];
        }
    }
    if (!o->results && (o->nmodels || o->nonly || o->nskip || o->machine || o->dims.n))
        return fe_cli_usage("policies", "models and options need --results");
    if (o->results && o->nmodels == 0)
        return fe_cli_usage("policies", "--results needs at least one model");
    if (o->nonly && o->nskip)
        return fe_cli_usage("policies", "--policy and --skip do not go together");
    return 0;
}

static int list(void)
{
    fe_error err = {0};
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e)
        return fe_cli_fail(&err);
    char names[MAX_POLICIES][64];
    int n = fe_cli_shipped(e, names, MAX_POLICIES), status = n < 0;
    for (int i = 0; i < n; i++) {
        fe_policy *p = fe_engine_load_policy(e, names[i], &err);
        if (!p) {
            fe_cli_printf(stdout, "%-22s (does not load: %s)\n", names[i], err.message);
            status = 1;
            continue;
        }
        fe_cli_printf(stdout, "%-22s %-9s %s\n", fe_policy_name(p), fe_policy_driver(p),
                      fe_policy_description(p));
        fe_policy_free(p);
    }
    fe_engine_free(e);
    return status;
}

/* Does --skip NAME name the shipped policy name (NAME with or without .lua)? */
static int names_policy(const char *skip, const char *name)
{
    size_t k = strlen(skip);
    if (k > 4 && strcmp(skip + k - 4, ".lua") == 0)
        k -= 4;
    return k == strlen(name) && strncmp(skip, name, k) == 0;
}

static int skipped(const opts *o, const char *name)
{
    for (int i = 0; i < o->nskip; i++)
        if (names_policy(o->skip[i], name))
            return 1;
    return 0;
}

/* The policies to tabulate, loaded; returns the count or -1 after an error
 * (printed). An unknown --skip is an error, so a typo cannot widen the table. */
static int load_policies(fe_engine *e, const opts *o, fe_policy **pols)
{
    fe_error err = {0};
    int n = 0;
    if (o->nonly) {
        for (; n < o->nonly; n++)
            if (!(pols[n] = fe_engine_load_policy(e, o->only[n], &err)))
                goto fail;
        return n;
    }
    char names[MAX_POLICIES][64];
    int ns = fe_cli_shipped(e, names, MAX_POLICIES);
    if (ns < 0)
        return -1;
    for (int s = 0; s < o->nskip; s++) {
        int found = 0;
        for (int i = 0; i < ns; i++)
            found |= names_policy(o->skip[s], names[i]);
        if (!found) {
            fe_cli_usage("policies", "--skip %s: no such shipped policy", o->skip[s]);
            return -1;
        }
    }
    for (int i = 0; i < ns; i++) {
        if (skipped(o, names[i]))
            continue;
        if (!(pols[n] = fe_engine_load_policy(e, names[i], &err)))
            goto fail;
        n++;
    }
    return n;
fail:
    for (int i = 0; i < n; i++)
        fe_policy_free(pols[i]);
    fe_cli_fail(&err);
    return -1;
}

/* A cell of the results: the plan's figures, or the error it ended in. */
typedef struct cell {
    fe_figures f;
    int failed;        /* no plan: the note says why */
    int note;          /* 0, or the number of its note under the table */
} cell;

typedef struct notes {
    char text[MAX_POLICIES][1024];
    int n;
} notes;

static int add_note(notes *ns, const char *fmt, const char *a, const char *b, const char *c)
{
    if (ns->n == MAX_POLICIES)
        return ns->n;
    snprintf(ns->text[ns->n], sizeof ns->text[0], fmt, a, b, c);
    return ++ns->n;
}

/* One model under every policy: row[0] is the unfused plan. FE_OK, or the
 * model's own error (it does not load, or the machine cannot run it). */
static int one_model(fe_engine *e, const opts *o, const char *path, fe_policy **pols, int np,
                     cell *row, char *name, size_t size, notes *ns, fe_error *err)
{
    fe_model *m = fe_model_load_dims(path, o->dims.n, o->dims.names, o->dims.values, err);
    if (!m)
        return err->code;
    snprintf(name, size, "%s", fe_model_name(m));
    fe_plan *u = fe_model_unfused(m, err);
    fe_report *r = u ? fe_engine_simulate(e, u, err) : NULL;
    if (!r) {
        fe_plan_free(u);
        fe_model_free(m);
        fe_cli_prefix(err, "%s: ", path);
        return err->code;
    }
    fe_report_figures(r, 1, &row[0].f);
    fe_report_free(r);
    fe_plan_free(u);
    for (int i = 0; i < np; i++) {
        fe_plan_stats st;
        fe_error perr = {0};
        fe_plan *p = fe_policy_plan(pols[i], m, &st, &perr);
        fe_report *pr = p ? fe_engine_simulate(e, p, &perr) : NULL;
        if (pr) {
            fe_report_figures(pr, 0, &row[i + 1].f);
            if (st.fault[0])
                row[i + 1].note = add_note(ns, "%s on %s fell back to unfused: %.600s",
                                           fe_policy_name(pols[i]), fe_model_name(m), st.fault);
        } else {
            row[i + 1].failed = 1;
            row[i + 1].note = add_note(ns, "%s on %s: %.600s", fe_policy_name(pols[i]),
                                       fe_model_name(m), perr.message);
        }
        fe_report_free(pr);
        fe_plan_free(p);
    }
    fe_model_free(m);
    return FE_OK;
}

/* A Markdown cell: '|' and newlines would break the table. */
static void md(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else if (*s == '\n')
            fputc(' ', stdout);
        else
            fputc(*s, stdout);
    }
}

static void print_policies(fe_policy **pols, int np)
{
    printf("| policy | driver | source | what it decides |\n|---|---|---|---|\n");
    for (int i = 0; i < np; i++) {
        printf("| `");
        md(fe_policy_name(pols[i]));
        printf("` | %s | ", fe_policy_driver(pols[i]));
        md(fe_policy_source(pols[i])[0] ? fe_policy_source(pols[i]) : "-");
        printf(" | ");
        md(fe_policy_description(pols[i]));
        printf(" |\n");
    }
}

static void print_results(const opts *o, fe_policy **pols, int np, cell *cells,
                          char (*names)[128], const notes *ns)
{
    printf("\n| policy |");
    for (int j = 0; j < o->nmodels; j++) {
        printf(" ");
        md(names[j]);
        printf(" |");
    }
    printf("\n|---|");
    for (int j = 0; j < o->nmodels; j++)
        printf("---:|");
    printf("\n| unfused |");
    for (int j = 0; j < o->nmodels; j++) {
        const fe_figures *f = &cells[j * (np + 1)].f;
        printf(" %d+%d, %.3f ms |", f->kernels, f->extern_calls, f->time_s * 1e3);
    }
    printf("\n");
    for (int i = 0; i < np; i++) {
        printf("| `");
        md(fe_policy_name(pols[i]));
        printf("` |");
        for (int j = 0; j < o->nmodels; j++) {
            const cell *c = &cells[j * (np + 1) + i + 1];
            const fe_figures *u = &cells[j * (np + 1)].f;
            if (c->failed)
                printf(" error [%d] |", c->note);
            else {
                printf(" %d+%d, %.2fx", c->f.kernels, c->f.extern_calls,
                       c->f.time_s > 0 ? u->time_s / c->f.time_s : 0);
                if (c->note)
                    printf(" [%d]", c->note);
                printf(" |");
            }
        }
        printf("\n");
    }
    if (ns->n)
        printf("\n");
    for (int k = 0; k < ns->n; k++) {
        printf("%d. ", k + 1);
        md(ns->text[k]);
        printf("\n");
    }
}

static int results(const opts *o)
{
    fe_error err = {0};
    fe_engine *e = fe_engine_new(NULL, &err);
    if (!e)
        return fe_cli_fail(&err);
    if (o->machine && fe_engine_set_machine(e, o->machine, &err) != FE_OK) {
        fe_engine_free(e);
        return fe_cli_fail(&err);
    }
    fe_policy *pols[MAX_POLICIES];
    int np = load_policies(e, o, pols);
    if (np < 0) {
        fe_engine_free(e);
        return 2;
    }
    cell *cells = calloc((size_t)o->nmodels * (size_t)(np + 1), sizeof *cells);
    char(*names)[128] = calloc((size_t)o->nmodels, sizeof *names);
    notes *ns = calloc(1, sizeof *ns);
    int status = cells && names && ns ? 0 : 1;
    if (status)
        fprintf(stderr, "fuseeng: out of memory\n");
    /* Every model loads before any table is printed: no partial output. */
    for (int j = 0; status == 0 && j < o->nmodels; j++) {
        if (one_model(e, o, o->models[j], pols, np, &cells[j * (np + 1)], names[j],
                      sizeof names[j], ns, &err) != FE_OK) {
            status = fe_cli_fail(&err);
            break;
        }
    }
    if (status == 0) {
        printf("Simulated on %s (%s). A cell is the generated kernels + extern calls\n"
               "(views launch nothing) and the speedup over the unfused plan, whose\n"
               "counts and time head each column.\n\n",
               fe_engine_machine(e), fe_engine_machine_description(e));
        print_policies(pols, np);
        print_results(o, pols, np, cells, names, ns);
        status = ns->n ? 1 : 0;
    }
    free(cells);
    free(names);
    free(ns);
    for (int i = 0; i < np; i++)
        fe_policy_free(pols[i]);
    fe_engine_free(e);
    return status;
}

static int run(int argc, char **argv)
{
    opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    return o.results ? results(&o) : list();
}

const fe_cmd fe_cmd_policies = {"policies", "list the shipped policies", usage, run};
