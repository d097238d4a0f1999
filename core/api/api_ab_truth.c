/* api_ab_truth.c: fuseeng ab --against TRUTH.json: each plan held against
 * the partition a real compiler made of the same model (a truth file,
 * docs/formats.md "Truth files", written by scripts/inductor_truth.py or
 * scripts/jax_truth.py): pairwise agreement and the kernels that differ.
 *
 * The nodes compared are those the truth lists in some kernel. A model
 * node it does not list (a view the compiler turned into index math, a
 * node it folded away) is left out of both sides, and counted. A node in
 * several kernels (Inductor recomputes an inlined pointwise producer in
 * each reader) is together with the nodes of each of them.
 *   recall    = pairs together in both / pairs together in some kernel
 *   precision = pairs together in both / pairs the plan puts in one group
 * A truth kernel differs when its nodes are not exactly the compared
 * nodes of one plan group; every difference shows in some kernel that
 * differs (a plan group larger than a kernel leaves that kernel short of
 * it). This file reads the truth files, checks them against the models
 * before anything runs, measures each cell and prints the results in
 * every output of fuseeng ab. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"
#include "graph.h"
#include "plan.h"

#define TRUTH_FORMAT "fuseeng.truth/1"
#define LIST_MAX 16   /* names of a group the text outputs print; JSON gives all */

struct fe_ab_truths {
    int n;
    struct truth {
        char path[1024];
        json_t *doc;
        const char *compiler, *version, *sha256;
    } *t;
    int *of_row;      /* row -> truth index, -1 */
};

struct fe_ab_truthrow {   /* row's facts, printed with it */
    char file[1024], compiler[128];
    int kernels, compared, excluded, several;
};

struct fe_ab_agree {      /* a cell's */
    int64_t truth_pairs, plan_pairs, both;
    int differ, kernels;
    json_t *diffs;        /* [{"kernel", "kind", "nodes": [...], "plan": [[...], ...]}] */
};

/* Check one kernel entry's shape. */
static int check_kernel(const char *path, const json_t *k, size_t i, fe_error *err)
{
    static const char *const keys[] = {"name", "kind", "nodes", "detail", NULL};
    char where[64];
    snprintf(where, sizeof where, "kernels[%zu]", i);
    if (!json_is_object(k))
        return fe_ab_fail(err, path, where, "expected an object {\"name\", \"kind\", \"nodes\"}");
    if (fe_ab_only_keys(k, keys, path, where, err) != FE_OK)
        return FE_EINPUT;
    const char *name = json_string_value(json_object_get(k, "name"));
    const char *kind = json_string_value(json_object_get(k, "kind"));
    const json_t *nodes = json_object_get(k, "nodes"), *d = json_object_get(k, "detail");
    if (!name || !name[0] || !kind || !kind[0])
        return fe_ab_fail(err, path, where, "\"name\" and \"kind\" must be non-empty strings");
    if (d && !json_is_string(d))
        return fe_ab_fail(err, path, where, "\"detail\" must be a string");
    if (!json_is_array(nodes))
        return fe_ab_fail(err, path, where, "\"nodes\" must be an array of node names");
    for (size_t j = 0; j < json_array_size(nodes); j++) {
        const char *s = json_string_value(json_array_get(nodes, j));
        snprintf(where, sizeof where, "kernels[%zu].nodes[%zu]", i, j);
        if (!s || !s[0])
            return fe_ab_fail(err, path, where, "expected a node name (a non-empty string)");
        for (size_t q = 0; q < j; q++)
            if (strcmp(s, json_string_value(json_array_get(nodes, q))) == 0)
                return fe_ab_fail(err, path, where, "node '%s' twice in one kernel", s);
    }
    return FE_OK;
}

/* Read and check truth file path into t. */
static int read_truth(const char *path, struct truth *t, fe_error *err)
{
    static const char *const top[] = {"format", "compiler", "model", "kernels", "device",
                                      "command", NULL};
    static const char *const two[] = {"name", "version", NULL};
    static const char *const model[] = {"file", "sha256", NULL};
    json_error_t je;
    snprintf(t->path, sizeof t->path, "%s", path);
    if (!(t->doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je)))
        return fe_error_set(err, FE_EINPUT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    const json_t *d = t->doc, *c = json_object_get(d, "compiler"), *m = json_object_get(d, "model");
    const json_t *ks = json_object_get(d, "kernels");
    const char *fmt = json_string_value(json_object_get(d, "format"));
    if (!json_is_object(d))
        return fe_ab_fail(err, path, "top level", "expected an object");
    if (!fmt || strcmp(fmt, TRUTH_FORMAT) != 0)
        return fe_ab_fail(err, path, "format", "expected \"" TRUTH_FORMAT "\" (a truth file: "
                          "docs/formats.md)");
    if (fe_ab_only_keys(d, top, path, "top level", err) != FE_OK)
        return FE_EINPUT;
    if (!json_is_object(c))
        return fe_ab_fail(err, path, "compiler", "expected {\"name\": \"inductor\", \"version\": "
                          "\"2.11.0\"}");
    if (fe_ab_only_keys(c, two, path, "compiler", err) != FE_OK)
        return FE_EINPUT;
    t->compiler = json_string_value(json_object_get(c, "name"));
    t->version = json_string_value(json_object_get(c, "version"));
    if (!t->compiler || !t->compiler[0] || !t->version)
        return fe_ab_fail(err, path, "compiler", "\"name\" (non-empty) and \"version\" must be strings");
    if (!json_is_object(m))
        return fe_ab_fail(err, path, "model", "expected {\"file\": NAME, \"sha256\": HEX} of the "
                          "model file it was made with");
    if (fe_ab_only_keys(m, model, path, "model", err) != FE_OK)
        return FE_EINPUT;
    t->sha256 = json_string_value(json_object_get(m, "sha256"));
    if (!json_is_string(json_object_get(m, "file")) || !t->sha256)
        return fe_ab_fail(err, path, "model", "\"file\" and \"sha256\" must be strings");
    if (strlen(t->sha256) != 64 || strspn(t->sha256, "0123456789abcdef") != 64)
        return fe_ab_fail(err, path, "model.sha256", "'%s' is not 64 lowercase hex digits", t->sha256);
    if (!json_is_array(ks))
        return fe_ab_fail(err, path, "kernels", "expected an array of kernels");
    for (size_t i = 0; i < json_array_size(ks); i++)
        if (check_kernel(path, json_array_get(ks, i), i, err) != FE_OK)
            return FE_EINPUT;
    return FE_OK;
}

/* Every node name of t in graph g of model file mpath. */
static int check_names(const struct truth *t, const fe_graph *g, const char *mpath, fe_error *err)
{
    const json_t *ks = json_object_get(t->doc, "kernels");
    for (size_t i = 0; i < json_array_size(ks); i++) {
        const json_t *nodes = json_object_get(json_array_get(ks, i), "nodes");
        for (size_t j = 0; j < json_array_size(nodes); j++) {
            const char *s = json_string_value(json_array_get(nodes, j));
            if (fe_graph_find_node(g, s) < 0) {
                char where[64];
                snprintf(where, sizeof where, "kernels[%zu].nodes[%zu]", i, j);
                return fe_error_set(err, FE_EINPUT, "%s: %s: node '%s' is not in the model %s "
                                    "(write the truth and the model from one trace)", t->path,
                                    where, s, mpath);
            }
        }
    }
    return FE_OK;
}

void fe_ab_truths_free(fe_ab_truths *ts)
{
    if (!ts)
        return;
    for (int i = 0; i < ts->n; i++)
        json_decref(ts->t[i].doc);
    free(ts->t);
    free(ts->of_row);
    free(ts);
}

fe_ab_truths *fe_ab_truths_open(const fe_ab_suite *s, int n, const char *const *paths, fe_error *err)
{
    fe_ab_truths *ts = calloc(1, sizeof *ts);
    if (!ts || !(ts->t = calloc((size_t)n, sizeof *ts->t)) ||
        !(ts->of_row = malloc((size_t)(s->nrows ? s->nrows : 1) * sizeof *ts->of_row))) {
        fe_ab_truths_free(ts);
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    int rc = FE_OK;
    for (; ts->n < n && rc == FE_OK; ts->n++)
        rc = read_truth(paths[ts->n], &ts->t[ts->n], err);
    char (*sha)[65] = rc == FE_OK ? calloc((size_t)(s->nrows ? s->nrows : 1), sizeof *sha) : NULL;
    if (rc == FE_OK && !sha)
        rc = fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int r = 0; rc == FE_OK && r < s->nrows; r++) {
        fe_prov_file_sha256(s->rows[r].path, sha[r]);
        ts->of_row[r] = -1;
    }
    for (int i = 0; rc == FE_OK && i < ts->n; i++) {
        const struct truth *t = &ts->t[i];
        int first = -1;
        for (int r = 0; r < s->nrows; r++) {
            if (strcmp(sha[r], t->sha256) != 0)
                continue;
            if (ts->of_row[r] >= 0) {
                rc = fe_error_set(err, FE_EINPUT, "%s and %s: two truth files for one model (%s); "
                                  "give one", ts->t[ts->of_row[r]].path, t->path, s->rows[r].path);
                break;
            }
            ts->of_row[r] = i;
            first = first < 0 ? r : first;
        }
        if (rc == FE_OK && first < 0) {
            const char *mf = json_string_value(json_object_get(json_object_get(t->doc, "model"), "file"));
            rc = fe_error_set(err, FE_EINPUT, "%s: model.sha256: %.12s... is the hash of none of "
                              "the models compared (it was made with '%s'; give that file, or "
                              "write the truth again from the model you compare)", t->path,
                              t->sha256, mf);
        }
        if (rc == FE_OK) {   /* names, on the first row's model (dims rename no node) */
            const fe_ab_row *row = &s->rows[first];
            const char *names[FE_AB_MAXDIMS];
            for (int k = 0; k < row->ndims; k++)
                names[k] = row->dim_names[k];
            fe_model *m = fe_model_load_dims(row->path, row->ndims, names, row->dim_values, err);
            rc = m ? check_names(t, fe_api_graph(m), row->path, err) : err ? err->code : FE_EINPUT;
            fe_model_free(m);
        }
    }
    free(sha);
    if (rc != FE_OK) {
        fe_ab_truths_free(ts);
        return NULL;
    }
    return ts;
}

/* ---- the measure ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t pairs(int64_t n)
{
    return n * (n - 1) / 2;
}

/* A JSON array of the names of nodes ids[0..n). */
static json_t *names_json(const fe_graph *g, const int32_t *ids, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(fe_node_name(g, &g->nodes[ids[i]]))) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* Truth kernel k's differing entry: its nodes and the plan's groups they
 * fall in, each with its compared nodes in node order. */
static json_t *diff_entry(const json_t *k, const fe_graph *g, const fe_plan *p, const int32_t *ids,
                          int n, const char *in_u, int32_t *scratch)
{
    json_t *e = json_object(), *plan = json_array();
    int ok = e && plan && json_object_set_new(e, "kernel", json_copy(json_object_get(k, "name"))) == 0 &&
             json_object_set_new(e, "kind", json_copy(json_object_get(k, "kind"))) == 0 &&
             json_object_set_new(e, "nodes", names_json(g, ids, n)) == 0;
    for (int i = 0; ok && i < n; i++) {
        int32_t grp = p->group_of[ids[i]];
        int seen = 0;
        for (int q = 0; q < i && !seen; q++)
            seen = p->group_of[ids[q]] == grp;
        if (seen)
            continue;
        const fe_group *gr = &p->groups[grp];
        int m = 0;
        for (int32_t j = 0; j < gr->n; j++)
            if (in_u[p->members[gr->off + j]])
                scratch[m++] = p->members[gr->off + j];
        ok = json_array_append_new(plan, names_json(g, scratch, m)) == 0;
    }
    if (ok && json_object_set(e, "plan", plan) == 0) {
        json_decref(plan);
        return e;
    }
    json_decref(plan);
    json_decref(e);
    return NULL;
}

/* Plan p of graph g against truth t into a (a->diffs is new). */
static int agree(const struct truth *t, const fe_graph *g, const fe_plan *p, struct fe_ab_agree *a)
{
    const json_t *ks = json_object_get(t->doc, "kernels");
    int nk = (int)json_array_size(ks), nn = g->nnodes, rc = FE_ENOMEM;
    int *times = calloc((size_t)nn + 1, sizeof *times), *gcount = calloc((size_t)p->ngroups + 1, sizeof *gcount);
    char *in_u = calloc((size_t)nn + 1, 1);
    int32_t *ids = malloc(((size_t)nn + 1) * sizeof *ids), *scratch = malloc(((size_t)nn + 1) * sizeof *scratch);
    int64_t *keys = NULL, nkeys = 0, cap = 0;
    a->diffs = json_array();
    if (!times || !gcount || !in_u || !ids || !scratch || !a->diffs)
        goto out;
    for (int i = 0; i < nk; i++) {
        const json_t *nodes = json_object_get(json_array_get(ks, i), "nodes");
        for (size_t j = 0; j < json_array_size(nodes); j++) {
            int32_t id = fe_graph_find_node(g, json_string_value(json_array_get(nodes, j)));
            times[id]++;
            in_u[id] = 1;
        }
    }
    for (int v = 0; v < nn; v++)
        gcount[p->group_of[v]] += in_u[v];
    for (int32_t q = 0; q < p->ngroups; q++)
        a->plan_pairs += pairs(gcount[q]);
    a->kernels = nk;
    for (int i = 0; i < nk; i++) {
        const json_t *k = json_array_get(ks, i), *nodes = json_object_get(k, "nodes");
        int n = (int)json_array_size(nodes), multi = 0;
        for (int j = 0; j < n; j++)
            ids[j] = fe_graph_find_node(g, json_string_value(json_array_get(nodes, j)));
        /* Pairs with a node of this kernel only are this kernel's alone:
         * counted by group; pairs of two nodes in several kernels may
         * repeat, so they are listed and made unique below. */
        for (int j = 0; j < n; j++) {
            if (times[ids[j]] > 1) {
                multi++;
                for (int q = 0; q < j; q++) {
                    if (times[ids[q]] < 2)
                        continue;
                    if (nkeys == cap) {
                        int64_t *nk2 = realloc(keys, (size_t)(cap = cap ? cap * 2 : 256) * sizeof *keys);
                        if (!nk2)
                            goto out;
                        keys = nk2;
                    }
                    int32_t lo = ids[q] < ids[j] ? ids[q] : ids[j], hi = ids[q] ^ ids[j] ^ lo;
                    keys[nkeys++] = (int64_t)lo << 32 | hi;
                }
            }
        }
        a->truth_pairs += pairs(n) - pairs(multi);
        int32_t first = n ? p->group_of[ids[0]] : -1;
        int one = 1;
        for (int j = 0; j < n; j++) {   /* per group: all its pairs minus the multi-multi ones */
            int32_t grp = p->group_of[ids[j]];
            one &= grp == first;
            int seen = 0, c = 0, cm = 0;
            for (int q = 0; q < j && !seen; q++)
                seen = p->group_of[ids[q]] == grp;
            if (seen)
                continue;
            for (int q = j; q < n; q++)
                if (p->group_of[ids[q]] == grp) {
                    c++;
                    cm += times[ids[q]] > 1;
                }
            a->both += pairs(c) - pairs(cm);
        }
        if (n && !(one && gcount[first] == n)) {
            json_t *e = diff_entry(k, g, p, ids, n, in_u, scratch);
            if (!e || json_array_append_new(a->diffs, e) != 0)
                goto out;
            a->differ++;
        }
    }
    if (nkeys)   /* keys is NULL when no node is in several kernels */
        qsort(keys, (size_t)nkeys, sizeof *keys, cmp_i64);
    for (int64_t i = 0; i < nkeys; i++) {
        if (i && keys[i] == keys[i - 1])
            continue;
        a->truth_pairs++;
        a->both += p->group_of[keys[i] >> 32] == p->group_of[keys[i] & 0xffffffff];
    }
    rc = FE_OK;
out:
    free(times);
    free(gcount);
    free(in_u);
    free(ids);
    free(scratch);
    free(keys);
    return rc;
}

int fe_ab_truth_row(const fe_ab_truths *ts, int r, const fe_graph *g, fe_plan *const *plans, fe_ab *ab)
{
    if (!ts || ts->of_row[r] < 0)
        return FE_OK;
    const struct truth *t = &ts->t[ts->of_row[r]];
    struct fe_ab_truthrow *tr = calloc(1, sizeof *tr);
    int *times = calloc((size_t)g->nnodes + 1, sizeof *times);
    if (!tr || !times) {
        free(tr);
        free(times);
        return FE_ENOMEM;
    }
    ab->rows[r].truth = tr;
    snprintf(tr->file, sizeof tr->file, "%s", t->path);
    snprintf(tr->compiler, sizeof tr->compiler, "%s %s", t->compiler, t->version);
    const json_t *ks = json_object_get(t->doc, "kernels");
    tr->kernels = (int)json_array_size(ks);
    for (size_t i = 0; i < json_array_size(ks); i++) {
        const json_t *nodes = json_object_get(json_array_get(ks, i), "nodes");
        for (size_t j = 0; j < json_array_size(nodes); j++)
            times[fe_graph_find_node(g, json_string_value(json_array_get(nodes, j)))]++;
    }
    for (int v = 0; v < g->nnodes; v++) {
        tr->compared += times[v] > 0;
        tr->several += times[v] > 1;
    }
    tr->excluded = g->nnodes - tr->compared;
    free(times);
    for (int c = 0; c < ab->ncols; c++) {
        fe_ab_cell *x = &ab->cells[r * ab->ncols + c];
        if (!plans[c] || x->status != FE_AB_OK)
            continue;
        if (!(x->agree = calloc(1, sizeof *x->agree)) || agree(t, g, plans[c], x->agree) != FE_OK)
            return FE_ENOMEM;
    }
    return FE_OK;
}

void fe_ab_truth_free(fe_ab *ab)
{
    for (int r = 0; ab->rows && r < ab->nrows; r++)
        free(ab->rows[r].truth);
    for (int i = 0; ab->cells && i < ab->nrows * ab->ncols; i++)
        if (ab->cells[i].agree) {
            json_decref(ab->cells[i].agree->diffs);
            free(ab->cells[i].agree);
        }
}

/* ---- the figures ---- */

static double ratio(int64_t num, int64_t den)
{
    return den > 0 ? (double)num / (double)den : NAN;
}

double fe_ab_recall(const fe_ab *ab, int r, int c)
{
    const struct fe_ab_agree *a = ab->cells[r * ab->ncols + c].agree;
    return a ? ratio(a->both, a->truth_pairs) : NAN;
}

double fe_ab_precision(const fe_ab *ab, int r, int c)
{
    const struct fe_ab_agree *a = ab->cells[r * ab->ncols + c].agree;
    return a ? ratio(a->both, a->plan_pairs) : NAN;
}

/* Column c's mean and least recall (which = 0) or precision over the rows
 * that have both; n of them. */
static void col_stat(const fe_ab *ab, int c, int which, double *mean, double *min, int *n)
{
    double s = 0;
    *min = NAN;
    *n = 0;
    for (int r = 0; r < ab->nrows; r++) {
        double v = which ? fe_ab_precision(ab, r, c) : fe_ab_recall(ab, r, c);
        if (!ab->rows[r].ran || isnan(v))
            continue;
        s += v;
        *min = *n == 0 || v < *min ? v : *min;
        ++*n;
    }
    *mean = *n ? s / *n : NAN;
}

static void num3(double v, char *buf, size_t size)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", v);
}

/* Cell (r, c)'s agreement, its recall and precision as text in rc and
 * pr; NULL (and nothing written) when the cell has none. */
static const struct fe_ab_agree *cell_text(const fe_ab *ab, int r, int c, char rc[16], char pr[16])
{
    const struct fe_ab_agree *a = ab->cells[r * ab->ncols + c].agree;
    if (a) {
        num3(fe_ab_recall(ab, r, c), rc, 16);
        num3(fe_ab_precision(ab, r, c), pr, 16);
    }
    return a;
}

/* Column c's mean and least recall and precision over the rows, as text
 * in b ("-" where none); returns the rows counted. */
static int col_text(const fe_ab *ab, int c, char b[4][16])
{
    double v[4];
    int n, np;
    col_stat(ab, c, 0, &v[0], &v[1], &n);
    col_stat(ab, c, 1, &v[2], &v[3], &np);
    for (int k = 0; k < 4; k++)
        num3(v[k], b[k], 16);
    return n > np ? n : np;
}

/* ---- outputs ---- */

/* A diff entry's names, each group braced: "{a, b, c}", at most LIST_MAX
 * names a group; esc writes text escaped for the format. */
typedef void (*esc_fn)(FILE *f, const char *s);

static void plain(FILE *f, const char *s)
{
    fputs(s, f);
}

static void group_text(FILE *f, const json_t *names, esc_fn esc)
{
    size_t n = json_array_size(names);
    fputc('{', f);
    for (size_t i = 0; i < n && i < LIST_MAX; i++) {
        fputs(i ? ", " : "", f);
        esc(f, json_string_value(json_array_get(names, i)));
    }
    if (n > LIST_MAX)
        fprintf(f, ", ... %zu more", n - LIST_MAX);
    fputc('}', f);
}

static void diff_line(FILE *f, const json_t *e, esc_fn esc)
{
    esc(f, json_string_value(json_object_get(e, "kernel")));
    fputs(" (", f);
    esc(f, json_string_value(json_object_get(e, "kind")));
    fputs(") ", f);
    group_text(f, json_object_get(e, "nodes"), esc);
    esc(f, " -> plan");
    const json_t *plan = json_object_get(e, "plan");
    for (size_t i = 0; i < json_array_size(plan); i++) {
        fputc(' ', f);
        group_text(f, json_array_get(plan, i), esc);
    }
}

void fe_ab_truth_note(const fe_ab *ab, int r, char *buf, size_t size)
{
    const struct fe_ab_truthrow *t = ab->rows[r].truth;
    if (!t)
        snprintf(buf, size, "no truth file for this model");
    else
        snprintf(buf, size, "against %s (%s): %d kernels, %d nodes compared; left out: %d model "
                 "nodes in no kernel; in several kernels: %d", t->compiler, t->file, t->kernels,
                 t->compared, t->excluded, t->several);
}

void fe_ab_truth_text(const fe_ab *ab, int r, int name_width, FILE *f)
{
    char note[1400];
    if (!ab->against)
        return;
    fe_ab_truth_note(ab, r, note, sizeof note);
    fprintf(f, "  %s\n", note);
    if (!ab->rows[r].truth)
        return;
    fprintf(f, "    %-*s %7s %9s %14s\n", name_width, "policy", "recall", "precision", "kernels differ");
    for (int c = 0; c < ab->ncols; c++) {
        char rc[16], pr[16];
        const struct fe_ab_agree *a = cell_text(ab, r, c, rc, pr);
        if (!a)
            continue;
        fprintf(f, "    %-*s %7s %9s %7d of %d\n", name_width, ab->cnames[c], rc, pr, a->differ,
                a->kernels);
    }
    for (int c = 0; c < ab->ncols; c++) {
        const struct fe_ab_agree *a = ab->cells[r * ab->ncols + c].agree;
        if (!a || !a->differ)
            continue;
        fprintf(f, "  %s: the kernels that differ\n", ab->cnames[c]);
        for (size_t i = 0; i < json_array_size(a->diffs); i++) {
            fputs("    ", f);
            diff_line(f, json_array_get(a->diffs, i), plain);
            fputc('\n', f);
        }
    }
}

void fe_ab_truth_text_summary(const fe_ab *ab, int name_width, FILE *f)
{
    if (!ab->against)
        return;
    fprintf(f, "\nagreement with the compilers' kernels (pairs of nodes; mean and least over "
            "the rows with a truth file)\n");
    fprintf(f, "  %-*s %5s %7s %7s %9s %9s\n", name_width, "policy", "rows", "recall", "least",
            "precision", "least");
    for (int c = 0; c < ab->ncols; c++) {
        char b[4][16];
        int n = col_text(ab, c, b);
        fprintf(f, "  %-*s %5d %7s %7s %9s %9s\n", name_width, ab->cnames[c], n,
                b[0], b[1], b[2], b[3]);
    }
}

static void jnum_or_null(fe_jw *w, const char *key, double v)
{
    fe_jw_key(w, key);
    if (isnan(v))
        fe_jw_null(w);
    else
        fe_jw_num(w, v);
}

void fe_ab_truth_json_row(const fe_ab *ab, int r, fe_jw *w)
{
    const struct fe_ab_truthrow *t = ab->rows[r].truth;
    if (!ab->against)
        return;
    fe_jw_key(w, "truth");
    if (!t) {
        fe_jw_null(w);
        return;
    }
    fe_jw_obj_flat(w);
    fe_ab_jstr(w, "file", t->file);
    fe_ab_jstr(w, "compiler", t->compiler);
    fe_ab_jint(w, "kernels", t->kernels);
    fe_ab_jint(w, "nodes_compared", t->compared);
    fe_ab_jint(w, "nodes_left_out", t->excluded);
    fe_ab_jint(w, "nodes_in_several_kernels", t->several);
    fe_jw_end(w);
}

static void names_jw(fe_jw *w, const json_t *names)
{
    fe_jw_arr_flat(w);
    for (size_t i = 0; i < json_array_size(names); i++)
        fe_jw_str(w, json_string_value(json_array_get(names, i)));
    fe_jw_end(w);
}

void fe_ab_truth_json_cell(const fe_ab *ab, int r, int c, fe_jw *w)
{
    const struct fe_ab_agree *a = ab->cells[r * ab->ncols + c].agree;
    if (!a)
        return;
    fe_jw_key(w, "truth");
    fe_jw_obj(w);
    jnum_or_null(w, "recall", fe_ab_recall(ab, r, c));
    jnum_or_null(w, "precision", fe_ab_precision(ab, r, c));
    fe_ab_jint(w, "truth_pairs", a->truth_pairs);
    fe_ab_jint(w, "plan_pairs", a->plan_pairs);
    fe_ab_jint(w, "both_pairs", a->both);
    fe_ab_jint(w, "kernels_differ", a->differ);
    fe_jw_key(w, "differ");
    fe_jw_arr(w);
    for (size_t i = 0; i < json_array_size(a->diffs); i++) {
        const json_t *e = json_array_get(a->diffs, i), *plan = json_object_get(e, "plan");
        fe_jw_obj_flat(w);
        fe_ab_jstr(w, "kernel", json_string_value(json_object_get(e, "kernel")));
        fe_ab_jstr(w, "kind", json_string_value(json_object_get(e, "kind")));
        fe_jw_key(w, "nodes");
        names_jw(w, json_object_get(e, "nodes"));
        fe_jw_key(w, "plan");
        fe_jw_arr_flat(w);
        for (size_t j = 0; j < json_array_size(plan); j++)
            names_jw(w, json_array_get(plan, j));
        fe_jw_end(w);
        fe_jw_end(w);
    }
    fe_jw_end(w);
    fe_jw_end(w);
}

void fe_ab_truth_json_summary(const fe_ab *ab, int c, fe_jw *w)
{
    double rm, rl, pm, pl;
    int n, np;
    if (!ab->against)
        return;
    col_stat(ab, c, 0, &rm, &rl, &n);
    col_stat(ab, c, 1, &pm, &pl, &np);
    jnum_or_null(w, "recall_mean", rm);
    jnum_or_null(w, "recall_least", rl);
    jnum_or_null(w, "precision_mean", pm);
    jnum_or_null(w, "precision_least", pl);
}

/* CSV: recall, precision, kernels_differ and the differing kernels in one
 * field ("K (kind) {a, b} -> plan {a} {b}; ..."), empty without a truth. */
static void csv_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '"' ? '\'' : *s == '\n' ? ' ' : *s, f);
}

void fe_ab_truth_csv(const fe_ab *ab, int r, int c, FILE *f)
{
    char rc[16], pr[16];
    if (!ab->against)
        return;
    const struct fe_ab_agree *a = cell_text(ab, r, c, rc, pr);
    if (!a) {
        fputs(",,,,", f);
        return;
    }
    fprintf(f, ",%s,%s,%d,\"", rc[0] == '-' ? "" : rc, pr[0] == '-' ? "" : pr, a->differ);
    for (size_t i = 0; i < json_array_size(a->diffs); i++) {
        fputs(i ? "; " : "", f);
        diff_line(f, json_array_get(a->diffs, i), csv_text);
    }
    fputc('"', f);
}

static void md_esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

void fe_ab_truth_md(const fe_ab *ab, FILE *f)
{
    if (!ab->against)
        return;
    fputs("\n| model | policy | recall | precision | kernels differ |\n|---|---|---:|---:|---:|\n", f);
    for (int r = 0; r < ab->nrows; r++) {
        char label[600];
        fe_ab_row_label(ab, r, label, sizeof label);
        for (int c = 0; ab->rows[r].ran && c < ab->ncols; c++) {
            char rc[16], pr[16];
            const struct fe_ab_agree *a = cell_text(ab, r, c, rc, pr);
            if (!a)
                continue;
            fputs("| ", f);
            md_esc(f, label);
            fputs(" | ", f);
            md_esc(f, ab->cnames[c]);
            fprintf(f, " | %s | %s | %d of %d |\n", rc, pr, a->differ, a->kernels);
        }
    }
    for (int r = 0; r < ab->nrows; r++) {
        char label[600], note[1400];
        if (!ab->rows[r].ran)
            continue;
        fe_ab_row_label(ab, r, label, sizeof label);
        fe_ab_truth_note(ab, r, note, sizeof note);
        fputs("\n", f);
        md_esc(f, label);
        fputs(": ", f);
        md_esc(f, note);
        fputs("\n", f);
        for (int c = 0; c < ab->ncols; c++) {
            const struct fe_ab_agree *a = ab->cells[r * ab->ncols + c].agree;
            if (!a || !a->differ)
                continue;
            fputs("\n- ", f);
            md_esc(f, ab->cnames[c]);
            fputs(": the kernels that differ\n", f);
            for (size_t i = 0; i < json_array_size(a->diffs); i++) {
                fputs("  - ", f);
                diff_line(f, json_array_get(a->diffs, i), md_esc);
                fputc('\n', f);
            }
        }
    }
    fputs("\n| policy | recall (mean) | recall (least) | precision (mean) | precision (least) |\n"
          "|---|---:|---:|---:|---:|\n", f);
    for (int c = 0; c < ab->ncols; c++) {
        char b[4][16];
        col_text(ab, c, b);
        fputs("| ", f);
        md_esc(f, ab->cnames[c]);
        fprintf(f, " | %s | %s | %s | %s |\n", b[0], b[1], b[2], b[3]);
    }
}

void fe_ab_truth_html(const fe_ab *ab, int r, FILE *f)
{
    char note[1400];
    if (!ab->against)
        return;
    fe_ab_truth_note(ab, r, note, sizeof note);
    fputs("<p class=\"note\">", f);
    fe_ab_xml_text(f, note);
    fputs("</p>\n", f);
    if (!ab->rows[r].truth)
        return;
    fputs("<table><tr><th>policy</th><th>recall</th><th>precision</th><th>kernels differ</th></tr>\n", f);
    for (int c = 0; c < ab->ncols; c++) {
        char rc[16], pr[16];
        const struct fe_ab_agree *a = cell_text(ab, r, c, rc, pr);
        if (!a)
            continue;
        fputs("<tr><td>", f);
        fe_ab_xml_text(f, ab->cnames[c]);
        fprintf(f, "</td><td>%s</td><td>%s</td><td>%d of %d</td></tr>\n", rc, pr, a->differ, a->kernels);
    }
    fputs("</table>\n", f);
    for (int c = 0; c < ab->ncols; c++) {
        const struct fe_ab_agree *a = ab->cells[r * ab->ncols + c].agree;
        if (!a || !a->differ)
            continue;
        fputs("<details><summary>", f);
        fe_ab_xml_text(f, ab->cnames[c]);
        fprintf(f, ": %d kernel%s differ%s from the compiler's</summary><ul>\n", a->differ,
                a->differ == 1 ? "" : "s", a->differ == 1 ? "s" : "");
        for (size_t i = 0; i < json_array_size(a->diffs); i++) {
            fputs("<li>", f);
            diff_line(f, json_array_get(a->diffs, i), fe_ab_xml_text);
            fputs("</li>\n", f);
        }
        fputs("</ul></details>\n", f);
    }
}

void fe_ab_truth_html_summary(const fe_ab *ab, FILE *f)
{
    if (!ab->against)
        return;
    fputs("<h2>Agreement with the compilers' kernels</h2>\n<table><tr><th>policy</th>"
          "<th>recall (mean)</th><th>recall (least)</th><th>precision (mean)</th>"
          "<th>precision (least)</th></tr>\n", f);
    for (int c = 0; c < ab->ncols; c++) {
        char b[4][16];
        col_text(ab, c, b);
        fputs("<tr><td>", f);
        fe_ab_xml_text(f, ab->cnames[c]);
        fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", b[0], b[1], b[2], b[3]);
    }
    fputs("</table>\n", f);
}
