/* model.c: models, the public handle fe_model of fuseeng.h: a graph
 * loaded from a model file or buffer with its dims overridden. */
#include <stdlib.h>
#include <string.h>

#include "dimarg.h"
#include "load.h"
#include "model.h"

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
    return fe_model_wrap(path ? fe_load_model_file(path, &ds, err)
                              : fe_load_model_buffer(json, len, label, &ds, err), err);
}

fe_model *fe_model_wrap(fe_graph *g, fe_error *err)
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
