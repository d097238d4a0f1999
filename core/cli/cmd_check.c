/* cmd_check.c: `fuseeng check MODEL`: validate a model and summarise it. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonw.h"
#include "ops.h"

static const char usage[] =
    "usage: fuseeng check MODEL [--dim NAME=V]... [--json]\n"
    "\n"
    "Load and validate MODEL (a fuseeng.model/1 file): JSON syntax, tensors, ops,\n"
    "references, cycles, shapes and dtypes. Prints a summary: nodes, tensors, an op\n"
    "histogram, pattern kinds, total FLOPs, weight and activation bytes.\n"
    "\n"
    "  --dim NAME=V   override a symbolic dim's default (repeatable)\n"
    "  --json         print the summary as JSON\n"
    "\n"
    "Exit status 2 and one message naming the file and line (or node/tensor) when\n"
    "the model is invalid.\n";

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

static void print_json(const fe_graph *g, const summary *s)
{
    fe_jw w;
    int order[FE_NOPS];
    sorted_ops(s, order);
    fe_jw_init(&w, stdout, 2);
    fe_jw_obj(&w);
    fe_jw_key(&w, "model");
    fe_jw_str(&w, g->name);
    fe_jw_key(&w, "file");
    fe_jw_str(&w, g->file);
    fe_jw_key(&w, "dims");
    fe_jw_obj_flat(&w);
    for (int32_t d = 0; d < g->ndims; d++) {
        fe_jw_key(&w, fe_graph_str(g, g->dims[d].name));
        fe_jw_int(&w, g->dims[d].value);
    }
    fe_jw_end(&w);
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

static void print_text(const fe_graph *g, const summary *s)
{
    char a[32], b[32], c[32];
    int order[FE_NOPS];
    sorted_ops(s, order);
    printf("%s: ok\n", g->file);
    printf("  model        %s\n", g->name[0] ? g->name : "(unnamed)");
    if (g->ndims) {
        printf("  dims        ");
        for (int32_t d = 0; d < g->ndims; d++)
            printf(" %s=%lld", fe_graph_str(g, g->dims[d].name), (long long)g->dims[d].value);
        printf("\n");
    }
    printf("  nodes        %d\n", g->nnodes);
    printf("  tensors      %d (%lld inputs, %lld weights, %lld activations), %d output%s\n",
           g->ntensors, (long long)s->kinds[FE_INPUT], (long long)s->kinds[FE_WEIGHT],
           (long long)s->kinds[FE_ACTIVATION], g->noutputs, g->noutputs == 1 ? "" : "s");
    printf("  ops         ");
    for (int i = 0; i < FE_NOPS && s->ops[order[i]]; i++)
        printf("%s %s %lld", i ? "," : "", fe_op_get(order[i])->name, (long long)s->ops[order[i]]);
    printf("\n  patterns    ");
    for (int p = 0; p < FE_NPATTERN; p++)
        printf("%s %s %lld", p ? "," : "", fe_pattern_name(p), (long long)s->patterns[p]);
    printf("\n  FLOPs        %s\n", fe_fmt_flops((double)s->flops, a, sizeof a));
    printf("  weights      %s\n", fe_fmt_bytes((double)s->kind_bytes[FE_WEIGHT], b, sizeof b));
    printf("  inputs       %s\n", fe_fmt_bytes((double)s->kind_bytes[FE_INPUT], c, sizeof c));
    printf("  activations  %s\n", fe_fmt_bytes((double)s->kind_bytes[FE_ACTIVATION], a, sizeof a));
}

static int run(int argc, char **argv)
{
    const char *model = NULL, *val;
    fe_cli_dims dims = {0};
    int json = 0;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_opt("check", argc, argv, &i, "--dim", &val);
        if (m == 2)
            return 2;
        if (m == 1) {
            if (fe_cli_add_dim("check", &dims, val))
                return 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("check", "unknown option '%s'", argv[i]);
        } else if (model) {
            return fe_cli_usage("check", "one MODEL at a time (got '%s' and '%s')", model, argv[i]);
        } else {
            model = argv[i];
        }
    }
    if (!model)
        return fe_cli_usage("check", "missing MODEL (a fuseeng.model/1 JSON file)");
    fe_error err = {0};
    fe_graph *g = fe_load_model_file(model, &dims.set, &err);
    if (!g)
        return fe_cli_fail(&err);
    summary s;
    summarise(g, &s);
    if (json)
        print_json(g, &s);
    else
        print_text(g, &s);
    fe_graph_free(g);
    return 0;
}

const fe_cmd fe_cmd_check = {"check", "validate a model file and summarise it", usage, run};
