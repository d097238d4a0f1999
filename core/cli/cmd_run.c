/* cmd_run.c: `fuseeng run MODEL --policy P`: plan a model with a policy and
 * report the plan (summary, decision log, plan file, Graphviz). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "execute.h"
#include "ops.h"
#include "outfile.h"
#include "plan_json.h"
#include "run.h"
#include "sim.h"
#include "trace.h"

static const char usage[] =
    "usage: fuseeng run MODEL --policy P [--policy P2 ... --combine HOW] [options]\n"
    "       fuseeng run MODEL --plan FILE [options]\n"
    "\n"
    "Plan MODEL with policy P (a file, or a name in policies/) and print a summary:\n"
    "kernels before and after, the largest groups, decisions counted by reason, and\n"
    "the simulated machine's figures for the plan and the unfused baseline (time,\n"
    "L3 bytes, L2 peak, device-memory peak, spill bytes, speedup). With --execute,\n"
    "also run the plan and the unfused reference on this CPU on the same seeded\n"
    "inputs: max absolute and relative error per output, measured time per group\n"
    "and in total; exit status 1 when an output is outside tolerance.\n"
    "\n"
    "  --policy P          a policy; repeat it and give --combine to combine several\n"
    "  --plan FILE         a saved plan instead (fuseeng.plan/1): at the dims and on\n"
    "                      the machine it records unless --dim / --machine say\n"
    "                      otherwise; --ignore-model-name takes a plan made for\n"
    "                      another model\n"
    "  --combine HOW       all | any | chain | vote (see the README)\n"
    "  --param K=V         override a policy parameter, typed by its default\n"
    "  --dim NAME=V        override a model dim\n"
    "  --plan-out FILE     write the plan (fuseeng.plan/1 JSON)\n"
    "  --dot FILE          write the plan as Graphviz, one cluster per group\n"
    "  --machine M         simulated machine: a name in lua/machines (default gcu) or a file\n"
    "  --profile FILE      measured times for ctx.profile (fuseeng profile, or InfiniCore's)\n"
    "  --execute           run plan and reference on the CPU kernels (see above)\n"
    "  --seed N            random inputs and weights for --execute (default 1)\n"
    "  --budget S          seconds of timed runs per measurement for --execute (0.5)\n"
    "  --rtol R            judge every output with relative tolerance R (default by\n"
    "                      dtype: f32 1e-4, f16 1e-2, bf16 5e-2)\n"
    "  --bench-budget S    seconds ctx:bench may spend measuring in this run (60)\n"
    "  --verbose           add the simulator's figures for every group (with --json or\n"
    "                      --plan-out, under each group's \"sim\")\n"
    "  --trace FILE        write a Perfetto / Chrome trace of the plan and the unfused baseline\n"
    "  --json              print the plan JSON instead of the summary\n"
    "  --explain           print every decision: candidate, verdict, policy, reason\n"
    "  --stats             print Lua hook calls per second and memory\n"
    "  --max-instructions N  Lua instruction budget for the run (default 2e9)\n"
    "  --max-memory MIB      Lua memory cap (default 512)\n"
    "  --max-seconds S       wall-clock limit of each Lua run: loading the policy, planning\n"
    "                        (default 300; a script stuck in one C call, such as a\n"
    "                        backtracking string pattern, is ended a grace period later)\n"
    "\n"
    "Exit status 2 for a bad model, policy or option (the message names the file\n"
    "and line); a policy error stops the run unless the policy says\n"
    "fallback_on_error = \"unfused\"; 1 when --execute finds results that differ.\n";

typedef struct run_opts {
    const char *model;
    fe_cli_plan_opts plan;
    const char *plan_out, *dot, *trace;
    int json, explain, stats, verbose, execute;
    fe_cli_exec_opts exec;
} run_opts;

static int parse(int argc, char **argv, run_opts *o)
{
    const char *val = NULL;
    for (int i = 1; i < argc; i++) {
        int m = fe_cli_plan_opt("run", argc, argv, &i, &o->plan);
        if (m == 2)
            return 2;
        if (m)
            continue;
#define OPT(name) ((m = fe_cli_opt("run", argc, argv, &i, name, &val)) != 0)
        if (OPT("--plan-out")) {
            o->plan_out = val;
        } else if (OPT("--dot")) {
            o->dot = val;
        } else if (OPT("--trace")) {
            o->trace = val;
        } else if (OPT("--seed")) {
            if (m != 2 && fe_cli_seed("run", val, &o->exec.seed))
                m = 2;
        } else if (OPT("--rtol")) {
            char *end = NULL;
            o->exec.rtol = m == 2 ? 0 : strtod(val, &end);
            if (m != 2 && (end == val || *end || !(o->exec.rtol > 0) || o->exec.rtol >= 1))
                m = 2, fe_cli_usage("run", "--rtol needs a relative tolerance in (0, 1), got '%s'", val);
        } else if (OPT("--budget")) {
            if (m != 2 && fe_cli_seconds("run", "--budget", val, &o->exec.budget))
                m = 2;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = 1;
        } else if (strcmp(argv[i], "--explain") == 0) {
            o->explain = 1;
        } else if (strcmp(argv[i], "--stats") == 0) {
            o->stats = 1;
        } else if (strcmp(argv[i], "--verbose") == 0) {
            o->verbose = 1;
        } else if (strcmp(argv[i], "--execute") == 0) {
            o->execute = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fe_cli_usage("run", "unknown option '%s'", argv[i]);
        } else if (o->model) {
            return fe_cli_usage("run", "one MODEL at a time (got '%s' and '%s')", o->model, argv[i]);
        } else {
            o->model = argv[i];
        }
#undef OPT
        if (m == 2)
            return 2;
    }
    if (!o->model)
        return fe_cli_usage("run", "missing MODEL (a fuseeng.model/1 JSON file)");
    return fe_cli_plan_check("run", &o->plan, 1);
}

static const char *verdict_word(int v)
{
    switch (v) {
    case 1: return "fuse";
    case 0: return "no";
    case -1: return "none";
    case -2: return "rejected";
    default: return "note";
    }
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

static void explain(const fe_plan *p)
{
    printf("decisions (%d):\n", p->ndecisions);
    for (int32_t d = 0; d < p->ndecisions; d++) {
        const fe_decision *dc = &p->decisions[d];
        printf("  %-8s ", verdict_word(dc->verdict));
        if (dc->n > 0) {
            print_group_nodes(p, p->dnodes + dc->off, dc->n, stdout);
            printf("  ");
        }
        printf("%s\n", dc->reason >= 0 ? fe_strtab_str(p->strs, dc->reason) : "");
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

static int by_count(const void *a, const void *b)
{
    const reason_count *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text, y->text, n);
    return c ? c : (int)x->len - (int)y->len;
}

static int by_size_desc(const void *a, const void *b, void *ctx)
{
    const fe_plan *p = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (p->groups[x].n != p->groups[y].n)
        return p->groups[y].n - p->groups[x].n;
    return (x > y) - (x < y);
}

static void summary(const fe_plan *p, const run_opts *o, const fe_run_stats *st)
{
    const fe_graph *g = p->g;
    fe_plan_counts c;
    fe_plan_summary_counts(p, &c);
    printf("model      %s (%d nodes, %s)\n", g->name[0] ? g->name : "(unnamed)", g->nnodes, o->model);
    printf("policy     %s\n", p->policy >= 0 ? fe_strtab_str(p->strs, p->policy) : "?");
    printf("kernels    %d -> %d (%d fused group%s holding %d nodes; largest %d node%s",
           g->nnodes, c.kernels, c.fused_groups, c.fused_groups == 1 ? "" : "s", c.fused_nodes,
           c.largest, c.largest == 1 ? "" : "s");
    if (c.tiled_groups)
        printf("; %d tiled", c.tiled_groups);
    printf(")\n");

    /* The five largest fused groups. */
    int32_t *ids = malloc((size_t)(p->ngroups > 0 ? p->ngroups : 1) * sizeof *ids);
    if (ids) {
        for (int32_t i = 0; i < p->ngroups; i++)
            ids[i] = i;
        qsort_r(ids, (size_t)p->ngroups, sizeof *ids, by_size_desc, (void *)p);
        for (int32_t i = 0; i < p->ngroups && i < 5 && p->groups[ids[i]].n > 1; i++) {
            const fe_group *gr = &p->groups[ids[i]];
            char key[64];
            fe_sim_group_label(g, fe_group_nodes(p, gr), gr->n, key, sizeof key);
            printf("%s %s (%d): ", i ? "          " : "largest   ", key, gr->n);
            print_group_nodes(p, fe_group_nodes(p, gr), gr->n, stdout);
            if (gr->split > 1)
                printf(" split %d", gr->split);
            printf("\n");
        }
        free(ids);
    }
    printf("decisions  %d fuse, %d do not fuse, %d no opinion, %d rejected by the engine\n", c.yes,
           c.no, c.none, c.rejected);
    if (st && st->fault[0])
        printf("fallback   %s; the policy's fusions were dropped (fallback_on_error = unfused)\n",
               st->fault);

    /* Reasons by count. */
    reason_count *rc = calloc((size_t)(p->ndecisions > 0 ? p->ndecisions : 1), sizeof *rc);
    int nr = 0;
    for (int32_t d = 0; rc && d < p->ndecisions; d++) {
        const char *s = p->decisions[d].reason >= 0 ? fe_strtab_str(p->strs, p->decisions[d].reason) : "";
        size_t len = reason_key(s);
        if (len == 0)
            continue;
        int found = 0;
        for (int i = 0; i < nr && !found; i++)
            if (rc[i].len == len && memcmp(rc[i].text, s, len) == 0)
                found = ++rc[i].count;
        if (!found)
            rc[nr++] = (reason_count){s, len, 1};
    }
    if (rc) {
        qsort(rc, (size_t)nr, sizeof *rc, by_count);
        for (int i = 0; i < nr && i < 8; i++)
            printf("%s %5d  %.*s%s\n", i ? "          " : "reasons   ", rc[i].count,
                   (int)rc[i].len, rc[i].text, rc[i].text[rc[i].len] ? " ..." : "");
        if (nr > 8)
            printf("           ... %d more kinds of reason (--explain lists all)\n", nr - 8);
        free(rc);
    }
    if (o->stats && st) {
        char b[32];
        printf("stats      %.3f s, %lld Lua hook calls (%.0f per second), %lld instructions, Lua "
               "memory %s, %d round%s\n", st->seconds, (long long)st->hook_calls,
               st->seconds > 0 ? (double)st->hook_calls / st->seconds : 0.0,
               (long long)st->instructions, fe_fmt_bytes((double)st->lua_bytes, b, sizeof b),
               st->rounds, st->rounds == 1 ? "" : "s");
    }
}

static int write_dot(const fe_plan *p, const char *path, fe_error *err)
{
    const fe_graph *g = p->g;
    fe_outfile out;
    if (fe_outfile_open(&out, path, "the dot file", err) != FE_OK)
        return FE_EINPUT;
    FILE *f = out.f;
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
    return fe_outfile_commit(&out, err);
}

/* What the plan file adds to the plan (fe_plan_extra's callbacks): the
 * simulator's figures (per group too with --verbose), the comparison with
 * the unfused baseline (JSON output) and the execution. */
typedef struct summary_parts {
    const fe_sim_report *plan, *base;   /* base NULL: leave the comparison out */
    const fe_plan *p;
    const fe_cli_exec *exec;            /* NULL without --execute */
    int groups;                         /* each group's simulated figures */
} summary_parts;

static void write_group(fe_jw *w, int32_t gi, void *ctx)
{
    fe_sim_report_group_json(((const summary_parts *)ctx)->plan, gi, w);
}

static void write_summary(fe_jw *w, void *ctx)
{
    const summary_parts *s = ctx;
    fe_sim_report_plan_summary(s->plan, w);
    if (s->base) {
        fe_jw_key(w, "versus_unfused");
        fe_sim_report_compare_json(s->plan, s->base, w);
    }
    if (s->exec) {
        fe_jw_key(w, "executed");
        fe_cli_exec_json(s->p, s->exec, w);
    }
}

static int write_plan_file(const fe_plan *plan, const char *path, summary_parts *parts, fe_error *err)
{
    fe_outfile out;
    if (fe_outfile_open(&out, path, "the plan", err) != FE_OK)
        return FE_EINPUT;
    fe_plan_extra extra = {parts->groups ? write_group : NULL, write_summary, parts};
    if (fe_plan_write(plan, out.f, 1, &extra, err) != FE_OK)
        return fe_outfile_fail(&out, err);
    return fe_outfile_commit(&out, err);
}

static int run(int argc, char **argv)
{
    run_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    fe_error err = {0};
    fe_cli_planned pl;
    fe_plan *base = NULL;
    fe_sim_report rep, base_rep;
    fe_cli_exec ex;
    int have_rep = 0, have_base = 0, have_exec = 0;

    if (fe_cli_plan_make(o.model, &o.plan, &pl, &err) != FE_OK)
        return fe_cli_fail(&err);
    fe_plan *plan = pl.plan;
    fe_engine *e = pl.e;
    /* The plan and the unfused baseline on the engine's machine. */
    if (!(base = fe_plan_unfused(pl.g, &err)) || fe_sim_plan(plan, &e->machine, &rep, &err) != FE_OK)
        goto fail;
    have_rep = 1;
    if (fe_sim_plan(base, &e->machine, &base_rep, &err) != FE_OK)
        goto fail;
    have_base = 1;
    /* Execute before printing anything: a model that cannot run leaves no
     * half report behind. */
    if (o.execute) {
        if (fe_cli_execute(plan, &o.exec, &ex, &err) != FE_OK)
            goto fail;
        have_exec = 1;
    }
    summary_parts file_parts = {&rep, NULL, plan, have_exec ? &ex : NULL, o.verbose};
    if (o.trace) {
        const fe_sim_report *reps[2] = {&rep, &base_rep};
        const char *labels[2] = {fe_strtab_str(plan->strs, plan->policy), "unfused"};
        if (fe_trace_write_file(o.trace, reps, labels, 2, &err) != FE_OK)
            goto fail;
    }
    if (o.plan_out && write_plan_file(plan, o.plan_out, &file_parts, &err) != FE_OK)
        goto fail;
    if (o.dot && write_dot(plan, o.dot, &err) != FE_OK)
        goto fail;
    if (o.json) {
        summary_parts all = {&rep, &base_rep, plan, have_exec ? &ex : NULL, o.verbose};
        fe_plan_extra jextra = {o.verbose ? write_group : NULL, write_summary, &all};
        if (fe_plan_write(plan, stdout, 1, &jextra, &err) != FE_OK)
            goto fail;
    } else {
        summary(plan, &o, &pl.stats);
        printf("\n");
        fe_sim_report_compare_table(&rep, &base_rep, stdout);
        if (o.verbose) {
            printf("\ngroups\n");
            fe_sim_report_groups_table(&rep, stdout);
        }
        if (have_exec) {
            printf("\n");
            fe_cli_exec_text(plan, &ex, stdout);
        }
        if (o.explain)
            explain(plan);
    }
    if (have_exec && fe_cli_exec_mismatch(plan, &ex, &err) != FE_OK) {
        fflush(stdout);
        goto fail;
    }
    goto out;
fail:
    rc = fe_cli_fail(&err);
out:
    if (have_exec)
        fe_cli_exec_free(&ex);
    if (have_rep)
        fe_sim_report_free(&rep);
    if (have_base)
        fe_sim_report_free(&base_rep);
    fe_plan_free(base);
    fe_cli_planned_free(&pl);
    return rc;
}

const fe_cmd fe_cmd_run = {"run", "plan a model with a fusion policy", usage, run};
