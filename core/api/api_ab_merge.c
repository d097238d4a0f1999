/* api_ab_merge.c: fuseeng ab merge: shard files (fe_ab_format
 * FE_FORMAT_PART) read back into the one result an unsharded run gives.
 *
 * A shard file holds its rows' raw figures (times in seconds, exact to the
 * last bit as fe_jw_num writes them), so every ratio, tally and winner is
 * recomputed from the same doubles as in one run and the JSON report comes
 * out byte for byte the same. Merging refuses anything that would make the
 * union differ from a run: files of another suite (the fingerprint of its
 * rows and policies), another shard count, a shard given twice, a missing
 * shard, a row in the wrong shard or missing from its shard.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api_ab.h"

typedef struct part {
    const char *path;
    json_t *doc;
    int shard, shards, rows_total, measure, nmachines, device;
    const char *suite;
    const json_t *policies, *rows, *faults;
} part;

static int bad(fe_error *err, const char *path, const char *where, const char *msg)
{
    return fe_error_set(err, FE_EINPUT, "%s: %s: %s", path, where, msg);
}

static int get_int(const json_t *o, const char *k, int *v)
{
    const json_t *x = json_object_get(o, k);
    if (!json_is_integer(x))
        return -1;
    *v = (int)json_integer_value(x);
    return 0;
}

static int open_part(const char *path, part *p, fe_error *err)
{
    json_error_t je;
    memset(p, 0, sizeof *p);
    p->path = path;
    if (!(p->doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je)))
        return fe_error_set(err, FE_EINPUT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    const json_t *fmt = json_object_get(p->doc, "format");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "fuseeng.ab-part/1") != 0)
        return bad(err, path, "format", "not a shard file of fuseeng ab (\"fuseeng.ab-part/1\"): "
                   "make one with fuseeng ab ... --shard I/N");
    p->suite = json_string_value(json_object_get(p->doc, "suite"));
    p->policies = json_object_get(p->doc, "policies");
    p->rows = json_object_get(p->doc, "rows");
    p->faults = json_object_get(p->doc, "faults");
    const json_t *m = json_object_get(p->doc, "measure");
    if (!p->suite || get_int(p->doc, "shard", &p->shard) || get_int(p->doc, "shards", &p->shards) ||
        get_int(p->doc, "rows_total", &p->rows_total) || get_int(p->doc, "machines", &p->nmachines) ||
        !json_is_boolean(m) || !json_is_array(p->policies) || json_array_size(p->policies) < 1 ||
        !json_is_array(p->rows) || !json_is_array(p->faults))
        return bad(err, path, "the document", "missing or mistyped suite, shard, shards, "
                   "rows_total, machines, measure, policies, rows or faults");
    p->measure = json_is_true(m);
    const char *on = json_string_value(json_object_get(p->doc, "measured_on"));
    p->device = on && strcmp(on, "cuda") == 0 ? FE_DEVICE_CUDA : FE_DEVICE_CPU;
    if (p->shards < 1 || p->shard < 1 || p->shard > p->shards || p->rows_total < 0 ||
        p->rows_total > 100000)
        return bad(err, path, "shard", "not I/N with 1 <= I <= N, or a bad rows_total");
    return FE_OK;
}

/* Both parts come from one run of one suite. */
static int same_run(const part *a, const part *b, fe_error *err)
{
    if (strcmp(a->suite, b->suite) != 0 || !json_equal((json_t *)a->policies, (json_t *)b->policies) ||
        a->rows_total != b->rows_total)
        return fe_error_set(err, FE_EINPUT, "%s and %s are shards of different suites (suite %s "
                            "and %s): merge the shards of one suite", a->path, b->path, a->suite,
                            b->suite);
    if (a->shards != b->shards || a->measure != b->measure || a->device != b->device)
        return fe_error_set(err, FE_EINPUT, "%s is shard %d/%d%s but %s is shard %d/%d%s: merge "
                            "the shards of one run", a->path, a->shard, a->shards,
                            a->measure ? a->device ? " (measured on the GPU)" : " (measured)" : "",
                            b->path, b->shard, b->shards,
                            b->measure ? b->device ? " (measured on the GPU)" : " (measured)" : "");
    if (a->shard == b->shard)
        return fe_error_set(err, FE_EINPUT, "%s and %s are both shard %d/%d: the shards overlap",
                            a->path, b->path, a->shard, a->shards);
    return FE_OK;
}

static int copy_str(const json_t *o, const char *k, char *dst, size_t size)
{
    const char *s = json_string_value(json_object_get(o, k));
    if (!s)
        return -1;
    snprintf(dst, size, "%s", s);
    return 0;
}

static int get_num(const json_t *o, const char *k, double *v)
{
    const json_t *x = json_object_get(o, k);
    if (!json_is_number(x))
        return -1;
    *v = json_number_value(x);
    return 0;
}

static int get_i64(const json_t *o, const char *k, int64_t *v)
{
    const json_t *x = json_object_get(o, k);
    if (!json_is_integer(x))
        return -1;
    *v = json_integer_value(x);
    return 0;
}

static int read_cell(const json_t *c, fe_ab_cell *x, int measure)
{
    const char *e = json_string_value(json_object_get(c, "error"));
    if (e) {
        x->status = FE_AB_FAILED;
        return (x->error = strdup(e)) ? 0 : -1;
    }
    int64_t kernels, externs, tiled;
    if (get_i64(c, "kernels", &kernels) || get_i64(c, "extern", &externs) ||
        get_i64(c, "tiled_groups", &tiled) ||
        get_num(c, "time_s", &x->fig.time_s) || get_num(c, "plan_s", &x->plan_s) ||
        get_i64(c, "l3_bytes", &x->fig.l3_bytes) || get_i64(c, "l2_peak", &x->fig.l2_peak) ||
        get_i64(c, "mem_peak", &x->fig.mem_peak) || get_i64(c, "spill_bytes", &x->fig.spill_bytes))
        return -1;
    x->fig.kernels = (int)kernels;
    x->fig.extern_calls = (int)externs;
    x->fig.tiled = (int)tiled;
    x->status = FE_AB_OK;
    if (measure && json_object_get(c, "cpu_ms")) {
        const json_t *ci = json_object_get(c, "cpu_ci");
        int64_t reps;
        if (get_num(c, "cpu_ms", &x->cpu_ms) || get_num(c, "cpu_ratio", &x->ratio) ||
            !json_is_array(ci) || json_array_size(ci) != 2 || get_i64(c, "cpu_reps", &reps) ||
            !json_is_boolean(json_object_get(c, "cpu_ok")) || get_num(c, "cpu_max_rel", &x->cpu_max_rel))
            return -1;
        x->lo = json_number_value(json_array_get(ci, 0));
        x->hi = json_number_value(json_array_get(ci, 1));
        x->reps = (int)reps;
        x->cpu_ok = json_is_true(json_object_get(c, "cpu_ok"));
    }
    return 0;
}

static int read_rows(fe_ab *ab, const part *p, fe_error *err)
{
    size_t i;
    json_t *row;
    json_array_foreach(p->rows, i, row) {
        char w[64];
        int idx;
        snprintf(w, sizeof w, "rows[%zu]", i);
        if (get_int(row, "index", &idx) || idx < 0 || idx >= ab->nrows)
            return bad(err, p->path, w, "no index within the suite's rows");
        if (!fe_ab_in_shard(idx, p->shard, p->shards))
            return bad(err, p->path, w, "the row belongs to another shard");
        fe_ab_rowres *rr = &ab->rows[idx];
        if (rr->ran)
            return bad(err, p->path, w, "the row is given twice");
        const json_t *cells = json_object_get(row, "policies");
        if (copy_str(row, "model", rr->model, sizeof rr->model) ||
            copy_str(row, "file", rr->file, sizeof rr->file) ||
            copy_str(row, "dims", rr->dims, sizeof rr->dims) ||
            copy_str(row, "machine", rr->machine, sizeof rr->machine) ||
            copy_str(row, "description", rr->description, sizeof rr->description) ||
            get_num(row, "unfused_ms", &rr->unfused_ms) ||
            (p->measure && get_num(row, "cpu_unfused_ms", &rr->cpu_unfused_ms)) ||
            !json_is_array(cells) || (int)json_array_size(cells) != ab->ncols)
            return bad(err, p->path, w, "missing or mistyped model, file, dims, machine, "
                       "description, unfused_ms or policies (one per policy)");
        if (copy_str(row, "sha256", rr->sha256, sizeof rr->sha256))   /* optional */
            snprintf(rr->sha256, sizeof rr->sha256, "unknown");
        if (copy_str(row, "machine_file", rr->machine_file, sizeof rr->machine_file))
            rr->machine_file[0] = '\0';                             /* optional: built in */
        copy_str(row, "weights", rr->weights, sizeof rr->weights);
        copy_str(row, "inputs", rr->inputs, sizeof rr->inputs);
        rr->ran = 1;
        int opt = fe_ab_optimal_read(row, rr);
        if (opt < 0)
            return bad(err, p->path, w, "a mistyped \"optimal\" (time_s, proven, windows, gap_bound, "
                       "or error)");
        ab->optimal |= opt > 0;
        if (fe_ab_miss_read(ab, row, rr) < 0)
            return bad(err, p->path, w, "a mistyped \"miss\" (pick, best, groups, pick_sim_ms, "
                       "pick_meas_ms, best_sim_ms, best_meas_ms; group, nodes, plan, sim_us, "
                       "meas_us, term)");
        for (int c = 0; c < ab->ncols; c++) {
            const json_t *cell = json_array_get(cells, (size_t)c);
            const char *pol = json_string_value(json_object_get(cell, "policy"));
            snprintf(w, sizeof w, "rows[%zu].policies[%d]", i, c);
            if (!pol || strcmp(pol, ab->cnames[c]) != 0 ||
                read_cell(cell, &ab->cells[idx * ab->ncols + c], p->measure) != 0)
                return bad(err, p->path, w, "not this policy's figures (policy, kernels, extern, "
                           "time_s, plan_s, l3_bytes, l2_peak, mem_peak, spill_bytes, "
                           "tiled_groups)");
        }
    }
    return FE_OK;
}

static int add_faults(fe_ab *ab, const part *p, fe_error *err)
{
    size_t n = json_array_size(p->faults);
    char **nf = realloc(ab->faults, (size_t)(ab->nfaults + (int)n + 1) * sizeof *nf);
    if (!nf)
        return fe_error_set(err, FE_ENOMEM, "out of memory");
    ab->faults = nf;
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(p->faults, i));
        if (!s)
            return bad(err, p->path, "faults", "a fault is a string");
        if (!(nf[ab->nfaults] = strdup(s)))
            return fe_error_set(err, FE_ENOMEM, "out of memory");
        ab->nfaults++;
    }
    return FE_OK;
}

/* The whole result from the checked parts (parts sorted by shard). */
static fe_ab *assemble(part *ps, int n, fe_error *err)
{
    const part *p0 = &ps[0];
    int ncols = (int)json_array_size(p0->policies);
    fe_ab *ab = fe_ab_alloc(p0->rows_total, ncols, err);
    if (!ab)
        return NULL;
    snprintf(ab->id, sizeof ab->id, "%s", p0->suite);
    ab->measure = p0->measure;
    ab->device = p0->device;
    ab->nmachines = p0->nmachines;
    for (int c = 0; c < ncols; c++) {
        const char *s = json_string_value(json_array_get(p0->policies, (size_t)c));
        if (!s) {
            bad(err, p0->path, "policies", "a policy name is a string");
            fe_ab_free(ab);
            return NULL;
        }
        snprintf(ab->cnames[c], sizeof ab->cnames[c], "%s", s);
    }
    for (int i = 0; i < n; i++)
        if (read_rows(ab, &ps[i], err) != FE_OK || add_faults(ab, &ps[i], err) != FE_OK) {
            fe_ab_free(ab);
            return NULL;
        }
    for (int r = 0; r < ab->nrows; r++)
        if (!ab->rows[r].ran) {
            fe_error_set(err, FE_EINPUT, "%s: shard %d/%d lacks row %d of the suite: the file is "
                         "incomplete; run that shard again", ps[r % p0->shards].path,
                         r % p0->shards + 1, p0->shards, r);
            fe_ab_free(ab);
            return NULL;
        }
    return ab;
}

static int by_shard(const void *x, const void *y)
{
    return ((const part *)x)->shard - ((const part *)y)->shard;
}

fe_ab *fe_ab_merge(int n, const char *const *paths, fe_error *err)
{
    if (fe_api_null(paths, "fe_ab_merge", "the paths", err))
        return NULL;
    if (n < 1 || n > 100000) {
        fe_error_set(err, FE_EINPUT, "fe_ab_merge: give 1 to 100000 shard files, not %d", n);
        return NULL;
    }
    part *ps = calloc((size_t)n, sizeof *ps);
    fe_ab *ab = NULL;
    int rc = ps ? FE_OK : fe_error_set(err, FE_ENOMEM, "out of memory");
    for (int i = 0; rc == FE_OK && i < n; i++)
        rc = fe_api_null(paths[i], "fe_ab_merge", "a path", err) ? FE_EINPUT
                                                                 : open_part(paths[i], &ps[i], err);
    for (int i = 1; rc == FE_OK && i < n; i++)
        for (int j = 0; rc == FE_OK && j < i; j++)
            rc = same_run(&ps[j], &ps[i], err);
    if (rc == FE_OK && n != ps[0].shards) {
        qsort(ps, (size_t)n, sizeof *ps, by_shard);
        int missing = 1;
        for (int i = 0; i < n && ps[i].shard == missing; i++)
            missing++;
        rc = fe_error_set(err, FE_EINPUT, "shard %d/%d is missing (%d of %d shard files given, "
                          "the first %s): merge every shard of the run", missing, ps[0].shards, n,
                          ps[0].shards, ps[0].path);
    }
    if (rc == FE_OK) {
        qsort(ps, (size_t)n, sizeof *ps, by_shard);
        ab = assemble(ps, n, err);
        if (ab)   /* the merged report is made here and now; shards' hosts are their own */
            fe_prov_now(&ab->prov, ab->measure && ab->device == FE_DEVICE_CUDA);
    }
    for (int i = 0; ps && i < n; i++)
        json_decref(ps[i].doc);
    free(ps);
    return ab;
}
