/* api_files.c: reading a saved plan the way it was made.
 *
 * A plan file records the model it was made for, the dims the model was
 * loaded with and the machine the policy planned for. A plan made at
 * S=8192 on gcu_big describes another program than the same grouping at
 * S=2048 on gcu (other splits, other times), so a reader loads the model
 * at the plan's dims and takes the plan's machine; the caller's dims and
 * machine override them, and the setup report says which value came from
 * where. A plan for another model is refused unless the caller insists
 * (ignore_model_name): node names alone could match by accident. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "load.h"
#include "plan_json.h"
#include "save.h"

#define MAX_DIMS 128

struct fe_saved_plan {
    fe_plan_file pf;           /* kept open: its strings are the plan's header */
    char *path;
    fe_model *model;
    fe_plan *plan;
    int ndims;                 /* the caller's dims */
    char **dim_names;
    int64_t *dim_values;
    int machine_opt;           /* the caller chose the machine */
    char machine[64];          /* the machine's name when read */
    int forced;                /* ignore_model_name was needed */
    int64_t dispatch_value;    /* a dispatch table: the dim's value, which picked the bucket */
    int dispatch_default;      /* that value is the model's default, not the caller's */
};

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

static int option_dim(const fe_saved_plan *s, const char *name)
{
    for (int i = 0; i < s->ndims; i++)
        if (strcmp(s->dim_names[i], name) == 0)
            return 1;
    return 0;
}

static int dim_source(const fe_saved_plan *s, const char *name)
{
    if (s->dispatch_default && strcmp(name, s->pf.dispatch_dim) == 0)
        return FROM_MODEL;
    if (option_dim(s, name))
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

/* Load the model at the plan's dims, the caller's overriding them. The
 * model is loaded once with the caller's dims alone (its name and dims are
 * needed to check the plan against it) and again only if the plan's dims
 * differ from those. */
static fe_graph *load_model(const char *model, fe_saved_plan *s, fe_error *err)
{
    const char *names[MAX_DIMS];
    int64_t values[MAX_DIMS];
    int n = s->ndims;
    for (int i = 0; i < n; i++) {
        names[i] = s->dim_names[i];
        values[i] = s->dim_values[i];
    }
    fe_dimset ds = {n, names, values};
    fe_graph *g = fe_load_model_file(model, &ds, err);
    if (!g)
        return NULL;
    if (s->pf.model && strcmp(s->pf.model, g->name) != 0) {
        if (!s->forced) {
            fe_error_set(err, FE_EINPUT, "%s: the plan is for model '%s', not '%s' (%s); give "
                         "--ignore-model-name to simulate it anyway", s->path, s->pf.model,
                         g->name, model);
            fe_graph_free(g);
            return NULL;
        }
    } else {
        s->forced = 0;   /* the option was not needed: nothing to report */
    }
    int reload = 0;
    for (int i = 0; i < s->pf.ndims; i++) {
        const char *name = s->pf.dim_names[i];
        char list[512];
        if (option_dim(s, name))
            continue;
        int64_t now = model_dim(g, name, list, sizeof list);
        if (!now) {
            fe_error_set(err, FE_EINPUT, "%s: \"dims\": the plan sets %s=%lld but model '%s' has "
                         "no dim '%s' (its dims: %s)", s->path, name,
                         (long long)s->pf.dim_values[i], g->name, name, list[0] ? list : "none");
            fe_graph_free(g);
            return NULL;
        }
        if (now == s->pf.dim_values[i])
            continue;
        if (n == MAX_DIMS) {
            fe_error_set(err, FE_EINPUT, "%s: \"dims\": more than %d dims", s->path, MAX_DIMS);
            fe_graph_free(g);
            return NULL;
        }
        names[n] = name;
        values[n++] = s->pf.dim_values[i];
        reload = 1;
    }
    if (!reload)
        return g;
    fe_graph_free(g);
    ds.n = n;
    return fe_load_model_file(model, &ds, err);
}

/* A dispatch table: the bucket that serves the model's value of the
 * table's dim (the caller's, else the model file's), which the model is
 * then loaded at, not at the bucket's value the plan was made at. */
static int pick_bucket(const char *model, fe_saved_plan *s, fe_error *err)
{
    const char *dim = s->pf.dispatch_dim;
    for (int i = 0; i < s->ndims; i++)
        if (strcmp(s->dim_names[i], dim) == 0)
            s->dispatch_value = s->dim_values[i];
    if (!s->dispatch_value) {
        const char *names[MAX_DIMS];
        for (int i = 0; i < s->ndims; i++)
            names[i] = s->dim_names[i];
        fe_dimset ds = {s->ndims, names, s->dim_values};
        fe_graph *g = fe_load_model_file(model, &ds, err);
        if (!g)
            return err ? err->code : FE_EINPUT;
        char list[512];
        s->dispatch_value = model_dim(g, dim, list, sizeof list);
        if (!s->dispatch_value) {
            fe_error_set(err, FE_EINPUT, "%s: the buckets are values of dim '%s', which model '%s' "
                         "does not have (its dims: %s)", s->path, dim, g->name, list[0] ? list : "none");
            fe_graph_free(g);
            return FE_EINPUT;
        }
        fe_graph_free(g);
        char **names2 = realloc(s->dim_names, (size_t)(s->ndims + 1) * sizeof *names2);
        if (names2)
            s->dim_names = names2;
        int64_t *values = names2 ? realloc(s->dim_values, (size_t)(s->ndims + 1) * sizeof *values) : NULL;
        if (values)
            s->dim_values = values;
        if (!names2 || !values || !(s->dim_names[s->ndims] = strdup(dim)))
            return fe_error_set(err, FE_ENOMEM, "out of memory");
        s->dim_values[s->ndims++] = s->dispatch_value;
        s->dispatch_default = 1;
    }
    return fe_plan_file_pick(&s->pf, s->dispatch_value, err);
}

/* The machine: the caller's, else the plan's (a shipped machine by name,
 * never a path read from the file), else the engine's. */
static int load_machine(fe_engine *e, const fe_saved_plan *s, const char *opt, fe_error *err)
{
    if (opt)
        return fe_engine_set_machine(e, opt, err);
    if (!s->pf.machine)
        return FE_OK;
    int rc = fe_api_use_shipped_machine(e, s->pf.machine, err);
    if (rc == FE_EINPUT) {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        fe_error_set(err, FE_EINPUT, "%s: \"machine\": %s; if the plan was made on a machine "
                     "file, give it with --machine FILE", s->path, why);
    }
    return rc;
}

static int copy_dims(fe_saved_plan *s, const fe_read_options *o, fe_error *err)
{
    if (!o || o->ndims <= 0)
        return FE_OK;
    if (o->ndims > MAX_DIMS / 2 || !o->dim_names || !o->dim_values)
        return fe_error_set(err, FE_EINPUT, "fe_saved_plan_read: %d dims (at most %d, with names "
                            "and values)", o->ndims, MAX_DIMS / 2);
    s->dim_names = calloc((size_t)o->ndims, sizeof *s->dim_names);
    s->dim_values = calloc((size_t)o->ndims, sizeof *s->dim_values);
    if (!s->dim_names || !s->dim_values)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < o->ndims; i++) {
        if (!o->dim_names[i] || !(s->dim_names[i] = strdup(o->dim_names[i]))) {
            s->ndims = i;
            return o->dim_names[i] ? fe_error_set(err, FE_ENOMEM, "out of memory")
                                   : fe_error_set(err, FE_EINPUT, "fe_saved_plan_read: dim %d "
                                                  "has no name", i);
        }
        s->dim_values[i] = o->dim_values[i];
        s->ndims = i + 1;
    }
    return FE_OK;
}

fe_saved_plan *fe_saved_plan_read(fe_engine *e, const char *path, const char *model,
                                  const fe_read_options *o, fe_error *err)
{
    if (fe_api_null(e, "fe_saved_plan_read", "the engine", err) ||
        fe_api_null(path, "fe_saved_plan_read", "the plan file's path", err) ||
        fe_api_null(model, "fe_saved_plan_read", "the model file's path", err))
        return NULL;
    fe_saved_plan *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    s->forced = o && o->ignore_model_name;
    s->machine_opt = o && o->machine;
    fe_graph *g = NULL;
    int rc = copy_dims(s, o, err);
    if (rc == FE_OK)
        rc = fe_plan_file_open(s->path, &s->pf, err);
    if (rc == FE_OK && s->pf.dispatch_dim)
        rc = pick_bucket(model, s, err);
    if (rc == FE_OK && !(s->model = fe_api_model(g = load_model(model, s, err), err)))
        rc = err ? err->code : FE_EINPUT;
    if (rc == FE_OK)
        rc = load_machine(e, s, o ? o->machine : NULL, err);
    if (rc == FE_OK && (!(s->plan = fe_plan_file_plan(&s->pf, g, err)) ||
                        fe_sim_resolve_splits(s->plan, fe_api_machine(e), err) != FE_OK))
        rc = err ? err->code : FE_EINPUT;
    if (rc != FE_OK) {
        fe_saved_plan_free(s);
        return NULL;
    }
    snprintf(s->machine, sizeof s->machine, "%s", fe_api_machine(e)->name);
    return s;
}

fe_model *fe_saved_plan_model(const fe_saved_plan *s)
{
    return s ? s->model : NULL;
}

fe_plan *fe_saved_plan_plan(const fe_saved_plan *s)
{
    return s ? s->plan : NULL;
}

int64_t fe_saved_plan_bucket(const fe_saved_plan *s, const char **dim)
{
    if (!s || !s->pf.dispatch_dim)
        return 0;
    if (dim)
        *dim = s->pf.dispatch_dim;
    return s->pf.buckets[s->pf.picked];
}

const char *fe_saved_plan_made_for(const fe_saved_plan *s)
{
    return s && s->forced ? s->pf.model : NULL;
}

const char *fe_api_saved_path(const fe_saved_plan *s)
{
    return s->path;
}

void fe_saved_plan_free(fe_saved_plan *s)
{
    if (!s)
        return;
    fe_plan_free(s->plan);
    fe_model_free(s->model);
    fe_plan_file_close(&s->pf);
    for (int i = 0; i < s->ndims; i++)
        free(s->dim_names[i]);
    free(s->dim_names);
    free(s->dim_values);
    free(s->path);
    free(s);
}

static int machine_source(const fe_saved_plan *s)
{
    return s->machine_opt ? FROM_OPTION : s->pf.machine ? FROM_PLAN : FROM_MODEL;
}

static void setup_text(const fe_saved_plan *s, FILE *f)
{
    const fe_graph *g = fe_api_graph(s->model);
    int all_plan = g->ndims > 0;
    for (int32_t d = 0; d < g->ndims; d++)
        all_plan &= dim_source(s, fe_graph_str(g, g->dims[d].name)) == FROM_PLAN;
    if (s->forced)
        fprintf(f, "note: the plan was made for model '%s' (--ignore-model-name)\n", s->pf.model);
    if (s->pf.dispatch_dim) {
        int i = s->pf.picked;
        fprintf(f, "bucket     %s=%lld%s is served by bucket %s=%lld (values %lld..%lld), %d of %d\n",
                s->pf.dispatch_dim, (long long)s->dispatch_value,
                s->dispatch_default ? " (the model's)" : "", s->pf.dispatch_dim,
                (long long)s->pf.buckets[i], (long long)(i ? s->pf.buckets[i - 1] + 1 : 1),
                (long long)s->pf.buckets[i], i + 1, s->pf.nbuckets);
    }
    if (g->ndims > 0) {
        fprintf(f, "dims       ");
        for (int32_t d = 0; d < g->ndims; d++) {
            const char *name = fe_graph_str(g, g->dims[d].name);
            int64_t pv = plan_dim(&s->pf, name);
            fprintf(f, "%s%s=%lld", d ? ", " : "", name, (long long)g->dims[d].value);
            if (all_plan)
                continue;
            if (s->pf.dispatch_dim && strcmp(name, s->pf.dispatch_dim) == 0) {
                fprintf(f, " (%s; picks the bucket)", s->dispatch_default ? "the model's" : "--dim");
                continue;
            }
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
    fprintf(f, "machine    %s", s->machine);
    switch (machine_source(s)) {
    case FROM_PLAN: fprintf(f, ", as the plan records\n"); break;
    case FROM_MODEL: fprintf(f, " (the default; the plan names none)\n"); break;
    default:
        if (s->pf.machine && strcmp(s->pf.machine, s->machine) != 0)
            fprintf(f, " (--machine overrides the plan's %s)\n", s->pf.machine);
        else
            fprintf(f, " (--machine%s)\n", s->pf.machine ? ", as the plan records" : "");
    }
}

static const char *source_word(int from)
{
    return from == FROM_OPTION ? "option" : from == FROM_PLAN ? "plan" : "default";
}

void fe_api_saved_json(const fe_saved_plan *s, fe_jw *w)
{
    const fe_graph *g = fe_api_graph(s->model);
    fe_jw_obj(w);
    fe_jw_key(w, "plan_file");
    fe_jw_str(w, s->path);
    fe_jw_key(w, "model");
    fe_jw_str(w, g->name);
    fe_jw_key(w, "plan_model");
    fe_jw_str(w, s->pf.model);
    fe_jw_key(w, "machine");
    fe_jw_str(w, s->machine);
    fe_jw_key(w, "machine_from");
    fe_jw_str(w, source_word(machine_source(s)));
    fe_jw_key(w, "plan_machine");
    fe_jw_str(w, s->pf.machine);
    fe_save_dims(w, g, 1);
    fe_jw_key(w, "dims_from");
    fe_jw_obj_flat(w);
    for (int32_t d = 0; d < g->ndims; d++) {
        const char *name = fe_graph_str(g, g->dims[d].name);
        fe_jw_key(w, name);
        fe_jw_str(w, source_word(dim_source(s, name)));
    }
    fe_jw_end(w);
    if (s->pf.dispatch_dim) {
        int i = s->pf.picked;
        fe_jw_key(w, "bucket");
        fe_jw_obj_flat(w);
        fe_jw_key(w, "dim");
        fe_jw_str(w, s->pf.dispatch_dim);
        fe_jw_key(w, "value");
        fe_jw_int(w, s->dispatch_value);
        fe_jw_key(w, "bucket");
        fe_jw_int(w, s->pf.buckets[i]);
        fe_jw_key(w, "serves");
        fe_jw_arr_flat(w);
        fe_jw_int(w, i ? s->pf.buckets[i - 1] + 1 : 1);
        fe_jw_int(w, s->pf.buckets[i]);
        fe_jw_end(w);
        fe_jw_end(w);
    }
    fe_jw_key(w, "plan_dims");
    fe_jw_obj_flat(w);
    for (int i = 0; i < s->pf.ndims; i++) {
        fe_jw_key(w, s->pf.dim_names[i]);
        fe_jw_int(w, s->pf.dim_values[i]);
    }
    fe_jw_end(w);
    fe_jw_end(w);
}

static int write_setup(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    (void)arg, (void)err;
    if ((format & FE_FORMAT_MASK) == FE_FORMAT_JSON) {
        fe_jw w;
        fe_jw_init(&w, f, 2);
        fe_api_saved_json(obj, &w);
    } else {
        setup_text(obj, f);
    }
    return FE_OK;
}

char *fe_saved_plan_format(const fe_saved_plan *s, int format, fe_error *err)
{
    if (fe_api_null(s, "fe_saved_plan_format", "the saved plan", err))
        return NULL;
    return fe_api_text(write_setup, s, NULL, format, err);
}
