/* plan_json.c: fuseeng.plan/1 files: writing plans (with their decision
 * log) and reading them back for `fuseeng sim`.
 *
 *   {"format": "fuseeng.plan/1", "model": ..., "policy": ..., "machine": ...,
 *    "dims": {"B": 1, "S": 2048},
 *    "groups": [{"id", "nodes", "class", "kernel", "split", "extern" | "view",
 *                "reason", "sim": {...}}],
 *    "copies": [{"tensor": "x", "reason": "..."}],
 *    "optimal": {"solver", "windows", "proven", "gap", "whole_graph",
 *                "solves": [{"first", "last", "nodes", "max_group", "cost",
 *                            "candidates", "status", "time_us", "bound_us",
 *                            "gap", "seconds", "applied"}]},
 *    "decisions": [{"group": [...], "fuse": true|false|null, "by", "reason"}
 *                  | {..., "fuse": false, "rejected": true}
 *                  | {"note": ..., "by": ...}],
 *    "summary": {"nodes", "kernels", "extern", "views", "fused_groups", ...,
 *                "sim_us", "l3_bytes", "l2_peak", "mem_peak", "spill_bytes"}}
 *
 * "copies" lists the layout copies (plan.h's fe_copy) and is written only
 * when there are some, as is the summary's "copies" count; "kernels"
 * counts them, since each copy is a generated kernel.
 *
 * "optimal" records the exact searches (ctx:optimal) made while planning,
 * one per window, and is written only when there were some: which windows
 * were proven optimal among their candidates, and where a solver stopped
 * at its time limit, the gap between its plan and the bound it proved.
 * "applied" says whether the plan holds the search's solution (a policy
 * may change what it got). Like "decisions" it says how the plan was made
 * and is not read back.
 *
 * "extern": true and "view": true mark a group launched as a library call
 * or not at all (launch.h); they are written only when true, derived from
 * the op registry, and ignored on reading.
 *
 * The simulated figures are DESIGN.md's plan-file contract: when the plan
 * was simulated they sit directly in "summary" beside "kernels"; a group's
 * "sim" object is there on request. The simulator sits above this layer,
 * so its writers come in through fe_plan_extra's callbacks.
 *
 * Reading is in two steps so that a reader can load the model at the dims
 * and the machine the file records before matching the plan to it: open
 * (parse, format, header), then plan (groups against a graph). The plan's
 * legality is checked like any plan's (fe_plan_from_labels, plan_build.c,
 * builds it through legality.c's merge check): a plan file cannot smuggle
 * an illegal grouping into the simulator or the executor.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "choice.h"
#include "infile.h"
#include "jsonw.h"
#include "launch.h"
#include "milp.h"
#include "plan_build.h"
#include "plan_json.h"
#include "save.h"

static const char *str_or(const fe_plan *p, int32_t id, const char *dflt)
{
    return id >= 0 ? fe_strtab_str(p->strs, id) : dflt;
}

static void write_groups(fe_jw *w, const fe_plan *p, const fe_plan_extra *extra)
{
    const fe_graph *g = p->g;
    fe_jw_key(w, "groups");
    fe_jw_arr(w);
    for (int32_t gi = 0; gi < p->ngroups; gi++) {
        const fe_group *gr = &p->groups[gi];
        fe_jw_obj_flat(w);
        fe_jw_key(w, "id");
        fe_jw_int(w, gi);
        fe_jw_key(w, "nodes");
        fe_jw_arr(w);
        for (int32_t i = 0; i < gr->n; i++)
            fe_jw_str(w, fe_node_name(g, fe_graph_node(g, p->members[gr->off + i])));
        fe_jw_end(w);
        fe_jw_key(w, "class");
        fe_jw_str(w, fe_class_name(gr->klass));
        fe_jw_key(w, "kernel");
        fe_jw_str(w, fe_k_choice_name(gr->kernel));
        fe_jw_key(w, "split");
        fe_jw_int(w, gr->split);
        fe_launch l = fe_group_launch(g, fe_group_nodes(p, gr), gr->n);
        if (l != FE_LAUNCH_KERNEL) {
            fe_jw_key(w, fe_launch_name(l));
            fe_jw_bool(w, 1);
        }
        if (gr->reason >= 0) {
            fe_jw_key(w, "reason");
            fe_jw_str(w, str_or(p, gr->reason, ""));
        }
        if (extra && extra->group) {
            fe_jw_key(w, "sim");
            extra->group(w, gi, extra->ctx);
        }
        fe_jw_end(w);
    }
    fe_jw_end(w);
}

static void write_decisions(fe_jw *w, const fe_plan *p)
{
    const fe_graph *g = p->g;
    fe_jw_key(w, "decisions");
    fe_jw_arr(w);
    for (int32_t d = 0; d < p->ndecisions; d++) {
        const fe_decision *dc = &p->decisions[d];
        fe_jw_obj_flat(w);
        if (dc->verdict == -3) {
            fe_jw_key(w, "note");
            fe_jw_str(w, str_or(p, dc->reason, ""));
            fe_jw_key(w, "by");
            fe_jw_str(w, str_or(p, dc->by, ""));
            fe_jw_end(w);
            continue;
        }
        fe_jw_key(w, "group");
        fe_jw_arr(w);
        for (int32_t i = 0; i < dc->n; i++)
            fe_jw_str(w, fe_node_name(g, fe_graph_node(g, p->dnodes[dc->off + i])));
        fe_jw_end(w);
        fe_jw_key(w, "fuse");
        if (dc->verdict == 1)
            fe_jw_bool(w, 1);
        else if (dc->verdict == -1)
            fe_jw_null(w);
        else
            fe_jw_bool(w, 0);
        if (dc->verdict == -2) {
            fe_jw_key(w, "rejected");
            fe_jw_bool(w, 1);
        }
        fe_jw_key(w, "by");
        fe_jw_str(w, str_or(p, dc->by, ""));
        fe_jw_key(w, "reason");
        fe_jw_str(w, str_or(p, dc->reason, ""));
        fe_jw_end(w);
    }
    fe_jw_end(w);
}

static void write_copies(fe_jw *w, const fe_plan *p)
{
    if (p->ncopies == 0)
        return;
    fe_jw_key(w, "copies");
    fe_jw_arr(w);
    for (int32_t i = 0; i < p->ncopies; i++) {
        fe_jw_obj_flat(w);
        fe_jw_key(w, "tensor");
        fe_jw_str(w, fe_tensor_name(p->g, fe_graph_tensor(p->g, p->copies[i].tensor)));
        if (p->copies[i].reason >= 0) {
            fe_jw_key(w, "reason");
            fe_jw_str(w, str_or(p, p->copies[i].reason, ""));
        }
        fe_jw_end(w);
    }
    fe_jw_end(w);
}

static void write_solves(fe_jw *w, const fe_plan *p)
{
    if (p->nsolves == 0)
        return;
    const fe_graph *g = p->g;
    int32_t proven = 0, covered = 0;
    double worst = 0;
    fe_jw_key(w, "optimal");
    fe_jw_obj(w);
    fe_jw_key(w, "solver");
    fe_jw_str(w, fe_milp_solver());
    fe_jw_key(w, "solves");
    fe_jw_arr(w);
    for (int32_t i = 0; i < p->nsolves; i++) {
        const fe_solve *s = &p->solves[i];
        double gap = s->value > 0 ? (s->value - s->bound) / s->value : 0;
        const int32_t *nodes = p->solve_nodes + s->off;
        int applied = fe_plan_solve_applied(p, i);
        proven += s->optimal && applied;
        covered = s->n == g->nnodes ? 1 : covered;
        worst = gap > worst ? gap : worst;
        fe_jw_obj_flat(w);
        fe_jw_key(w, "first");
        fe_jw_str(w, fe_node_name(g, fe_graph_node(g, nodes[0])));
        fe_jw_key(w, "last");
        fe_jw_str(w, fe_node_name(g, fe_graph_node(g, nodes[s->n - 1])));
        fe_jw_key(w, "nodes");
        fe_jw_int(w, s->n);
        fe_jw_key(w, "max_group");
        fe_jw_int(w, s->max_group);
        fe_jw_key(w, "cost");
        fe_jw_str(w, str_or(p, s->cost, ""));
        fe_jw_key(w, "candidates");
        fe_jw_int(w, s->candidates);
        fe_jw_key(w, "status");
        fe_jw_str(w, s->optimal ? "optimal" : "time_limit");
        fe_jw_key(w, "time_us");
        fe_jw_num(w, s->value * 1e6);
        fe_jw_key(w, "bound_us");
        fe_jw_num(w, s->bound * 1e6);
        fe_jw_key(w, "gap");
        fe_jw_num(w, gap);
        fe_jw_key(w, "seconds");
        fe_jw_num(w, s->seconds);
        fe_jw_key(w, "applied");
        fe_jw_bool(w, applied);
        fe_jw_end(w);
    }
    fe_jw_end(w);
    fe_jw_key(w, "windows");
    fe_jw_int(w, p->nsolves);
    fe_jw_key(w, "proven");
    fe_jw_int(w, proven);
    fe_jw_key(w, "gap");
    fe_jw_num(w, worst);
    fe_jw_key(w, "whole_graph");
    fe_jw_bool(w, covered);
    fe_jw_end(w);
}

void fe_plan_summary_counts(const fe_plan *p, fe_plan_counts *c)
{
    memset(c, 0, sizeof *c);
    c->copies = p->ncopies;
    c->kernels = p->ncopies;
    for (int32_t gi = 0; gi < p->ngroups; gi++) {
        int32_t n = p->groups[gi].n;
        switch (fe_group_launch(p->g, fe_group_nodes(p, &p->groups[gi]), n)) {
        case FE_LAUNCH_EXTERN: c->extern_calls++; break;
        case FE_LAUNCH_NONE: c->views++; break;
        default: c->kernels++; break;
        }
        if (n > 1)
            c->fused_groups++, c->fused_nodes += n;
        if (n > c->largest)
            c->largest = n;
        if (p->groups[gi].split > 1)
            c->tiled_groups++;
    }
    for (int32_t d = 0; d < p->ndecisions; d++) {
        switch (p->decisions[d].verdict) {
        case 1: c->yes++; break;
        case 0: c->no++; break;
        case -1: c->none++; break;
        case -2: c->rejected++; break;
        default: c->notes++; break;
        }
    }
}

int fe_plan_write(const fe_plan *p, FILE *f, int indent, const fe_plan_extra *extra, fe_error *err)
{
    const fe_graph *g = p->g;
    fe_plan_counts c;
    fe_jw w;
    fe_plan_summary_counts(p, &c);
    fe_jw_init(&w, f, indent);
    fe_jw_obj(&w);
    fe_jw_key(&w, "format");
    fe_jw_str(&w, "fuseeng.plan/1");
    fe_jw_key(&w, "model");
    fe_jw_str(&w, g->name);
    fe_jw_key(&w, "policy");
    if (p->policy >= 0)
        fe_jw_str(&w, str_or(p, p->policy, ""));
    else
        fe_jw_null(&w);
    fe_jw_key(&w, "machine");
    if (p->machine >= 0)
        fe_jw_str(&w, str_or(p, p->machine, ""));
    else
        fe_jw_null(&w);
    if (g->ndims)
        fe_save_dims(&w, g, 1);
    write_groups(&w, p, extra);
    write_copies(&w, p);
    write_solves(&w, p);
    write_decisions(&w, p);
    fe_jw_key(&w, "summary");
    fe_jw_obj(&w);
    fe_jw_key(&w, "nodes");
    fe_jw_int(&w, g->nnodes);
    fe_jw_key(&w, "kernels");
    fe_jw_int(&w, c.kernels);
    fe_jw_key(&w, "extern");
    fe_jw_int(&w, c.extern_calls);
    if (c.copies) {
        fe_jw_key(&w, "copies");
        fe_jw_int(&w, c.copies);
    }
    fe_jw_key(&w, "views");
    fe_jw_int(&w, c.views);
    fe_jw_key(&w, "fused_groups");
    fe_jw_int(&w, c.fused_groups);
    fe_jw_key(&w, "fused_nodes");
    fe_jw_int(&w, c.fused_nodes);
    fe_jw_key(&w, "largest_group");
    fe_jw_int(&w, c.largest);
    fe_jw_key(&w, "tiled_groups");
    fe_jw_int(&w, c.tiled_groups);
    fe_jw_key(&w, "decisions");
    fe_jw_obj_flat(&w);
    fe_jw_key(&w, "fuse");
    fe_jw_int(&w, c.yes);
    fe_jw_key(&w, "no");
    fe_jw_int(&w, c.no);
    fe_jw_key(&w, "no_opinion");
    fe_jw_int(&w, c.none);
    fe_jw_key(&w, "rejected");
    fe_jw_int(&w, c.rejected);
    fe_jw_end(&w);
    if (extra && extra->summary)
        extra->summary(&w, extra->ctx);
    fe_jw_end(&w);
    fe_jw_end(&w);
    if (fflush(f) != 0 || ferror(f))
        return fe_error_set(err, FE_ERUNTIME, "writing the plan failed: %s", strerror(errno));
    return FE_OK;
}

/* ---- reading ---- */

/* "copies": a list of {"tensor": name, "reason": text}, each tensor a
 * graph input or weight read by some node, listed once. */
static int read_copies(const char *path, json_t *root, fe_plan *plan, fe_error *err)
{
    json_t *copies = json_object_get(root, "copies");
    if (!copies)
        return FE_OK;
    if (!json_is_array(copies))
        return fe_error_set(err, FE_EINPUT, "%s: \"copies\" must be a list of {\"tensor\": "
                            "name, \"reason\": text}", path);
    for (size_t i = 0; i < json_array_size(copies); i++) {
        json_t *c = json_array_get(copies, i);
        json_t *reason = json_object_get(c, "reason");
        const char *name = json_string_value(json_object_get(c, "tensor"));
        if (!json_is_object(c) || !name || (reason && !json_is_string(reason)))
            return fe_error_set(err, FE_EINPUT, "%s: copy %zu must be {\"tensor\": name, "
                                "\"reason\": text} (reason optional)", path, i);
        int32_t t = fe_graph_find_tensor(plan->g, name);
        if (t < 0)
            return fe_error_set(err, FE_EINPUT, "%s: copy %zu names tensor '%s', which model "
                                "'%s' does not have (a plan for another model?)", path, i, name,
                                plan->g->name);
        const char *why = fe_plan_copy_refusal(plan, t);
        if (why)
            return fe_error_set(err, FE_EINPUT, "%s: copy %zu: tensor '%s' %s", path, i, name,
                                why);
        if (fe_plan_add_copy(plan, t, json_string_value(reason)) != FE_OK)
            return fe_error_set(err, FE_ENOMEM, "out of memory reading %s", path);
    }
    return FE_OK;
}

/* The header: "model" and "machine" are strings or null, "dims" an object
 * of positive integers. */
static int read_header(fe_plan_file *pf, json_t *root, fe_error *err)
{
    const char *path = pf->path;
    json_t *model = json_object_get(root, "model");
    json_t *machine = json_object_get(root, "machine");
    json_t *dims = json_object_get(root, "dims");
    if (model && !json_is_null(model) && !json_is_string(model))
        return fe_error_set(err, FE_EINPUT, "%s: \"model\" must be the model's name (a string)",
                            path);
    if (machine && !json_is_null(machine) &&
        (!json_is_string(machine) || json_string_length(machine) == 0))
        return fe_error_set(err, FE_EINPUT, "%s: \"machine\" must be a machine's name (a "
                            "non-empty string) or null", path);
    pf->model = json_string_value(model);
    if (pf->model && !*pf->model)
        pf->model = NULL;
    pf->machine = json_string_value(machine);
    if (!dims)
        return FE_OK;
    if (!json_is_object(dims))
        return fe_error_set(err, FE_EINPUT, "%s: \"dims\" must be an object of name: size, "
                            "e.g. {\"S\": 2048}", path);
    const char *name;
    json_t *v;
    json_object_foreach(dims, name, v) {
        if (pf->ndims == FE_PLAN_FILE_MAX_DIMS)
            return fe_error_set(err, FE_EINPUT, "%s: \"dims\" has more than %d entries", path,
                                FE_PLAN_FILE_MAX_DIMS);
        if (!*name)
            return fe_error_set(err, FE_EINPUT, "%s: \"dims\" has an empty name", path);
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return fe_error_set(err, FE_EINPUT, "%s: \"dims\": \"%s\" must be a positive "
                                "integer", path, name);
        pf->dim_names[pf->ndims] = name;
        pf->dim_values[pf->ndims] = json_integer_value(v);
        pf->ndims++;
    }
    return FE_OK;
}

/* A dispatch table: "dim", then "buckets", a list of {"bucket": value,
 * "serves": [from, to], "plan": {a fuseeng.plan/1 object made at that
 * value}} in increasing order. Every bucket's plan header is checked here,
 * so that a bad bucket is reported whatever value picks. */
static int read_dispatch(fe_plan_file *pf, json_t *root, fe_error *err)
{
    const char *path = pf->path;
    json_t *dim = json_object_get(root, "dim"), *buckets = json_object_get(root, "buckets");
    if (!json_is_string(dim) || json_string_length(dim) == 0)
        return fe_error_set(err, FE_EINPUT, "%s: \"dim\" must name the dim the buckets are "
                            "values of, e.g. \"B\"", path);
    pf->dispatch_dim = json_string_value(dim);
    size_t n = json_array_size(buckets);
    if (!json_is_array(buckets) || n == 0 || n > FE_PLAN_FILE_MAX_DIMS)
        return fe_error_set(err, FE_EINPUT, "%s: \"buckets\" must be a list of 1 to %d buckets",
                            path, FE_PLAN_FILE_MAX_DIMS);
    int rc = read_header(pf, root, err);
    for (size_t i = 0; rc == FE_OK && i < n; i++) {
        json_t *b = json_array_get(buckets, i);
        json_t *value = json_object_get(b, "bucket"), *serves = json_object_get(b, "serves");
        json_t *plan = json_object_get(b, "plan");
        json_int_t v = json_is_integer(value) ? json_integer_value(value) : 0;
        json_int_t from = i ? pf->buckets[i - 1] + 1 : 1;
        if (v < 1 || (i && v <= pf->buckets[i - 1]))
            return fe_error_set(err, FE_EINPUT, "%s: bucket %zu: \"bucket\" must be a positive "
                                "integer above the bucket before it", path, i);
        if (serves && (json_array_size(serves) != 2 ||
                       json_integer_value(json_array_get(serves, 0)) != from ||
                       json_integer_value(json_array_get(serves, 1)) != v))
            return fe_error_set(err, FE_EINPUT, "%s: bucket %zu: \"serves\" must be [%lld, %lld]: "
                                "a bucket serves the values above the bucket before it, up to "
                                "its own", path, i, (long long)from, (long long)v);
        const char *fmt = json_string_value(json_object_get(plan, "format"));
        if (!json_is_object(plan) || !fmt || strcmp(fmt, "fuseeng.plan/1") != 0)
            return fe_error_set(err, FE_EINPUT, "%s: bucket %zu: \"plan\" must be a plan "
                                "(\"format\": \"fuseeng.plan/1\")", path, i);
        pf->buckets[i] = v;
        pf->nbuckets = (int)i + 1;
        char where[PATH_MAX + 32];
        snprintf(where, sizeof where, "%s: bucket %zu", path, i);
        fe_plan_file sub = {.path = where};
        if ((rc = read_header(&sub, plan, err)) != FE_OK)
            return rc;
        for (int d = 0; d < sub.ndims; d++)
            if (strcmp(sub.dim_names[d], pf->dispatch_dim) == 0 && sub.dim_values[d] != v)
                return fe_error_set(err, FE_EINPUT, "%s: bucket %zu: its plan was made at %s=%lld, "
                                    "not at the bucket's %lld", path, i, pf->dispatch_dim,
                                    (long long)sub.dim_values[d], (long long)v);
        if (pf->model && sub.model && strcmp(pf->model, sub.model) != 0)
            return fe_error_set(err, FE_EINPUT, "%s: bucket %zu: its plan is for model '%s', the "
                                "table for '%s'", path, i, sub.model, pf->model);
    }
    pf->plan_doc = NULL;   /* until a bucket is picked */
    return rc;
}

int fe_plan_file_open(const char *path, fe_plan_file *pf, fe_error *err)
{
    memset(pf, 0, sizeof *pf);
    pf->path = path;
    /* Read it here rather than in Jansson, whose message for a missing
     * file carries a position of -1:-1 and which would wait on a FIFO. */
    size_t len;
    char *text = fe_infile_read(path, "the plan", FE_INFILE_MAX, &len, err);
    if (!text)
        return FE_EINPUT;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root)
        return fe_error_set(err, FE_EINPUT, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    pf->doc = root;
    pf->plan_doc = root;
    pf->picked = -1;
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (fmt && strcmp(fmt, "fuseeng.dispatch/1") == 0)
        return read_dispatch(pf, root, err);
    if (!fmt || strcmp(fmt, "fuseeng.plan/1") != 0)
        return fe_error_set(err, FE_EINPUT, "%s: \"format\" must be \"fuseeng.plan/1\" (or "
                            "\"fuseeng.dispatch/1\")", path);
    return read_header(pf, root, err);
}

int fe_plan_file_pick(fe_plan_file *pf, int64_t value, fe_error *err)
{
    int i = 0;
    while (i < pf->nbuckets && pf->buckets[i] < value)
        i++;
    if (i == pf->nbuckets)
        return fe_error_set(err, FE_EINPUT, "%s: no bucket serves %s=%lld: the largest bucket is "
                            "%s=%lld (plan again with a bucket of at least %lld)", pf->path,
                            pf->dispatch_dim, (long long)value, pf->dispatch_dim,
                            (long long)pf->buckets[pf->nbuckets - 1], (long long)value);
    json_t *bucket = json_array_get(json_object_get(pf->doc, "buckets"), (size_t)i);
    pf->plan_doc = json_object_get(bucket, "plan");
    pf->picked = i;
    pf->ndims = 0;
    /* The bucket's plan may leave its model and machine to the table. */
    const char *model = pf->model, *machine = pf->machine;
    int rc = read_header(pf, pf->plan_doc, err);
    if (!pf->model)
        pf->model = model;
    if (!pf->machine)
        pf->machine = machine;
    return rc;
}

void fe_plan_file_close(fe_plan_file *pf)
{
    json_decref(pf->doc);
    memset(pf, 0, sizeof *pf);
}

fe_plan *fe_plan_file_plan(const fe_plan_file *pf, const fe_graph *g, fe_error *err)
{
    const char *path = pf->path;
    json_t *root = pf->plan_doc;
    fe_plan *plan = NULL;
    if (!root) {
        fe_error_set(err, FE_EINPUT, "%s is a dispatch table over dim '%s': read it with "
                     "`fuseeng sim` or `run --plan`, which pick the bucket for the model's %s",
                     path, pf->dispatch_dim, pf->dispatch_dim);
        return NULL;
    }
    int32_t *labels = NULL, *splits = NULL, *kernels = NULL;
    json_t *groups = json_object_get(root, "groups");
    if (!json_is_array(groups)) {
        fe_error_set(err, FE_EINPUT, "%s: \"groups\" must be a list of groups", path);
        goto out;
    }
    size_t ng = json_array_size(groups);
    labels = malloc((g->nnodes > 0 ? (size_t)g->nnodes : 1u) * sizeof *labels);
    splits = malloc((ng ? ng : 1) * sizeof *splits);
    kernels = malloc((ng ? ng : 1) * sizeof *kernels);
    if (!labels || !splits || !kernels) {
        fe_error_set(err, FE_ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    for (int32_t v = 0; v < g->nnodes; v++)
        labels[v] = -1;
    for (size_t gi = 0; gi < ng; gi++) {
        json_t *grp = json_array_get(groups, gi);
        json_t *nodes = json_object_get(grp, "nodes");
        json_t *split = json_object_get(grp, "split");
        json_t *kernel = json_object_get(grp, "kernel");
        if (!json_is_array(nodes) || json_array_size(nodes) == 0) {
            fe_error_set(err, FE_EINPUT, "%s: group %zu: \"nodes\" must be a non-empty list of "
                         "node names", path, gi);
            goto out;
        }
        for (size_t k = 0; k < json_array_size(nodes); k++) {
            const char *name = json_string_value(json_array_get(nodes, k));
            int32_t v = name ? fe_graph_find_node(g, name) : -1;
            if (v < 0) {
                fe_error_set(err, FE_EINPUT, "%s: group %zu names node '%s', which model '%s' "
                             "does not have (a plan for another model?)", path, gi,
                             name ? name : "(not a string)", g->name);
                goto out;
            }
            if (labels[v] == (int32_t)gi) {
                fe_error_set(err, FE_EINPUT, "%s: group %zu lists node '%s' twice (name each "
                             "node once)", path, gi, name);
                goto out;
            }
            if (labels[v] >= 0) {
                fe_error_set(err, FE_EINPUT, "%s: node '%s' is in groups %d and %zu (a node "
                             "belongs to one group)", path, name, labels[v], gi);
                goto out;
            }
            labels[v] = (int32_t)gi;
        }
        splits[gi] = 0;   /* absent: the simulator's default */
        if (split && (!json_is_integer(split) || json_integer_value(split) < 1 ||
                      json_integer_value(split) > FE_PLAN_MAX_SPLIT)) {
            fe_error_set(err, FE_EINPUT, "%s: group %zu: \"split\" must be " FE_PLAN_SPLIT_RULE,
                         path, gi);
            goto out;
        }
        if (split)
            splits[gi] = (int32_t)json_integer_value(split);
        kernels[gi] = 0;
        if (kernel) {
            const char *k = json_string_value(kernel);
            kernels[gi] = k ? fe_k_choice_find(k) : -1;
            if (kernels[gi] < 0) {
                fe_error_set(err, FE_EINPUT, "%s: group %zu: kernel %s is not one of: %s", path, gi,
                             k ? k : "(not a string)", fe_k_choice_names());
                goto out;
            }
        }
    }
    for (int32_t v = 0; v < g->nnodes; v++)
        if (labels[v] < 0) {
            fe_error_set(err, FE_EINPUT, "%s: node '%s' is in no group; a plan covers every node",
                         path, fe_node_name(g, fe_graph_node(g, v)));
            goto out;
        }
    plan = fe_plan_from_labels(g, labels, err);
    if (!plan) {
        fe_error_prefix(err, "%s: ", path);
        goto out;
    }
    /* Groups were renumbered in dependency order: carry split and kernel
     * over through a member. */
    for (int32_t gi = 0; gi < plan->ngroups; gi++) {
        int32_t l = labels[fe_group_nodes(plan, &plan->groups[gi])[0]];
        plan->groups[gi].split = splits[l];
        plan->groups[gi].kernel = kernels[l];
        const char *reason = json_string_value(json_object_get(json_array_get(groups, (size_t)l),
                                                               "reason"));
        if (reason)
            fe_plan_set_reason(plan, gi, reason);
    }
    const char *pol = json_string_value(json_object_get(root, "policy"));
    if (pol)
        plan->policy = fe_plan_str(plan, pol);
    if (read_copies(path, root, plan, err) != FE_OK) {
        fe_plan_free(plan);
        plan = NULL;
    }
out:
    free(labels);
    free(splits);
    free(kernels);
    return plan;
}

fe_plan *fe_plan_read(const fe_graph *g, const char *path, fe_error *err)
{
    fe_plan_file pf;
    fe_plan *plan = NULL;
    if (fe_plan_file_open(path, &pf, err) == FE_OK)
        plan = fe_plan_file_plan(&pf, g, err);
    fe_plan_file_close(&pf);
    return plan;
}
