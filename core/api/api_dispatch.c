/* api_dispatch.c: dispatch tables, one plan per bucket of a dim (seed 004's
 * DAFE: a kernel version per shape, picked at run time).
 *
 * A model planned at several values of one dim, v1 < v2 < ... (`fuseeng run
 * --dim B=1,8,32`), gives a plan per value; bucket vi serves the values
 * above v(i-1) up to vi, and its plan was made at vi, the largest shape it
 * serves (a tile that fits at vi fits below it). The table is written as
 * fuseeng.dispatch/1 (plan_json.c reads it back and picks the bucket for
 * the model's value) or as a text report: per bucket kernels, extern calls, simulated
 * time and gain over unfused, then the groups that are not the same in
 * every bucket. */
#include <stdlib.h>
#include <string.h>

#include "api.h"

#define MAX_BUCKETS 64

typedef struct bucket {
    int64_t value;
    const fe_plan *plan;       /* not owned */
    const fe_report *report;   /* not owned */
} bucket;

struct fe_dispatch {
    char dim[128];
    int n;
    bucket b[MAX_BUCKETS];
};

fe_dispatch *fe_dispatch_new(const char *dim, fe_error *err)
{
    if (fe_api_null(dim, "fe_dispatch_new", "the dim's name", err))
        return NULL;
    if (!*dim || strlen(dim) >= sizeof ((fe_dispatch *)0)->dim) {
        fe_error_set(err, FE_EINPUT, "fe_dispatch_new: the dim's name must have 1 to 127 bytes");
        return NULL;
    }
    fe_dispatch *d = calloc(1, sizeof *d);
    if (!d) {
        fe_error_set(err, FE_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(d->dim, sizeof d->dim, "%s", dim);
    return d;
}

int fe_dispatch_add(fe_dispatch *d, int64_t value, const fe_plan *p, const fe_report *r,
                    fe_error *err)
{
    if (fe_api_null(d, "fe_dispatch_add", "the table", err) ||
        fe_api_null(p, "fe_dispatch_add", "the plan", err) ||
        fe_api_null(r, "fe_dispatch_add", "the report", err))
        return FE_EINPUT;
    if (r->plan.plan != p)
        return fe_error_set(err, FE_EINPUT, "fe_dispatch_add: the report is of another plan");
    if (d->n == MAX_BUCKETS)
        return fe_error_set(err, FE_EINPUT, "fe_dispatch_add: at most %d buckets", MAX_BUCKETS);
    if (value < 1 || (d->n && value <= d->b[d->n - 1].value))
        return fe_error_set(err, FE_EINPUT, "fe_dispatch_add: bucket %s=%lld must be positive "
                            "and above the bucket before it", d->dim, (long long)value);
    if (d->n && strcmp(p->g->name, d->b[0].plan->g->name) != 0)
        return fe_error_set(err, FE_EINPUT, "fe_dispatch_add: every bucket's plan must be of "
                            "model '%s'", d->b[0].plan->g->name);
    d->b[d->n++] = (bucket){value, p, r};
    return FE_OK;
}

void fe_dispatch_free(fe_dispatch *d)
{
    free(d);
}

static int64_t serves_from(const fe_dispatch *d, int i)
{
    return i ? d->b[i - 1].value + 1 : 1;
}

/* The plan's JSON inside the table: its text, indented one level deeper. */
static int write_json(const fe_dispatch *d, int format, FILE *f, fe_error *err)
{
    const bucket *b0 = &d->b[0];
    fe_jw w;
    fe_jw_init(&w, f, 1);
    fe_jw_obj(&w);
    fe_jw_key(&w, "format");
    fe_jw_str(&w, "fuseeng.dispatch/1");
    fe_jw_key(&w, "model");
    fe_jw_str(&w, b0->plan->g->name);
    fe_jw_key(&w, "policy");
    fe_jw_str(&w, fe_plan_policy(b0->plan));
    fe_jw_key(&w, "machine");
    fe_jw_str(&w, b0->report->plan.machine.name);
    fe_jw_key(&w, "dim");
    fe_jw_str(&w, d->dim);
    fe_jw_key(&w, "buckets");
    fe_jw_arr(&w);
    for (int i = 0; i < d->n; i++) {
        char *text = fe_plan_format(d->b[i].plan, NULL, d->b[i].report, NULL,
                                    FE_FORMAT_JSON | (format & FE_WITH_GROUPS), err);
        if (!text)
            return err ? err->code : FE_ENOMEM;
        size_t len = strlen(text), extra = 0;
        while (len && text[len - 1] == '\n')
            text[--len] = '\0';
        for (size_t k = 0; k < len; k++)
            extra += text[k] == '\n';
        char *deep = malloc(len + 3 * extra + 1);
        if (!deep) {
            fe_free(text);
            return fe_error_set(err, FE_ENOMEM, "out of memory");
        }
        size_t at = 0;
        for (size_t k = 0; k < len; k++) {
            deep[at++] = text[k];
            if (text[k] == '\n')
                at += (size_t)snprintf(deep + at, 4, "   ");
        }
        fe_free(text);
        fe_jw_obj(&w);
        fe_jw_key(&w, "bucket");
        fe_jw_int(&w, d->b[i].value);
        fe_jw_key(&w, "serves");
        fe_jw_arr_flat(&w);
        fe_jw_int(&w, serves_from(d, i));
        fe_jw_int(&w, d->b[i].value);
        fe_jw_end(&w);
        fe_jw_key(&w, "plan");
        fe_jw_raw(&w, deep, at);
        free(deep);
        fe_jw_end(&w);
    }
    fe_jw_end(&w);
    fe_jw_end(&w);
    fputc('\n', f);
    return FE_OK;
}

/* Fused group gi of plan p as "a, b, c" into buf. */
static void group_text(const fe_plan *p, int gi, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < fe_plan_group_size(p, gi) && at < size; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? ", " : "",
                               fe_plan_group_node(p, gi, k));
}

/* The group of plan p holding exactly the nodes listed in text, or -1. */
static int find_group(const fe_plan *p, const char *text)
{
    char buf[4096];
    for (int gi = 0; gi < fe_plan_groups(p); gi++) {
        if (fe_plan_group_size(p, gi) < 2)
            continue;
        group_text(p, gi, buf, sizeof buf);
        if (strcmp(buf, text) == 0)
            return gi;
    }
    return -1;
}

/* A fused group of bucket i's plan that is not in every bucket at the same
 * split, as one line (once: only from the first bucket that has it). */
static int differing(const fe_dispatch *d, int i, int gi, FILE *f)
{
    char text[4096];
    const fe_plan *p = d->b[i].plan;
    group_text(p, gi, text, sizeof text);
    for (int j = 0; j < i; j++)
        if (find_group(d->b[j].plan, text) >= 0)
            return 0;
    int same = 1, split = p->groups[gi].split;
    for (int j = i + 1; j < d->n; j++) {
        int gj = find_group(d->b[j].plan, text);
        same &= gj >= 0 && d->b[j].plan->groups[gj].split == split;
    }
    if (same && i == 0)
        return 0;
    if (!f)
        return 1;
    fprintf(f, "  [%s]\n     ", text);
    for (int j = 0; j < d->n; j++) {
        int gj = find_group(d->b[j].plan, text);
        fprintf(f, " %s=%lld: ", d->dim, (long long)d->b[j].value);
        if (gj < 0)
            fprintf(f, "-");
        else
            fprintf(f, "x%d", d->b[j].plan->groups[gj].split);
        fprintf(f, "%s", j + 1 < d->n ? "," : "\n");
    }
    return 1;
}

static void write_text(const fe_dispatch *d, FILE *f)
{
    const fe_plan *p0 = d->b[0].plan;
    fprintf(f, "model      %s (%d nodes)\npolicy     %s\n", p0->g->name, p0->g->nnodes,
            fe_plan_policy(p0) ? fe_plan_policy(p0) : "unfused");
    fprintf(f, "dispatch   %d bucket%s of %s on %s; bucket v serves the values above the bucket "
            "before it, up to v, with the plan made at v\n", d->n, d->n == 1 ? "" : "s", d->dim,
            d->b[0].report->plan.machine.name);
    fprintf(f, "  %-12s %-16s %8s %7s %12s %12s %8s %6s\n", "bucket", "serves", "kernels",
            "extern", "sim ms", "unfused ms", "gain", "tiled");
    for (int i = 0; i < d->n; i++) {
        fe_figures plan, base;
        fe_report_figures(d->b[i].report, 0, &plan);
        fe_report_figures(d->b[i].report, 1, &base);
        char name[160], range[64];
        snprintf(name, sizeof name, "%s=%lld", d->dim, (long long)d->b[i].value);
        snprintf(range, sizeof range, "%lld..%lld", (long long)serves_from(d, i),
                 (long long)d->b[i].value);
        fprintf(f, "  %-12s %-16s %8d %7d %12.3f %12.3f %7.2fx %6d\n", name, range, plan.kernels,
                plan.extern_calls, plan.time_s * 1e3, base.time_s * 1e3,
                plan.time_s > 0 ? base.time_s / plan.time_s : 1.0, plan.tiled);
    }
    /* Counted first, printed second: the header says how many. */
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass && !n) {
            fprintf(f, "groups     the same in every bucket\n");
            break;
        }
        if (pass)
            fprintf(f, "groups that differ between buckets (%d; split per bucket, - where absent):\n", n);
        for (int i = 0; i < d->n; i++)
            for (int gi = 0; gi < fe_plan_groups(d->b[i].plan); gi++)
                if (fe_plan_group_size(d->b[i].plan, gi) > 1 && differing(d, i, gi, pass ? f : NULL))
                    n += !pass;
    }
}

static int write_dispatch(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    (void)arg;
    const fe_dispatch *d = obj;
    if ((format & FE_FORMAT_MASK) == FE_FORMAT_JSON)
        return write_json(d, format, f, err);
    write_text(d, f);
    return FE_OK;
}

char *fe_dispatch_format(const fe_dispatch *d, int format, fe_error *err)
{
    if (fe_api_null(d, "fe_dispatch_format", "the table", err))
        return NULL;
    int kind = format & FE_FORMAT_MASK;
    if (kind != FE_FORMAT_TEXT && kind != FE_FORMAT_JSON) {
        fe_error_set(err, FE_EINPUT, "fe_dispatch_format: format %d is not text or JSON", kind);
        return NULL;
    }
    if (d->n == 0) {
        fe_error_set(err, FE_EINPUT, "fe_dispatch_format: the table has no bucket");
        return NULL;
    }
    return fe_api_text(write_dispatch, d, NULL, format, err);
}
