/* cmd_sim.c: `fuseeng sim MODEL --plan plan.json`: simulate a saved plan
 * the way it was made.
 *
 * A plan file records the model it was made for, the dims the model was
 * loaded with and the machine the policy planned for. A plan made at
 * S=8192 on gcu_big describes a different program than the same node
 * grouping at S=2048 on gcu (other splits, other times), so by default the
 * plan is simulated at its dims on its machine; --dim and --machine
 * override them, and the report says which values came from where. A plan
 * for another model is refused unless --ignore-model-name is given: node
 * names alone could match by accident (two LLaMA variants), and then every
 * figure would be about the wrong model. */
#include <string.h>

#include "cli.h"
#include "machine.h"
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

/* Where the model's dims and the machine came from, for the report. */
enum { FROM_MODEL, FROM_PLAN, FROM_OPTION };

typedef struct setup {
    fe_plan_file pf;
    const char *planfile;
    const fe_cli_dims *opts;    /* --dim */
    const char *machine_opt;    /* --machine, or NULL */
    int forced;                 /* --ignore-model-name was needed */
    const fe_engine_options *limits;   /* the Lua limits for the machine file */
} setup;

/* The plan's value for dim name, or 0 if it records none. */
static int64_t plan_dim(const fe_plan_file *pf, const char *name)
{
    for (int i = 0; i < pf->ndims; i++)
        if (strcmp(pf->dim_names[i], name) == 0)
            return pf->dim_values[i];
    return 0;
}

static int option_dim(const fe_cli_dims *d, const char *name)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->names[i], name) == 0)
            return 1;
    return 0;
}

static int dim_source(const setup *s, const char *name)
{
    if (option_dim(s->opts, name))
        return FROM_OPTION;
    return plan_dim(&s->pf, name) ? FROM_PLAN : FROM_MODEL;
}

/* The model's value of dim name, or 0 if it has no such dim; list gets
 * the names it has. */
static int64_t model_dim(const fe_graph *g, const char *name, char *list, size_t size)
{
    size_t at = 0;
    int64_t value = 0;
    list[0] = '\0';
    for (int32_t d = 0; d < g->ndims; d++) {
        const char *n = fe_graph_str(g, g->dims[d].name);
        if (strcmp(n, name) == 0)
            value = g->dims[d].value;
        if (at < size)
            at += (size_t)snprintf(list + at, size - at, "%s%s", d ? ", " : "", n);
    }
    return value;
}

/* Load the model at the plan's dims, --dim overriding them. The model is
 * loaded once with --dim alone (its name and dims are needed to check the
 * plan against it) and again only if the plan's dims differ from those. */
static fe_graph *load_model(const char *model, setup *s, fe_error *err)
{
    fe_graph *g = fe_load_model_file(model, &s->opts->set, err);
    if (!g)
        return NULL;
    if (s->pf.model && strcmp(s->pf.model, g->name) != 0) {
        if (!s->forced) {
            fe_error_set(err, FE_EINPUT, "%s: the plan is for model '%s', not '%s' (%s); give "
                         "--ignore-model-name to simulate it anyway", s->planfile, s->pf.model,
                         g->name, model);
            fe_graph_free(g);
            return NULL;
        }
    } else {
        s->forced = 0;   /* the option was not needed: nothing to report */
    }
    fe_cli_dims merged = *s->opts;
    int reload = 0;
    for (int i = 0; i < s->pf.ndims; i++) {
        const char *name = s->pf.dim_names[i];
        char list[512];
        if (option_dim(s->opts, name))
            continue;
        int64_t now = model_dim(g, name, list, sizeof list);
        if (!now) {
            fe_error_set(err, FE_EINPUT, "%s: \"dims\": the plan sets %s=%lld but model '%s' has "
                         "no dim '%s' (its dims: %s)", s->planfile, name,
                         (long long)s->pf.dim_values[i], g->name, name, list[0] ? list : "none");
            fe_graph_free(g);
            return NULL;
        }
        if (now == s->pf.dim_values[i])
            continue;
        if (merged.n == 64) {
            fe_error_set(err, FE_EINPUT, "%s: \"dims\": more than 64 dims", s->planfile);
            fe_graph_free(g);
            return NULL;
        }
        merged.names[merged.n] = name;
        merged.values[merged.n] = s->pf.dim_values[i];
        merged.n++;
        reload = 1;
    }
    if (!reload)
        return g;
    fe_graph_free(g);
    merged.set = (fe_dimset){merged.n, merged.names, merged.values};
    return fe_load_model_file(model, &merged.set, err);
}

/* The machine: --machine, else the plan's (a shipped machine by name,
 * never a path read from the file), else gcu. */
static int load_machine(setup *s, fe_machine *m, fe_error *err)
{
    fe_sandbox_opts so = {s->limits->max_instructions, s->limits->max_memory,
                          s->limits->max_seconds, s->limits->home};
    fe_sandbox *sb = fe_sandbox_new(&so, err);
    if (!sb)
        return err->code;
    int rc;
    if (s->machine_opt) {
        rc = fe_machine_load(sb, s->machine_opt, m, err);
    } else if (s->pf.machine) {
        rc = fe_machine_load_shipped(sb, s->pf.machine, m, err);
        if (rc == FE_EINPUT) {
            char why[sizeof err->message];
            snprintf(why, sizeof why, "%s", err->message);
            fe_error_set(err, FE_EINPUT, "%s: \"machine\": %s; if the plan was made on a "
                         "machine file, give it with --machine FILE", s->planfile, why);
        }
    } else {
        rc = fe_machine_load(sb, "gcu", m, err);
    }
    fe_sandbox_free(sb);
    return rc;
}

static int machine_source(const setup *s)
{
    return s->machine_opt ? FROM_OPTION : s->pf.machine ? FROM_PLAN : FROM_MODEL;
}

static void setup_text(const setup *s, const fe_graph *g, const fe_machine *m)
{
    int all_plan = g->ndims > 0;
    for (int32_t d = 0; d < g->ndims; d++)
        all_plan &= dim_source(s, fe_graph_str(g, g->dims[d].name)) == FROM_PLAN;
    if (s->forced)
        printf("note: the plan was made for model '%s' (--ignore-model-name)\n", s->pf.model);
    if (g->ndims > 0) {
        printf("dims       ");
        for (int32_t d = 0; d < g->ndims; d++) {
            const char *name = fe_graph_str(g, g->dims[d].name);
            int64_t pv = plan_dim(&s->pf, name);
            printf("%s%s=%lld", d ? ", " : "", name, (long long)g->dims[d].value);
            if (all_plan)
                continue;
            switch (dim_source(s, name)) {
            case FROM_PLAN: printf(" (plan)"); break;
            case FROM_MODEL: printf(" (the model's; the plan records none)"); break;
            default:
                if (pv && pv != g->dims[d].value)
                    printf(" (--dim overrides the plan's %lld)", (long long)pv);
                else
                    printf(" (--dim%s)", pv ? ", as the plan records" : "");
            }
        }
        printf("%s\n", all_plan ? ", as the plan records" : "");
    }
    printf("machine    %s", m->name);
    switch (machine_source(s)) {
    case FROM_PLAN: printf(", as the plan records\n"); break;
    case FROM_MODEL: printf(" (the default; the plan names none)\n"); break;
    default:
        if (s->pf.machine && strcmp(s->pf.machine, m->name) != 0)
            printf(" (--machine overrides the plan's %s)\n", s->pf.machine);
        else
            printf(" (--machine%s)\n", s->pf.machine ? ", as the plan records" : "");
    }
}

static const char *source_word(int from)
{
    return from == FROM_OPTION ? "option" : from == FROM_PLAN ? "plan" : "default";
}

static void setup_json(const setup *s, const fe_graph *g, const fe_machine *m, fe_jw *w)
{
    fe_jw_obj(w);
    fe_jw_key(w, "plan_file");
    fe_jw_str(w, s->planfile);
    fe_jw_key(w, "model");
    fe_jw_str(w, g->name);
    fe_jw_key(w, "plan_model");
    fe_jw_str(w, s->pf.model);
    fe_jw_key(w, "machine");
    fe_jw_str(w, m->name);
    fe_jw_key(w, "machine_from");
    fe_jw_str(w, source_word(machine_source(s)));
    fe_jw_key(w, "plan_machine");
    fe_jw_str(w, s->pf.machine);
    fe_jw_key(w, "dims");
    fe_jw_obj_flat(w);
    for (int32_t d = 0; d < g->ndims; d++) {
        fe_jw_key(w, fe_graph_str(g, g->dims[d].name));
        fe_jw_int(w, g->dims[d].value);
    }
    fe_jw_end(w);
    fe_jw_key(w, "dims_from");
    fe_jw_obj_flat(w);
    for (int32_t d = 0; d < g->ndims; d++) {
        const char *name = fe_graph_str(g, g->dims[d].name);
        fe_jw_key(w, name);
        fe_jw_str(w, source_word(dim_source(s, name)));
    }
    fe_jw_end(w);
    fe_jw_key(w, "plan_dims");
    fe_jw_obj_flat(w);
    for (int i = 0; i < s->pf.ndims; i++) {
        fe_jw_key(w, s->pf.dim_names[i]);
        fe_jw_int(w, s->pf.dim_values[i]);
    }
    fe_jw_end(w);
    fe_jw_end(w);
}

static int run(int argc, char **argv)
{
    const char *model = NULL, *trace = NULL, *val;
    fe_cli_dims dims = {0};
    setup s = {0};
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
    s.limits = &eo;

    fe_error err = {0};
    fe_graph *g = NULL;
    fe_machine machine;
    fe_plan *plan = NULL, *base = NULL;
    fe_sim_report rep, brep;
    int rc = 0, have = 0, haveb = 0;
    if (fe_plan_file_open(s.planfile, &s.pf, &err) != FE_OK || !(g = load_model(model, &s, &err)) ||
        load_machine(&s, &machine, &err) != FE_OK || !(plan = fe_plan_file_plan(&s.pf, g, &err)) ||
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
        setup_json(&s, g, &machine, &w);
        fe_jw_key(&w, "plan");
        fe_sim_report_json(&rep, &w, verbose);
        fe_jw_key(&w, "versus_unfused");
        fe_sim_report_compare_json(&rep, &brep, &w);
        fe_jw_end(&w);
    } else {
        printf("model %s, plan %s (%d groups)\n", g->name, s.planfile, plan->ngroups);
        setup_text(&s, g, &machine);
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
    fe_graph_free(g);
    return rc;
}

const fe_cmd fe_cmd_sim = {"sim", "simulate a saved plan on a machine", usage, run};
