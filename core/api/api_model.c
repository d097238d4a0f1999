/* api_model.c: a model's summary (fuseeng check), the op registry (fuseeng
 * ops) and a model's unfused plan. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "save.h"
#include "ops.h"
#include "units.h"

typedef struct summary {
    int64_t ops[FE_NOPS], patterns[FE_NPATTERN];
    int64_t kinds[3], kind_bytes[3];
    int64_t flops;
} summary;

static void summarise(const fe_graph *g, summary *s)
{
    memset(s, 0, sizeof *s);
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        s->ops[n->op]++;
        s->patterns[n->pattern]++;
        s->flops += n->flops;
    }
    for (int32_t t = 0; t < g->ntensors; t++) {
        const fe_tensor *ts = fe_graph_tensor(g, t);
        s->kinds[ts->kind]++;
        s->kind_bytes[ts->kind] += ts->bytes;
    }
}

/* Op ids by descending count, then name: the histogram's order. */
static int by_count_desc(const void *a, const void *b, void *ctx)
{
    const int64_t *ops = ctx;
    int x = *(const int *)a, y = *(const int *)b;
    if (ops[x] != ops[y])
        return ops[x] < ops[y] ? 1 : -1;
    return strcmp(fe_op_get(x)->name, fe_op_get(y)->name);
}

static void sorted_ops(const summary *s, int *order)
{
    for (int i = 0; i < FE_NOPS; i++)
        order[i] = i;
    qsort_r(order, FE_NOPS, sizeof *order, by_count_desc, (void *)s->ops);
}

static void summary_json(const fe_graph *g, const summary *s, FILE *f)
{
    fe_jw w;
    int order[FE_NOPS];
    sorted_ops(s, order);
    fe_jw_init(&w, f, 2);
    fe_jw_obj(&w);
    fe_jw_key(&w, "model");
    fe_jw_str(&w, g->name);
    fe_jw_key(&w, "file");
    fe_jw_str(&w, g->file);
    fe_save_dims(&w, g, 1);
    fe_jw_key(&w, "nodes");
    fe_jw_int(&w, g->nnodes);
    fe_jw_key(&w, "tensors");
    fe_jw_int(&w, g->ntensors);
    fe_jw_key(&w, "outputs");
    fe_jw_int(&w, g->noutputs);
    fe_jw_key(&w, "ops");
    fe_jw_obj_flat(&w);
    for (int i = 0; i < FE_NOPS && s->ops[order[i]]; i++) {
        fe_jw_key(&w, fe_op_get(order[i])->name);
        fe_jw_int(&w, s->ops[order[i]]);
    }
    fe_jw_end(&w);
    fe_jw_key(&w, "patterns");
    fe_jw_obj_flat(&w);
    for (int p = 0; p < FE_NPATTERN; p++) {
        fe_jw_key(&w, fe_pattern_name(p));
        fe_jw_int(&w, s->patterns[p]);
    }
    fe_jw_end(&w);
    fe_jw_key(&w, "flops");
    fe_jw_int(&w, s->flops);
    static const char *const kk[] = {"input", "weight", "activation"};
    for (int k = 0; k < 3; k++) {
        char key[32];
        snprintf(key, sizeof key, "%s_tensors", kk[k]);
        fe_jw_key(&w, key);
        fe_jw_int(&w, s->kinds[k]);
        snprintf(key, sizeof key, "%s_bytes", kk[k]);
        fe_jw_key(&w, key);
        fe_jw_int(&w, s->kind_bytes[k]);
    }
    fe_jw_end(&w);
}

static void summary_text(const fe_graph *g, const summary *s, FILE *f)
{
    char a[32], b[32], c[32];
    int order[FE_NOPS];
    sorted_ops(s, order);
    fprintf(f, "%s: ok\n", g->file);
    fprintf(f, "  model        %s\n", g->name[0] ? g->name : "(unnamed)");
    if (g->ndims) {
        fprintf(f, "  dims        ");
        for (int32_t d = 0; d < g->ndims; d++)
            fprintf(f, " %s=%lld", fe_graph_str(g, g->dims[d].name), (long long)g->dims[d].value);
        fprintf(f, "\n");
    }
    fprintf(f, "  nodes        %d\n", g->nnodes);
    fprintf(f, "  tensors      %d (%lld inputs, %lld weights, %lld activations), %d output%s\n",
            g->ntensors, (long long)s->kinds[FE_INPUT], (long long)s->kinds[FE_WEIGHT],
            (long long)s->kinds[FE_ACTIVATION], g->noutputs, g->noutputs == 1 ? "" : "s");
    fprintf(f, "  ops         ");
    for (int i = 0; i < FE_NOPS && s->ops[order[i]]; i++)
        fprintf(f, "%s %s %lld", i ? "," : "", fe_op_get(order[i])->name,
                (long long)s->ops[order[i]]);
    fprintf(f, "\n  patterns    ");
    for (int p = 0; p < FE_NPATTERN; p++)
        fprintf(f, "%s %s %lld", p ? "," : "", fe_pattern_name(p), (long long)s->patterns[p]);
    fprintf(f, "\n  FLOPs        %s\n", fe_fmt_flops((double)s->flops, a, sizeof a));
    fprintf(f, "  weights      %s\n", fe_fmt_bytes((double)s->kind_bytes[FE_WEIGHT], b, sizeof b));
    fprintf(f, "  inputs       %s\n", fe_fmt_bytes((double)s->kind_bytes[FE_INPUT], c, sizeof c));
    fprintf(f, "  activations  %s\n",
            fe_fmt_bytes((double)s->kind_bytes[FE_ACTIVATION], a, sizeof a));
}

static int write_summary(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    summary s;
    (void)arg, (void)err;
    summarise(obj, &s);
    if (format == FE_FORMAT_JSON)
        summary_json(obj, &s, f);
    else
        summary_text(obj, &s, f);
    return FE_OK;
}

char *fe_model_format(const fe_model *m, int format, fe_error *err)
{
    if (fe_api_null(m, "fe_model_format", "the model", err))
        return NULL;
    format &= FE_FORMAT_MASK;
    if (format != FE_FORMAT_TEXT && format != FE_FORMAT_JSON) {
        fe_error_set(err, FE_EINPUT, "fe_model_format: format %d is neither text nor JSON", format);
        return NULL;
    }
    return fe_api_text(write_summary, fe_api_graph(m), NULL, format, err);
}

/* The registry's table: every op, or only *obj if it is not -1. */
static int write_ops(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    int only = *(const int *)obj;
    (void)arg, (void)format, (void)err;
    fprintf(f, "%-12s %-11s %-7s %5s %4s  %-40s %s\n", "op", "kind", "inputs", "flops", "live",
            "attrs", "description");
    for (int i = 0; i < FE_NOPS; i++) {
        if (only >= 0 && i != only)
            continue;
        const fe_op *o = fe_op_get(i);
        char in[16];
        if (o->max_in == FE_VARIADIC)
            snprintf(in, sizeof in, "%d+", o->min_in);
        else if (o->min_in == o->max_in)
            snprintf(in, sizeof in, "%d", o->min_in);
        else
            snprintf(in, sizeof in, "%d-%d", o->min_in, o->max_in);
        fprintf(f, "%-12s %-11s %-7s %5d %4d  %-40s %s\n", o->name, fe_pattern_name(o->pattern),
                in, o->flops, o->live, o->attrs[0] ? o->attrs : "-", o->desc);
    }
    return FE_OK;
}

char *fe_ops_format(const char *op, fe_error *err)
{
    int only = -1;
    if (op && (only = fe_op_find(op)) < 0) {
        char hint[160];
        fe_error_set(err, FE_EINPUT, "no op '%s'%s; known ops are: %s", op,
                     fe_did_you_mean(op, fe_op_names(), hint, sizeof hint), fe_op_names());
        return NULL;
    }
    return fe_api_text(write_ops, &only, NULL, FE_FORMAT_TEXT, err);
}

fe_plan *fe_model_unfused(const fe_model *m, fe_error *err)
{
    if (fe_api_null(m, "fe_model_unfused", "the model", err))
        return NULL;
    return fe_plan_unfused(fe_api_graph(m), err);
}

int fe_model_check_data(const fe_model *m, const char *weights, const char *inputs,
                        const char *outputs, fe_error *err)
{
    if (fe_api_null(m, "fe_model_check_data", "the model", err))
        return FE_EINPUT;
    fe_df_files d;
    int rc = fe_df_open(&d, fe_api_graph(m), weights, inputs, outputs, err);
    fe_df_close(&d);
    return rc;
}
