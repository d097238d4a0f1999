/* planfile.c: a saved plan's model and machine, set up as the plan records
 * them (see planfile.h). */
#include <stdio.h>
#include <string.h>

#include "machine.h"
#include "machine_file.h"
#include "planfile.h"
#include "sandbox.h"

/* Where the model's dims and the machine came from, for the report. */
enum { FROM_MODEL, FROM_PLAN, FROM_OPTION };

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

static int dim_source(const fe_cli_planfile *s, const char *name)
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
fe_graph *fe_cli_planfile_model(const char *model, fe_cli_planfile *s, fe_error *err)
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
int fe_cli_planfile_machine(const fe_cli_planfile *s, fe_sandbox *sb, fe_machine *m, fe_error *err)
{
    if (s->machine_opt)
        return fe_machine_load(sb, s->machine_opt, m, err);
    if (!s->pf.machine)
        return fe_machine_load(sb, "gcu", m, err);
    int rc = fe_machine_load_shipped(sb, s->pf.machine, m, err);
    if (rc == FE_EINPUT) {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        fe_error_set(err, FE_EINPUT, "%s: \"machine\": %s; if the plan was made on a machine "
                     "file, give it with --machine FILE", s->planfile, why);
    }
    return rc;
}

static int machine_source(const fe_cli_planfile *s)
{
    return s->machine_opt ? FROM_OPTION : s->pf.machine ? FROM_PLAN : FROM_MODEL;
}

void fe_cli_planfile_text(const fe_cli_planfile *s, const fe_graph *g, const fe_machine *m, FILE *f)
{
    int all_plan = g->ndims > 0;
    for (int32_t d = 0; d < g->ndims; d++)
        all_plan &= dim_source(s, fe_graph_str(g, g->dims[d].name)) == FROM_PLAN;
    if (s->forced)
        fprintf(f, "note: the plan was made for model '%s' (--ignore-model-name)\n", s->pf.model);
    if (g->ndims > 0) {
        fprintf(f, "dims       ");
        for (int32_t d = 0; d < g->ndims; d++) {
            const char *name = fe_graph_str(g, g->dims[d].name);
            int64_t pv = plan_dim(&s->pf, name);
            fprintf(f, "%s%s=%lld", d ? ", " : "", name, (long long)g->dims[d].value);
            if (all_plan)
                continue;
            switch (dim_source(s, name)) {
            case FROM_PLAN: fprintf(f, " (plan)"); break;
            case FROM_MODEL: fprintf(f, " (the model's; the plan records none)"); break;
            default:
                if (pv && pv != g->dims[d].value)
                    fprintf(f, " (--dim overrides the plan's %lld)", (long long)pv);
                else
                    fprintf(f, " (--dim%s)", pv ? ", as the plan records" : "");
            }
        }
        fprintf(f, "%s\n", all_plan ? ", as the plan records" : "");
    }
    fprintf(f, "machine    %s", m->name);
    switch (machine_source(s)) {
    case FROM_PLAN: fprintf(f, ", as the plan records\n"); break;
    case FROM_MODEL: fprintf(f, " (the default; the plan names none)\n"); break;
    default:
        if (s->pf.machine && strcmp(s->pf.machine, m->name) != 0)
            fprintf(f, " (--machine overrides the plan's %s)\n", s->pf.machine);
        else
            fprintf(f, " (--machine%s)\n", s->pf.machine ? ", as the plan records" : "");
    }
}

static const char *source_word(int from)
{
    return from == FROM_OPTION ? "option" : from == FROM_PLAN ? "plan" : "default";
}

void fe_cli_planfile_json(const fe_cli_planfile *s, const fe_graph *g, const fe_machine *m, fe_jw *w)
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

