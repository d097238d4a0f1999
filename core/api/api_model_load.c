/* api_model_load.c: models, the public handle fe_model of fuseeng.h: a
 * graph loaded from a model file or buffer with its dims overridden. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "dimarg.h"
#include "load.h"

/* At most this many dims in a dims text, as on the command line. */
#define MAX_DIMS 64

/* "B=8,S=4096", one NAME=V per comma (fe_dimarg_parse), into a dimset
 * whose names point into args; returns FE_OK or FE_EINPUT. */
static int parse_dims(const char *spec, fe_dimset *ds, fe_dimarg *args, const char **np,
                      int64_t *vals, fe_error *err)
{
    ds->n = 0;
    ds->names = np;
    ds->values = vals;
    for (const char *s = spec; s && *s;) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (ds->n == MAX_DIMS)
            return fe_error_set(err, FE_EINPUT, "dims '%s': at most %d dims", spec, MAX_DIMS);
        if (fe_dimarg_parse(s, len, &args[ds->n], err) != FE_OK) {
            fe_error_prefix(err, "dims '%s': ", spec);
            return FE_EINPUT;
        }
        np[ds->n] = args[ds->n].name;
        vals[ds->n] = args[ds->n].values[0];
        ds->n++;
        s += len + (end ? 1 : 0);
    }
    return FE_OK;
}

/* One model from a file (path) or a buffer (json, len; label names it). */
static fe_model *load(const char *path, const char *json, size_t len, const char *label,
                      const char *dims, fe_error *err)
{
    fe_dimarg args[MAX_DIMS];
    const char *np[MAX_DIMS];
    int64_t vals[MAX_DIMS];
    fe_dimset ds;
    if (parse_dims(dims, &ds, args, np, vals, err))
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
