/* api_plan.c: a plan as people and tools read it: the summary and decision
 * log of fuseeng run, Graphviz, and fuseeng.plan/1 JSON with the simulated
 * and executed figures in its "summary"; and the embedding API's plain
 * plan file and group accessors. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "ops.h"
#include "plan_json.h"
#include "show.h"
#include "units.h"

const char *fe_plan_policy(const fe_plan *p)
{
    return p && p->policy >= 0 ? fe_strtab_str(p->strs, p->policy) : NULL;
}

static void print_group_nodes(const fe_plan *p, const int32_t *nodes, int n, FILE *f)
{
    fputc('[', f);
    for (int i = 0; i < n && i < 8; i++)
        fprintf(f, "%s%s", i ? ", " : "", fe_node_name(p->g, fe_graph_node(p->g, nodes[i])));
    if (n > 8)
        fprintf(f, ", ... %d more", n - 8);
    fputc(']', f);
}

static void decisions(const fe_plan *p, FILE *f)
{
    fprintf(f, "decisions (%d):\n", p->ndecisions);
    for (int32_t d = 0; d < p->ndecisions; d++) {
        const fe_decision *dc = &p->decisions[d];
        fprintf(f, "  %-8s ", fe_verdict_name(dc->verdict));
        if (dc->n > 0) {
            print_group_nodes(p, p->dnodes + dc->off, dc->n, f);
            fprintf(f, "  ");
        }
        fprintf(f, "%s\n", dc->reason >= 0 ? fe_strtab_str(p->strs, dc->reason) : "");
    }
}

/* A reason's key for counting: its text up to the first ':' (rule names,
 * "rejected by the engine") or, when one comes first, '(' (the details of
 * "40 nodes are in no group (first: ...)"), or the whole text when short. */
static size_t reason_key(const char *s)
{
    const char *c = strchr(s, ':'), *paren = strchr(s, '(');
    if (paren && paren > s && (!c || paren < c))
        c = paren[-1] == ' ' ? paren - 1 : paren;
    size_t n = c ? (size_t)(c - s) : strlen(s);
    return n > 60 ? 60 : n;
}

typedef struct reason_count {
    const char *text;
    size_t len;
    int count;
} reason_count;

static int by_text(const void *a, const void *b)
{
    const reason_count *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text, y->text, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int by_count(const void *a, const void *b)
{
    const reason_count *x = a, *y = b;
    return x->count != y->count ? y->count - x->count : by_text(a, b);
}

/* The commonest kinds of reason. Sorted by text and counted in runs: a plan
 * can hold 100k distinct reasons, too many to compare pairwise. */
static void reasons(const fe_plan *p, FILE *f)
{
    reason_count *rc = calloc((size_t)(p->ndecisions > 0 ? p->ndecisions : 1), sizeof *rc);
    int n = 0, nr = 0;
    if (!rc)
        return;
    for (int32_t d = 0; d < p->ndecisions; d++) {
        const char *s = p->decisions[d].reason >= 0 ? fe_strtab_str(p->strs, p->decisions[d].reason) : "";
        size_t len = reason_key(s);
        if (len > 0)
            rc[n++] = (reason_count){s, len, 1};
    }
    qsort(rc, (size_t)n, sizeof *rc, by_text);
    for (int i = 0; i < n; i++) {
        if (nr > 0 && by_text(&rc[nr - 1], &rc[i]) == 0)
            rc[nr - 1].count++;
        else
            rc[nr++] = rc[i];
    }
    qsort(rc, (size_t)nr, sizeof *rc, by_count);
    for (int i = 0; i < nr && i < 8; i++)
        fprintf(f, "%s %5d  %.*s%s\n", i ? "          " : "reasons   ", rc[i].count,
                (int)rc[i].len, rc[i].text, rc[i].text[rc[i].len] ? " ..." : "");
    if (nr > 8)
        fprintf(f, "           ... %d more kinds of reason (--explain lists all)\n", nr - 8);
    free(rc);
}

static int by_size_desc(const void *a, const void *b, void *ctx)
{
    const fe_plan *p = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (p->groups[x].n != p->groups[y].n)
        return p->groups[y].n - p->groups[x].n;
    return (x > y) - (x < y);
}

static void largest_groups(const fe_plan *p, FILE *f)
{
    int32_t *ids = malloc((size_t)(p->ngroups > 0 ? p->ngroups : 1) * sizeof *ids);
    if (!ids)
        return;
    for (int32_t i = 0; i < p->ngroups; i++)
        ids[i] = i;
    qsort_r(ids, (size_t)p->ngroups, sizeof *ids, by_size_desc, (void *)p);
    for (int32_t i = 0; i < p->ngroups && i < 5 && p->groups[ids[i]].n > 1; i++) {
        const fe_group *gr = &p->groups[ids[i]];
        char key[64];
        fe_sim_group_label(p->g, fe_group_nodes(p, gr), gr->n, key, sizeof key);
        fprintf(f, "%s %s (%d): ", i ? "          " : "largest   ", key, gr->n);
        print_group_nodes(p, fe_group_nodes(p, gr), gr->n, f);
        if (gr->split > 1)
            fprintf(f, " split %d", gr->split);
        fprintf(f, "\n");
    }
    free(ids);
}

/* --stats: the whole planning time, then its parts. The hooks' time holds
 * their simulator and ctx:bench calls; the engine's is the rest (driver,
 * legality checks, group bookkeeping, splits). */

/* How often the simulator agreed with measured (or profiled) times that
 * fusing was faster, and the first disagreements. */
static void agreement(FILE *f, const char *label, const char *what, int64_t compared,
                      int64_t agreed, const char (*disagree)[200])
{
    if (!compared)
        return;
    fprintf(f, "%-11sthe simulator agrees on %lld of %lld %s groups (%.0f%%) that fusing is faster "
            "or not\n", label, (long long)agreed, (long long)compared, what,
            100.0 * (double)agreed / (double)compared);
    for (int i = 0; i < 4 && disagree[i][0]; i++) {
        char line[4 * 200];   /* op names come from the model */
        fe_escape_into(line, sizeof line, disagree[i], 0);
        fprintf(f, "           differs: %s\n", line);
    }
}

static void stats(const fe_plan_stats *st, FILE *f)
{
    char b[32];
    double lua = st->hook_seconds - st->sim_seconds - st->bench_seconds;
    double engine = st->seconds - st->hook_seconds;
    double pct = st->seconds > 0 ? 100.0 / st->seconds : 0;
    fprintf(f, "stats      planning %.3f s: engine %.3f s (%.0f%%: driver, legality, groups), "
            "Lua hooks %.3f s (%.0f%%), simulator calls %.3f s (%.0f%%, %lld kernels priced)",
            st->seconds, engine < 0 ? 0 : engine, engine < 0 ? 0 : engine * pct, lua < 0 ? 0 : lua,
            lua < 0 ? 0 : lua * pct, st->sim_seconds, st->sim_seconds * pct,
            (long long)st->sim_calls);
    if (st->bench_measured || st->bench_cached || st->bench_fallbacks)
        fprintf(f, ", measuring %.3f s (%.0f%%)", st->bench_seconds, st->bench_seconds * pct);
    fprintf(f, "\n           %lld Lua hook calls (%.0f per second of hook time), %lld instructions, "
            "Lua memory %s, %d round%s\n", (long long)st->hook_calls,
            st->hook_seconds > 0 ? (double)st->hook_calls / st->hook_seconds : 0.0,
            (long long)st->instructions, fe_fmt_bytes((double)st->lua_bytes, b, sizeof b),
            st->rounds, st->rounds == 1 ? "" : "s");
    if (st->decide_reused)
        fprintf(f, "           %lld refusals of unchanged pairs reused across rounds (decide not "
                "asked again)\n", (long long)st->decide_reused);
    if (st->hook_memo)
        fprintf(f, "           %lld hook answers reused for candidates of a structure asked "
                "about before (memo = true)\n", (long long)st->hook_memo);
    if (st->bench_measured || st->bench_cached || st->bench_fallbacks)
        fprintf(f, "bench      %lld items measured, %lld answers from the kernel cache, %lld calls "
                "past the budget\n", (long long)st->bench_measured, (long long)st->bench_cached,
                (long long)st->bench_fallbacks);
    /* the first column: under "bench", its line above; "profile" its own */
    agreement(f, "", "measured", st->bench_compared, st->bench_agreed, st->bench_disagree);
    agreement(f, "profile", "profiled", st->profile_compared, st->profile_agreed,
              st->profile_disagree);
}

static void summary(const fe_plan *p, const fe_plan_stats *st, int with_stats, FILE *f)
{
    const fe_graph *g = p->g;
    fe_plan_counts c;
    fe_plan_summary_counts(p, &c);
    fprintf(f, "model      %s (%d nodes, %s)\n", g->name[0] ? g->name : "(unnamed)", g->nnodes,
            g->file);
    fprintf(f, "policy     %s\n", p->policy >= 0 ? fe_strtab_str(p->strs, p->policy) : "?");
    fprintf(f, "kernels    %d -> %d (+%d extern", g->nnodes, c.kernels, c.extern_calls);
    if (c.views)
        fprintf(f, "; %d view group%s nothing", c.views,
                c.views == 1 ? " launches" : "s launch");
    fprintf(f, "; %d fused group%s holding %d nodes; largest %d node%s", c.fused_groups,
            c.fused_groups == 1 ? "" : "s", c.fused_nodes, c.largest, c.largest == 1 ? "" : "s");
    if (c.tiled_groups)
        fprintf(f, "; %d tiled", c.tiled_groups);
    if (c.copies)
        fprintf(f, "; %d layout cop%s", c.copies, c.copies == 1 ? "y" : "ies");
    fprintf(f, ")\n");
    for (int32_t i = 0; i < p->ncopies; i++)
        fprintf(f, "%s %s%s%s\n", i ? "          " : "copies    ",
                fe_tensor_name(g, fe_graph_tensor(g, p->copies[i].tensor)),
                p->copies[i].reason >= 0 ? ": " : "",
                p->copies[i].reason >= 0 ? fe_strtab_str(p->strs, p->copies[i].reason) : "");
    largest_groups(p, f);
    fprintf(f, "decisions  %d fuse, %d do not fuse, %d no opinion, %d rejected by the engine\n",
            c.yes, c.no, c.none, c.rejected);
    if (st && st->fault[0])
        fprintf(f, "fallback   %s; the policy's fusions were dropped (fallback_on_error = unfused)\n",
                st->fault);
    reasons(p, f);
    if (with_stats && st)
        stats(st, f);
}

static void dot(const fe_plan *p, FILE *f)
{
    const fe_graph *g = p->g;
    fprintf(f, "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontsize=10, fontname=\"Helvetica\"];\n");
    for (int32_t gi = 0; gi < p->ngroups; gi++) {
        const fe_group *gr = &p->groups[gi];
        if (gr->n > 1)
            fprintf(f, "  subgraph cluster_%d {\n    label=\"group %d (%s%s)\"; style=filled; "
                    "color=\"#dde8f5\";\n", gi, gi, fe_class_name(gr->klass),
                    gr->split > 1 ? ", tiled" : "");
        for (int32_t k = 0; k < gr->n; k++) {
            int32_t v = p->members[gr->off + k];
            const fe_node *n = fe_graph_node(g, v);
            fprintf(f, "%s  n%d [label=\"", gr->n > 1 ? "  " : "", v);
            for (const char *s = fe_node_name(g, n); *s; s++)
                fputs(*s == '"' ? "\\\"" : *s == '\\' ? "\\\\" : (char[2]){*s, 0}, f);
            fprintf(f, "\\n%s\"];\n", fe_node_op_name(n));
        }
        if (gr->n > 1)
            fprintf(f, "  }\n");
    }
    for (int32_t v = 0; v < g->nnodes; v++) {
        const fe_node *n = fe_graph_node(g, v);
        for (int k = 0; k < n->nin; k++) {
            int32_t prod = fe_graph_tensor(g, fe_node_input(g, n, k))->producer;
            if (prod >= 0)
                fprintf(f, "  n%d -> n%d;\n", prod, v);
        }
    }
    fprintf(f, "}\n");
}

/* What the plan JSON adds to the plan (fe_plan_extra's callbacks): the
 * simulator's figures (per group too with FE_WITH_GROUPS), the comparison
 * with the unfused plan and the execution. */
typedef struct summary_parts {
    const fe_report *r;
    int versus;
    const fe_result *x;
    const fe_plan_stats *st;    /* for the text summary */
} summary_parts;

static void write_group(fe_jw *w, int32_t gi, void *ctx)
{
    fe_sim_report_group_json(&((const summary_parts *)ctx)->r->plan, gi, w);
}

static void write_summary(fe_jw *w, void *ctx)
{
    const summary_parts *s = ctx;
    if (s->r)
        fe_sim_report_plan_summary(&s->r->plan, w);
    if (s->versus && s->r) {
        fe_jw_key(w, "versus_unfused");
        fe_sim_report_compare_json(&s->r->plan, &s->r->base, w);
    }
    if (s->x) {
        fe_jw_key(w, "executed");
        fe_execution_json(s->x->plan, &s->x->x, w);
    }
}

static int write_plan(const void *obj, const void *arg, int format, FILE *f, fe_error *err)
{
    const fe_plan *p = obj;
    const summary_parts *parts = arg;
    switch (format & FE_FORMAT_MASK) {
    case FE_FORMAT_JSON: {
        fe_plan_extra extra = {parts->r && (format & FE_WITH_GROUPS) ? write_group : NULL,
                               write_summary, (void *)parts};
        return fe_plan_write(p, f, 1, &extra, err);
    }
    case FE_FORMAT_DOT: dot(p, f); break;
    case FE_FORMAT_DECISIONS: decisions(p, f); break;
    case FE_FORMAT_KERNELS: return fe_exec_show_plan(p, f, err);
    case FE_FORMAT_KERNELS_CUDA: return fe_exec_show_plan_cuda(p, f, err);
    default: summary(p, parts->st, (format & FE_WITH_STATS) != 0, f);
    }
    return FE_OK;
}

char *fe_plan_format(const fe_plan *p, const fe_plan_stats *st, const fe_report *r,
                     const fe_result *x, int format, fe_error *err)
{
    if (fe_api_null(p, "fe_plan_format", "the plan", err))
        return NULL;
    int kind = format & FE_FORMAT_MASK;
    if (kind != FE_FORMAT_TEXT && kind != FE_FORMAT_JSON && kind != FE_FORMAT_DOT &&
        kind != FE_FORMAT_DECISIONS && kind != FE_FORMAT_KERNELS && kind != FE_FORMAT_KERNELS_CUDA) {
        fe_error_set(err, FE_EINPUT, "fe_plan_format: format %d is not text, JSON, dot, "
                     "decisions or kernels", kind);
        return NULL;
    }
    if ((x && x->plan != p) || (r && r->plan.plan != p)) {
        fe_error_set(err, FE_EINPUT, "fe_plan_format: the %s is of another plan",
                     x && x->plan != p ? "result" : "report");
        return NULL;
    }
    summary_parts parts = {r, (format & FE_WITH_VERSUS) != 0, x, st};
    return fe_api_text(write_plan, p, &parts, format, err);
}

char *fe_plan_to_json(const fe_plan *p, fe_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        fe_error_set(err, FE_ENOMEM, "out of memory writing a plan");
        return NULL;
    }
    int rc = fe_plan_write(p, f, 1, NULL, err);
    fclose(f);
    if (rc != FE_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

int fe_plan_groups(const fe_plan *p) { return p->ngroups; }
int fe_plan_decisions(const fe_plan *p) { return p->ndecisions; }

int fe_plan_group_size(const fe_plan *p, int group)
{
    return group >= 0 && group < p->ngroups ? p->groups[group].n : 0;
}

const char *fe_plan_group_node(const fe_plan *p, int group, int k)
{
    if (group < 0 || group >= p->ngroups || k < 0 || k >= p->groups[group].n)
        return NULL;
    return fe_node_name(p->g, fe_graph_node(p->g, p->members[p->groups[group].off + k]));
}
