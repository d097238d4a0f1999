/* api_ab_suite.c: A/B suites (fuseeng ab --suite): read from JSON (or a Lua
 * file returning the same table) or from lists, and checked whole before
 * any planning, so that a typo in the last model does not surface an hour
 * into a sweep.
 *
 *   {"models":   ["a.json", "examples/models/gpt2_*.json",
 *                 {"file": "llama.json", "dims": {"S": [512, 2048, 8192]}},
 *                 {"file": "resnet.json", "weights": "resnet.safetensors",
 *                  "inputs": "in.safetensors"}],          its own data for --measure
 *    "policies": ["fuse_all", "static_rules{max_graph_size=4}",
 *                 {"policy": "gcu_tlf", "params": {"margin": 0.1}, "name": "tlf10"},
 *                 {"combine": "vote", "of": ["gcu_tlf", "fuse_all", "memory_aware"]}],
 *    "machines": ["gcu", "gcu_big"],
 *    "dims":     {"B": 1},            every model that has the dim
 *    "params":   {"margin": 0.2}}     every policy that has the parameter
 *
 * Rows are models x (the product of each model's dim sweeps) x machines, in
 * that order; columns are the policies, the first being the baseline. Every
 * message names the source and the JSON path of the bad value.
 */
#include <glob.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "lua_json.h"
#include "u64map.h"

#define MAXMODELS 4096

/* What the lists or the file said, before the rows are built. */
typedef struct draft {
    const char *src;                 /* "suite.json", "the command line" */
    int nmodels;
    char (*files)[1024];             /* globs expanded */
    char (*mwhere)[64];              /* "models[2]" */
    int *mdims_off, *mdims_n;        /* per-model dims in dims[] */
    char (*mdata)[2][1024];          /* per-model weights and inputs files, "" if none */
    fe_dimarg dims[256];             /* a dim and its swept values */
    int ndims, nglobal;              /* dims[0..nglobal) apply to every model that has them */
    char params[64][256];            /* "K=V" */
    char pwhere[64][64];
    int nparams;
    fe_policy *optimal;              /* takes the parameters too (ab --optimal), not owned */
} draft;

/* Add a model file or glob. */
static int add_model(draft *d, const char *pattern, const char *where, fe_error *err)
{
    glob_t gl;
    int magic = strpbrk(pattern, "*?[") != NULL, n = 1;
    if (magic) {
        if (glob(pattern, 0, NULL, &gl) != 0 || gl.gl_pathc == 0) {
            if (gl.gl_pathc == 0)
                globfree(&gl);
            return fe_ab_fail(err, d->src, where, "'%s' matches no file", pattern);
        }
        n = (int)gl.gl_pathc;
    }
    for (int i = 0; i < n; i++) {
        const char *file = magic ? gl.gl_pathv[i] : pattern;
        if (d->nmodels == MAXMODELS || strlen(file) >= sizeof d->files[0]) {
            if (magic)
                globfree(&gl);
            return fe_ab_fail(err, d->src, where, "%s: too many models (4096) or too long a path", file);
        }
        snprintf(d->files[d->nmodels], sizeof d->files[0], "%s", file);
        snprintf(d->mwhere[d->nmodels], sizeof d->mwhere[0], "%s", where);
        d->mdims_off[d->nmodels] = d->ndims;
        d->mdims_n[d->nmodels++] = 0;
    }
    if (magic)
        globfree(&gl);
    return FE_OK;
}

static int add_dim(draft *d, const char *where, const char *text, fe_error *err)
{
    if (d->ndims == 256)
        return fe_ab_fail(err, d->src, where, "%s: at most 256 dims in a suite", text);
    fe_error why = {0};
    if (fe_dimarg_parse(text, strlen(text), &d->dims[d->ndims++], &why) != FE_OK)
        return fe_ab_fail(err, d->src, where, "'%s': %s", text, why.message);
    return FE_OK;
}

static int add_param(draft *d, const char *where, const char *kv, fe_error *err)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv || strlen(kv) >= sizeof d->params[0])
        return fe_ab_fail(err, d->src, where, "'%s' is not KEY=VALUE", kv);
    if (d->nparams == 64)
        return fe_ab_fail(err, d->src, where, "%s: at most 64 parameters", kv);
    snprintf(d->params[d->nparams], sizeof d->params[0], "%s", kv);
    snprintf(d->pwhere[d->nparams++], sizeof d->pwhere[0], "%s", where);
    return FE_OK;
}

/* ---- the suite ---- */

static int add_col(fe_ab_suite *s, fe_policy *p, const char *name)
{
    fe_ab_col *c = &s->cols[s->ncols++];
    c->policy = p;
    c->owned = 1;
    snprintf(c->name, sizeof c->name, "%s", name && name[0] ? name : fe_policy_name(p));
    return FE_OK;
}

/* Global parameters into every column that has them, and into the run's
 * optimum policy (so `--param time_limit=5` reaches ab --optimal); one that
 * none has is an error. */
static int apply_params(fe_ab_suite *s, const draft *d, fe_error *err)
{
    for (int i = 0; i < d->nparams; i++) {
        char key[256];
        const char *eq = strchr(d->params[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - d->params[i]), d->params[i]);
        int used = 0;
        for (int c = 0; c < s->ncols; c++) {
            fe_error local = {0};
            if (fe_policy_set_param(s->cols[c].policy, key, eq + 1, &local) == FE_OK) {
                used = 1;
                snprintf(s->cols[c].name, sizeof s->cols[c].name, "%s",
                         fe_policy_name(s->cols[c].policy));
            } else if (!strstr(local.message, "has no param")) {
                *err = local;
                fe_error_prefix(err, "%s: %s: ", d->src, d->pwhere[i]);
                return FE_EINPUT;
            }
        }
        fe_error local = {0};
        if (d->optimal && fe_policy_set_param(d->optimal, key, eq + 1, &local) == FE_OK)
            used = 1;
        else if (d->optimal && !strstr(local.message, "has no param")) {
            *err = local;
            fe_error_prefix(err, "%s: %s: the optimum (--optimal): ", d->src, d->pwhere[i]);
            return FE_EINPUT;
        }
        if (!used)
            return fe_ab_fail(err, d->src, d->pwhere[i], "%s: no policy given has that parameter",
                        d->params[i]);
    }
    return FE_OK;
}

static int load_machines(fe_engine *e, fe_ab_suite *s, int n, const char *const *names,
                         const char *const *wheres, const char *src, fe_error *err)
{
    fe_machine saved = *fe_api_machine(e);
    if (!(s->machines = calloc((size_t)(n ? n : 1), sizeof *s->machines)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (fe_engine_set_machine(e, names[i], err) != FE_OK) {
            fe_error_prefix(err, "%s: %s: ", src, wheres[i]);
            fe_api_set_machine(e, &saved);
            return FE_EINPUT;
        }
        s->machines[i] = *fe_api_machine(e);
    }
    s->nmachines = n;
    fe_api_set_machine(e, &saved);
    return FE_OK;
}

/* Rows: each model x the product of its dims x machines. A per-model dim
 * the model lacks is an error; a global one only applies where it exists. */
static int build_rows(fe_ab_suite *s, const draft *d, fe_error *err)
{
    int cap = 64;
    if (!(s->rows = calloc((size_t)cap, sizeof *s->rows)))
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    int nm = s->nmachines ? s->nmachines : 1;
    for (int mi = 0; mi < d->nmodels; mi++) {
        fe_model *m = fe_model_load_dims(d->files[mi], 0, NULL, NULL, err);
        if (!m) {
            fe_error_prefix(err, "%s: %s: ", d->src, d->mwhere[mi]);
            return FE_EINPUT;
        }
        const fe_dimarg *use[FE_AB_MAXDIMS];
        int nuse = 0, bad = -1;
        for (int k = 0; k < d->mdims_n[mi]; k++) {
            const fe_dimarg *ds = &d->dims[d->mdims_off[mi] + k];
            if (!fe_model_dim(m, ds->name))
                bad = d->mdims_off[mi] + k;
            else if (nuse < FE_AB_MAXDIMS)
                use[nuse++] = ds;
        }
        for (int k = 0; k < d->nglobal && bad < 0; k++) {
            int dup = 0;
            for (int j = 0; j < nuse; j++)
                dup |= strcmp(use[j]->name, d->dims[k].name) == 0;
            if (!dup && fe_model_dim(m, d->dims[k].name) && nuse < FE_AB_MAXDIMS)
                use[nuse++] = &d->dims[k];
        }
        fe_model_free(m);
        if (bad >= 0) {
            char w[128];
            snprintf(w, sizeof w, "%s.dims", d->mwhere[mi]);
            return fe_ab_fail(err, d->src, w, "the model has no dim '%s'", d->dims[bad].name);
        }
        int combos = 1;
        for (int k = 0; k < nuse; k++)
            combos *= use[k]->n;
        for (int c = 0; c < combos; c++)
            for (int mach = 0; mach < nm; mach++) {
                if (s->nrows == 100000)
                    return fe_ab_fail(err, d->src, d->mwhere[mi], "%s", "more than 100000 rows");
                if (s->nrows == cap) {
                    fe_ab_row *nr = realloc(s->rows, (size_t)cap * 2 * sizeof *nr);
                    if (!nr)
                        return fe_error_set(err, FE_ENOMEM, "out of memory");
                    s->rows = nr;
                    cap *= 2;
                }
                fe_ab_row *r = &s->rows[s->nrows++];
                memset(r, 0, sizeof *r);
                snprintf(r->path, sizeof r->path, "%s", d->files[mi]);
                snprintf(r->weights, sizeof r->weights, "%s", d->mdata[mi][0]);
                snprintf(r->inputs, sizeof r->inputs, "%s", d->mdata[mi][1]);
                r->machine = s->nmachines ? mach : -1;
                int rest = c;
                for (int k = nuse - 1; k >= 0; k--) {
                    snprintf(r->dim_names[k], sizeof r->dim_names[k], "%s", use[k]->name);
                    r->dim_values[k] = use[k]->values[rest % use[k]->n];
                    rest /= use[k]->n;
                }
                r->ndims = nuse;
                /* Only dims with a choice name the row: a single global
                 * value is the same everywhere. */
                for (int k = 0; k < nuse; k++)
                    if (use[k]->n > 1 || use[k] >= &d->dims[d->nglobal]) {
                        size_t l = strlen(r->dims_label);
                        snprintf(r->dims_label + l, sizeof r->dims_label - l, "%s%s=%lld",
                                 l ? " " : "", use[k]->name, (long long)r->dim_values[k]);
                    }
            }
    }
    return FE_OK;
}

static void suite_id(fe_ab_suite *s)
{
    uint64_t h = FE_FNV_SEED;
    for (int r = 0; r < s->nrows; r++) {
        const fe_ab_row *w = &s->rows[r];
        h = fe_fnv1a(h, w->path, strlen(w->path) + 1);
        for (int k = 0; k < w->ndims; k++) {
            h = fe_fnv1a(h, w->dim_names[k], strlen(w->dim_names[k]) + 1);
            h = fe_fnv1a(h, &w->dim_values[k], sizeof w->dim_values[k]);
        }
        const char *mn = w->machine >= 0 ? s->machines[w->machine].name : "";
        h = fe_fnv1a(h, mn, strlen(mn) + 1);
        if (w->weights[0] || w->inputs[0]) {   /* suites without keep their ids */
            h = fe_fnv1a(h, w->weights, strlen(w->weights) + 1);
            h = fe_fnv1a(h, w->inputs, strlen(w->inputs) + 1);
        }
    }
    for (int c = 0; c < s->ncols; c++)
        h = fe_fnv1a(h, s->cols[c].name, strlen(s->cols[c].name) + 1);
    snprintf(s->id, sizeof s->id, "%016llx", (unsigned long long)h);
}

void fe_ab_suite_free(fe_ab_suite *s)
{
    if (!s)
        return;
    for (int c = 0; c < s->ncols; c++)
        if (s->cols[c].owned)
            fe_policy_free(s->cols[c].policy);
    free(s->cols);
    free(s->rows);
    free(s->machines);
    free(s);
}

int fe_ab_suite_rows(const fe_ab_suite *s) { return s ? s->nrows : 0; }
int fe_ab_suite_cols(const fe_ab_suite *s) { return s ? s->ncols : 0; }

static void draft_free(draft *d)
{
    free(d->files);
    free(d->mwhere);
    free(d->mdims_off);
    free(d->mdims_n);
    free(d->mdata);
    free(d);
}

static draft *draft_new(const char *src, fe_error *err)
{
    draft *d = calloc(1, sizeof *d);
    if (d) {
        d->src = src;
        d->files = calloc(MAXMODELS, sizeof *d->files);
        d->mwhere = calloc(MAXMODELS, sizeof *d->mwhere);
        d->mdims_off = calloc(MAXMODELS, sizeof *d->mdims_off);
        d->mdims_n = calloc(MAXMODELS, sizeof *d->mdims_n);
        d->mdata = calloc(MAXMODELS, sizeof *d->mdata);
    }
    if (!d || !d->files || !d->mwhere || !d->mdims_off || !d->mdims_n || !d->mdata) {
        if (d)
            draft_free(d);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    return d;
}

/* The parts every source shares: machines, parameters, rows, the id. */
static fe_ab_suite *finish(fe_engine *e, fe_ab_suite *s, draft *d, int nmach,
                           const char *const *mnames, const char *const *mwhere, fe_error *err)
{
    int rc = FE_OK;
    if (d->nmodels == 0)
        rc = fe_ab_fail(err, d->src, "models", "%s", "no model given");
    else if (s->ncols < 2)
        rc = fe_ab_fail(err, d->src, "policies", "%s", "give at least two policies to compare");
    if (rc == FE_OK)
        rc = load_machines(e, s, nmach, mnames, mwhere, d->src, err);
    if (rc == FE_OK)
        rc = apply_params(s, d, err);
    if (rc == FE_OK)
        rc = build_rows(s, d, err);
    draft_free(d);
    if (rc != FE_OK) {
        fe_ab_suite_free(s);
        return NULL;
    }
    suite_id(s);
    return s;
}

static fe_ab_suite *suite_new(int ncols, fe_error *err)
{
    fe_ab_suite *s = calloc(1, sizeof *s);
    if (s && !(s->cols = calloc((size_t)(ncols ? ncols : 1), sizeof *s->cols))) {
        free(s);
        s = NULL;
    }
    if (!s)
        fe_error_set(err, FE_ENOMEM, "out of memory");
    return s;
}

fe_ab_suite *fe_ab_suite_new(fe_engine *e, const fe_ab_suite_options *o, fe_error *err)
{
    if (fe_api_null(e, "fe_ab_suite_new", "the engine", err) ||
        fe_api_null(o, "fe_ab_suite_new", "the options struct", err))
        return NULL;
    const char *src = "the command line";
    draft *d = draft_new(src, err);
    fe_ab_suite *s = d ? suite_new(o->npolicies, err) : NULL;
    const char *mwhere[64];
    if (d)
        d->optimal = o->optimal;
    int rc = d && s ? FE_OK : FE_ENOMEM;
    if (rc == FE_OK && (o->nmachines > 64 || o->npolicies > 64))
        rc = fe_ab_fail(err, src, "--machine/--policy", "%s", "at most 64 machines and 64 policies");
    for (int i = 0; rc == FE_OK && i < o->nmachines; i++)
        mwhere[i] = "--machine";
    for (int i = 0; rc == FE_OK && i < o->ndims; i++)
        rc = add_dim(d, "--dim", o->dims[i], err);
    if (d)
        d->nglobal = d->ndims;
    for (int i = 0; rc == FE_OK && i < o->nparams; i++)
        rc = add_param(d, "--param", o->params[i], err);
    for (int i = 0; rc == FE_OK && i < o->nmodels; i++)
        rc = add_model(d, o->models[i], "a model", err);
    for (int i = 0; rc == FE_OK && i < o->npolicies; i++) {
        fe_policy *p = fe_ab_load_spec(e, src, "--policy", o->policies[i], err);
        rc = p ? add_col(s, p, NULL) : FE_EINPUT;
    }
    if (rc != FE_OK) {
        if (d)
            draft_free(d);
        fe_ab_suite_free(s);
        return NULL;
    }
    return finish(e, s, d, o->nmachines, o->machines, mwhere, err);
}

/* ---- the file ---- */

/* dims: {"S": [512, 2048] | 512 | "512,2048"} or ["S=512,2048", ...] or
 * "S=512,2048". */
static int read_dims(draft *d, const json_t *v, const char *where, fe_error *err)
{
    char w[256], text[1024];
    if (json_is_string(v))
        return add_dim(d, where, json_string_value(v), err);
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            snprintf(w, sizeof w, "%s[%zu]", where, i);
            if (!json_is_string(x))
                return fe_ab_fail(err, d->src, w, "%s", "a dim is \"NAME=V\" or \"NAME=V1,V2,...\"");
            if (add_dim(d, w, json_string_value(x), err) != FE_OK)
                return FE_EINPUT;
        }
        return FE_OK;
    }
    if (!json_is_object(v))
        return fe_ab_fail(err, d->src, where, "%s", "dims are {\"NAME\": value or [values]} or "
                    "[\"NAME=V1,V2\"]");
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        snprintf(w, sizeof w, "%s.%s", where, k);
        int n = snprintf(text, sizeof text, "%s=", k);
        if (json_is_array(x) && json_array_size(x) > 0) {
            size_t i;
            json_t *y;
            json_array_foreach(x, i, y) {
                if (!json_is_integer(y) || json_integer_value(y) <= 0) {
                    snprintf(w, sizeof w, "%s.%s[%zu]", where, k, i);
                    return fe_ab_fail(err, d->src, w, "%s", "a dim value is a positive integer");
                }
                n += snprintf(text + n, sizeof text - (size_t)n, "%s%lld", i ? "," : "",
                              (long long)json_integer_value(y));
                if (n >= (int)sizeof text - 24)
                    return fe_ab_fail(err, d->src, w, "%s", "too many values");
            }
        } else if (json_is_integer(x) && json_integer_value(x) > 0) {
            snprintf(text + n, sizeof text - (size_t)n, "%lld", (long long)json_integer_value(x));
        } else if (json_is_string(x)) {
            snprintf(text + n, sizeof text - (size_t)n, "%s", json_string_value(x));
        } else {
            return fe_ab_fail(err, d->src, w, "%s", "a dim value is a positive integer or a non-empty "
                        "list of them");
        }
        if (add_dim(d, w, text, err) != FE_OK)
            return FE_EINPUT;
    }
    return FE_OK;
}

/* A model entry's own weights and inputs files (for --measure), given to
 * the models first.. its file names; each must exist, as its model must. */
static int read_data(draft *d, const json_t *x, const char *w, int first, fe_error *err)
{
    static const char *const keys[2] = {"weights", "inputs"};
    for (int k = 0; k < 2; k++) {
        const json_t *f = json_object_get(x, keys[k]);
        char wk[96];
        snprintf(wk, sizeof wk, "%s.%s", w, keys[k]);
        if (!f)
            continue;
        if (!json_is_string(f) || !json_string_length(f) || json_string_length(f) >= 1024)
            return fe_ab_fail(err, d->src, wk, "%s", "a safetensors file's path");
        FILE *probe = fopen(json_string_value(f), "rb");
        if (!probe)
            return fe_ab_fail(err, d->src, wk, "no file '%s' (a path is taken from the directory "
                              "fuseeng runs in, as the model's is)", json_string_value(f));
        fclose(probe);
        for (int m = first; m < d->nmodels; m++)
            snprintf(d->mdata[m][k], sizeof d->mdata[m][k], "%s", json_string_value(f));
    }
    return FE_OK;
}

static int read_models(draft *d, const json_t *v, fe_error *err)
{
    static const char *const mkeys[] = {"file", "dims", "weights", "inputs", NULL};
    if (!json_is_array(v) || json_array_size(v) == 0)
        return fe_ab_fail(err, d->src, "models", "%s", "a non-empty list of model files, globs or "
                    "{\"file\": ..., \"dims\": ..., \"weights\": ..., \"inputs\": ...}");
    size_t i;
    json_t *x;
    json_array_foreach(v, i, x) {
        char w[64], wd[80];
        snprintf(w, sizeof w, "models[%zu]", i);
        const json_t *file = json_is_object(x) ? json_object_get(x, "file") : x;
        if (json_is_object(x) && fe_ab_only_keys(x, mkeys, d->src, w, err) != FE_OK)
            return FE_EINPUT;
        if (!json_is_string(file))
            return fe_ab_fail(err, d->src, w, "%s", "a model is a file, a glob or {\"file\": ..., "
                        "\"dims\": ...}");
        int first = d->nmodels, off = d->ndims;
        if (add_model(d, json_string_value(file), w, err) != FE_OK)
            return FE_EINPUT;
        const json_t *dims = json_is_object(x) ? json_object_get(x, "dims") : NULL;
        snprintf(wd, sizeof wd, "%s.dims", w);
        if (dims && read_dims(d, dims, wd, err) != FE_OK)
            return FE_EINPUT;
        for (int m = first; m < d->nmodels; m++) {
            d->mdims_off[m] = off;
            d->mdims_n[m] = d->ndims - off;
        }
        if (json_is_object(x) && read_data(d, x, w, first, err) != FE_OK)
            return FE_EINPUT;
    }
    return FE_OK;
}

static int read_params(draft *d, const json_t *v, fe_error *err)
{
    if (!json_is_object(v))
        return fe_ab_fail(err, d->src, "params", "%s", "an object {\"name\": value}");
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) {
        char w[300], text[256], kv[600];
        snprintf(w, sizeof w, "params.%s", k);
        if (fe_ab_scalar_text(x, text, sizeof text) != 0)
            return fe_ab_fail(err, d->src, w, "%s", "a parameter is a number, a string or a boolean");
        snprintf(kv, sizeof kv, "%s=%s", k, text);
        if (add_param(d, w, kv, err) != FE_OK)
            return FE_EINPUT;
    }
    return FE_OK;
}

static fe_ab_suite *read_doc(fe_engine *e, const char *src, const json_t *doc,
                             const fe_ab_suite_options *over, fe_error *err)
{
    static const char *const keys[] = {"models", "policies", "machines", "dims", "params", NULL};
    if (!json_is_object(doc)) {
        fe_ab_fail(err, src, "the document", "%s", "a suite is a JSON object with models, policies, "
             "machines, dims and params");
        return NULL;
    }
    if (fe_ab_only_keys(doc, keys, src, "", err) != FE_OK)
        return NULL;
    const json_t *pols = json_object_get(doc, "policies"), *machs = json_object_get(doc, "machines");
    if (!json_is_array(pols) || json_array_size(pols) < 2 || json_array_size(pols) > 64) {
        fe_ab_fail(err, src, "policies", "%s", "a list of 2 to 64 policies (the first is the baseline)");
        return NULL;
    }
    if (machs && (!json_is_array(machs) || json_array_size(machs) == 0 ||
                  json_array_size(machs) > 64)) {
        fe_ab_fail(err, src, "machines", "%s", "a list of 1 to 64 machine names or files");
        return NULL;
    }
    draft *d = draft_new(src, err);
    fe_ab_suite *s = d ? suite_new((int)json_array_size(pols), err) : NULL;
    int rc = d && s ? FE_OK : FE_ENOMEM;
    if (d && over)
        d->optimal = over->optimal;
    const json_t *dims = json_object_get(doc, "dims"), *params = json_object_get(doc, "params");
    if (rc == FE_OK && dims)
        rc = read_dims(d, dims, "dims", err);
    for (int i = 0; rc == FE_OK && over && i < over->ndims; i++)
        rc = add_dim(d, "--dim", over->dims[i], err);
    if (d)
        d->nglobal = d->ndims;
    if (rc == FE_OK && params)
        rc = read_params(d, params, err);
    for (int i = 0; rc == FE_OK && over && i < over->nparams; i++)
        rc = add_param(d, "--param", over->params[i], err);
    if (rc == FE_OK)
        rc = read_models(d, json_object_get(doc, "models"), err);
    for (size_t i = 0; rc == FE_OK && i < json_array_size(pols); i++) {
        char w[64], name[256] = "";
        snprintf(w, sizeof w, "policies[%zu]", i);
        fe_policy *p = fe_ab_load_entry(e, src, w, json_array_get(pols, i), name, sizeof name, err);
        rc = p ? add_col(s, p, name) : FE_EINPUT;
    }
    const char *mnames[64], *mwhere[64];
    char mw[64][32];
    int nm = 0;
    if (over && over->nmachines) {
        for (; nm < over->nmachines && nm < 64; nm++) {
            mnames[nm] = over->machines[nm];
            mwhere[nm] = "--machine";
        }
    } else {
        for (size_t i = 0; rc == FE_OK && machs && i < json_array_size(machs); i++, nm++) {
            snprintf(mw[i], sizeof mw[i], "machines[%zu]", i);
            mwhere[i] = mw[i];
            if (!(mnames[i] = json_string_value(json_array_get(machs, i))))
                rc = fe_ab_fail(err, src, mw[i], "%s", "a machine is a name or a file");
        }
    }
    if (rc != FE_OK) {
        if (d)
            draft_free(d);
        fe_ab_suite_free(s);
        return NULL;
    }
    return finish(e, s, d, nm, mnames, mwhere, err);
}

fe_ab_suite *fe_ab_suite_read(fe_engine *e, const char *path, const fe_ab_suite_options *over,
                              fe_error *err)
{
    if (fe_api_null(e, "fe_ab_suite_read", "the engine", err) ||
        fe_api_null(path, "fe_ab_suite_read", "the path", err))
        return NULL;
    if (over && (over->nmodels || over->npolicies)) {
        fe_error_set(err, FE_EINPUT, "%s: give the models and policies in the suite or on the "
                     "command line, not both", path);
        return NULL;
    }
    size_t len = strlen(path);
    json_t *doc = NULL;
    json_error_t je;
    if (len > 4 && strcmp(path + len - 4, ".lua") == 0) {
        char *text = fe_lua_file_json(e->pl->sb, path, err);   /* the engine's limits */
        if (!text)
            return NULL;
        doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
        free(text);
        if (!doc) {
            fe_error_set(err, FE_EINPUT, "%s: the table it returns is not a suite: %s", path,
                         je.text);
            return NULL;
        }
    } else if (!(doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je))) {
        fe_error_set(err, FE_EINPUT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
        return NULL;
    }
    fe_ab_suite *s = read_doc(e, path, doc, over, err);
    json_decref(doc);
    return s;
}
