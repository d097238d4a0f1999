/* api_model_load.c: models, the public handle fe_model of fuseeng.h: a
 * graph loaded from a model file or buffer with its dims overridden. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "load.h"

/* "B=8,S=4096" into a dimset; returns FE_OK or FE_EINPUT. */
static int parse_dims(const char *spec, fe_dimset *ds, char names[][128], const char **np,
                      int64_t *vals, int cap, fe_error *err)
{
    ds->n = 0;
    ds->names = np;
    ds->values = vals;
    if (!spec)
        return FE_OK;
    const char *s = spec;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        char *num_end;
        if (!eq || eq == s || (size_t)(eq - s) >= 128 || ds->n >= cap)
            return fe_error_set(err, FE_EINPUT, "dims '%s': expected NAME=VALUE[,NAME=VALUE...]", spec);
        memcpy(names[ds->n], s, (size_t)(eq - s));
        names[ds->n][eq - s] = '\0';
        long long v = strtoll(eq + 1, &num_end, 10);
        if (num_end != s + len || v < 1)
            return fe_error_set(err, FE_EINPUT, "dims '%s': %s needs a positive integer", spec,
                                names[ds->n]);
        np[ds->n] = names[ds->n];
        vals[ds->n++] = v;
        s += len + (end ? 1 : 0);
    }
    return FE_OK;
}

/* One model from a file (path) or a buffer (json, len; label names it). */
static fe_model *load(const char *path, const char *json, size_t len, const char *label,
                      const char *dims, fe_error *err)
{
    char names[32][128];
    const char *np[32];
    int64_t vals[32];
    fe_dimset ds;
    if (parse_dims(dims, &ds, names, np, vals, 32, err))
        return NULL;
    return fe_api_model(path ? fe_load_model_file(path, &ds, err)
                             : fe_load_model_buffer(json, len, label, &ds, err), err);
}

fe_model *fe_api_model(fe_graph *g, fe_error *err)
{
    if (!g)
        return NULL;
    fe_model *m = malloc(sizeof *m);
    if (!m) {
        fe_graph_free(g);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    m->g = g;
    return m;
}

fe_model *fe_model_load_file(const char *path, const char *dims, fe_error *err)
{
    return load(path, NULL, 0, NULL, dims, err);
}

fe_model *fe_model_load_buffer(const char *json, size_t len, const char *label, const char *dims,
                               fe_error *err)
{
    return load(NULL, json, len, label, dims, err);
}

void fe_model_free(fe_model *m)
{
    if (!m)
        return;
    fe_graph_free(m->g);
    free(m);
}

const char *fe_model_name(const fe_model *m)
{
    return m->g->name;
}

int fe_model_nodes(const fe_model *m)
{
    return m->g->nnodes;
}

fe_model *fe_model_load_dims(const char *path, int n, const char *const *names,
                             const int64_t *values, fe_error *err)
{
    if (fe_api_null(path, "fe_model_load_dims", "the path", err))
        return NULL;
    if (n < 0 || (n > 0 && (!names || !values))) {
        fe_error_set(err, FE_EINPUT, "fe_model_load_dims: %d dims without names and values", n);
        return NULL;
    }
    fe_dimset ds = {n, names, values};
    return fe_api_model(fe_load_model_file(path, &ds, err), err);
}

int64_t fe_model_dim(const fe_model *m, const char *name)
{
    if (!m || !name)
        return 0;
    int32_t d = fe_graph_find_dim(m->g, name);
    return d >= 0 ? m->g->dims[d].value : 0;
}

const char *fe_model_file(const fe_model *m)
{
    return m ? m->g->file : NULL;
}

const fe_graph *fe_api_graph(const fe_model *m)
{
    return m->g;
}
