/* datacheck.c: a safetensors file matched to a graph's tensors of a role
 * (see datacheck.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datacheck.h"

static const char *const role_name[] = {"weight", "input", "output"};

static int has_role(const fe_graph *g, int32_t t, int role)
{
    const fe_tensor *tt = fe_graph_tensor(g, t);
    if (role == FE_DATA_OUTPUTS)
        return (tt->flags & FE_T_OUTPUT) != 0;
    return tt->producer < 0 && tt->kind == (role == FE_DATA_WEIGHTS ? FE_WEIGHT : FE_INPUT);
}

static const char *model_label(const fe_graph *g)
{
    return g->file ? g->file : g->name && g->name[0] ? g->name : "the model";
}

/* "[B, 3, 224] = [8, 3, 224]" for a shape with dim names, else "[1, 3]". */
static void shape_text(const fe_graph *g, const fe_tensor *tt, char *buf, size_t cap)
{
    const int64_t *d = fe_tensor_shape(g, tt);
    const int32_t *sym = &g->shape_sym[tt->shape_off];
    size_t n = 0;
    int named = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && !named)
            break;
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s[", pass ? " = " : "");
        for (int k = 0; k < tt->rank; k++) {
            const char *sep = k ? ", " : "";
            if (pass == 0 && sym[k] >= 0) {
                named = 1;
                n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%s", sep,
                                      fe_graph_str(g, g->dims[sym[k]].name));
            } else {
                n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%lld", sep,
                                      (long long)d[k]);
            }
        }
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "]");
    }
}

static void file_shape_text(const fe_st_tensor *t, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int k = 0; k < t->rank; k++)
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%lld", k ? ", " : "",
                              (long long)t->shape[k]);
    snprintf(buf + n, n < cap ? cap - n : 0, "]");
}

/* A file tensor the graph has no tensor of this role for. */
static int extra(const fe_graph *g, const fe_st_file *f, const fe_st_tensor *t, int role,
                 fe_error *err)
{
    int32_t id = fe_graph_find_tensor(g, t->name);
    char hint[FE_MAX_NAME + 128] = "";
    if (id >= 0) {
        int other = has_role(g, id, FE_DATA_WEIGHTS) ? FE_DATA_WEIGHTS
                    : has_role(g, id, FE_DATA_INPUTS) ? FE_DATA_INPUTS : -1;
        snprintf(hint, sizeof hint, " ('%s' is %s of the model%s%s%s)", t->name,
                 other < 0 ? "an intermediate tensor" : other ? "an input" : "a weight",
                 other < 0 ? "" : ": ", other < 0 ? "" : role_name[other],
                 other < 0 ? "" : "s come from their own file");
    } else {
        const char **names = malloc(sizeof *names * (size_t)(g->ntensors + 1));
        int n = 0;
        for (int32_t i = 0; names && i < g->ntensors; i++)
            if (has_role(g, i, role))
                names[n++] = fe_tensor_name(g, fe_graph_tensor(g, i));
        const char *near = names ? fe_closest(t->name, names, n) : NULL;
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        free(names);
    }
    return fe_error_set(err, FE_EINPUT, "%s: tensor '%s': %s has no %s of that name%s; the file "
                        "must hold the model's %ss and nothing else", fe_st_path(f), t->name,
                        model_label(g), role_name[role], hint, role_name[role]);
}

/* The file tensor of graph tensor id (both named the same): dtype and shape. */
static int same_type(const fe_graph *g, const fe_st_file *f, const fe_st_tensor *t, int32_t id,
                     int role, fe_error *err)
{
    const fe_tensor *tt = fe_graph_tensor(g, id);
    char want[512], got[256];
    if (t->dtype != tt->dtype)
        return fe_error_set(err, FE_EINPUT, "%s: tensor '%s': dtype %s, but %s's %s '%s' is %s "
                            "(write it as %s)", fe_st_path(f), t->name, t->st_dtype,
                            model_label(g), role_name[role], t->name, fe_dtype_name(tt->dtype),
                            fe_st_dtype_name(tt->dtype));
    int same = t->rank == tt->rank;
    for (int k = 0; same && k < t->rank; k++)
        same = t->shape[k] == fe_tensor_shape(g, tt)[k];
    if (same)
        return FE_OK;
    shape_text(g, tt, want, sizeof want);
    file_shape_text(t, got, sizeof got);
    return fe_error_set(err, FE_EINPUT, "%s: tensor '%s': shape %s, but %s's %s '%s' is %s%s",
                        fe_st_path(f), t->name, got, model_label(g), role_name[role], t->name,
                        want, strchr(want, '=') ? " at the model's dims (set them with --dim)" : "");
}

/* The weights stamp (formats.md): a model written by `fuseeng import`
 * records the one its weights file carries; a weights file that carries
 * another comes from another import (one killed between writing the two
 * files leaves the new weights beside the old model). A file without a
 * stamp (weights made elsewhere) is matched by its tensors alone. */
static int same_stamp(const fe_graph *g, const fe_st_file *f, fe_error *err)
{
    const char *theirs = fe_st_meta(f, FE_WEIGHTS_STAMP_KEY);
    if (!g->weights_stamp || !theirs || strcmp(g->weights_stamp, theirs) == 0)
        return FE_OK;
    return fe_error_set(err, FE_EINPUT, "%s: these weights were written by another import than "
                        "%s's (weights stamp %.40s, the model's is %.40s): an import stopped "
                        "between writing its two files, or the files come from two imports; "
                        "import the model again", fe_st_path(f), model_label(g), theirs,
                        g->weights_stamp);
}

int fe_datacheck(const fe_graph *g, const fe_st_file *f, int role, fe_error *err)
{
    if (role == FE_DATA_WEIGHTS && same_stamp(g, f, err))
        return FE_EINPUT;
    for (int i = 0; i < fe_st_count(f); i++) {
        const fe_st_tensor *t = fe_st_at(f, i);
        int32_t id = fe_graph_find_tensor(g, t->name);
        if (id < 0 || !has_role(g, id, role))
            return extra(g, f, t, role, err);
        if (same_type(g, f, t, id, role, err))
            return FE_EINPUT;
    }
    int32_t first = -1, missing = 0;
    for (int32_t id = 0; id < g->ntensors; id++)
        if (has_role(g, id, role) && !fe_st_find(f, fe_tensor_name(g, fe_graph_tensor(g, id)))) {
            if (first < 0)
                first = id;
            missing++;
        }
    if (first < 0)
        return FE_OK;
    const fe_tensor *tt = fe_graph_tensor(g, first);
    char want[512], more[64] = "";
    shape_text(g, tt, want, sizeof want);
    if (missing > 1)
        snprintf(more, sizeof more, " (%d of its %ss are missing)", missing, role_name[role]);
    return fe_error_set(err, FE_EINPUT, "%s: tensor '%s' is missing: %s has %s %s '%s' (%s %s) "
                        "and the file must hold every %s of the model%s", fe_st_path(f),
                        fe_tensor_name(g, tt), model_label(g), role ? "an" : "a", role_name[role],
                        fe_tensor_name(g, tt), fe_dtype_name(tt->dtype), want, role_name[role],
                        more);
}

